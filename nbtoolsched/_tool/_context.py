"""The context every tool call gets: where it runs, how it stops, how it reports."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, TypedDict, Unpack

from .._messages import MessageLike
from ._abort import AbortSignal
from ._filestate import FileStateCache

if TYPE_CHECKING:  # the layers below this one, named in annotations only
    from .._registry import ToolRegistry
    from ..permissions._base import PermissionGate
    from ..sandbox._overlay import KernelOverlay

__all__ = ["ToolContext", "ContextModifier", "ProgressSink", "FileAccess"]

ProgressSink = Callable[[str, Any], None]  # (tool_use_id, data): data is whatever the tool reports


def _drop_progress(tool_use_id: str, data: Any) -> None:
    return None


class FileAccess(Protocol):
    """Where the file tools' text goes when a host holds the user's files (``ToolContext.files``).

    An editor hosting the agent (an Agent Client Protocol client) has buffers that are not
    saved yet: Read should show them, and Write and Edit should change them. The tools
    still do everything else themselves, on the local disk, exactly as without a host:
    path checks, permissions, read-before-write, line numbers, line endings. Only the text
    passes through here, and a host may decline any operation (None, False) to leave it
    to the disk. ``changed`` hears of every change a file tool made, for a host to show.
    """

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str | None:
        """The text of ``path`` (``limit`` lines from 1-based ``line`` when given), or None
        to have the tool read the disk."""
        ...

    async def write_text(self, path: str, text: str) -> bool:
        """Replace the whole text of ``path``; False to have the tool write the disk."""
        ...

    def changed(self, tool_use_id: str, path: str, before: str | None, after: str) -> None:
        """The call ``tool_use_id`` changed ``path`` from ``before`` (None: it created the
        file) to ``after``."""
        ...


class _Fields(TypedDict, total=False):
    """What ``ToolContext.replace`` may change, with the types the context keeps."""

    cwd: str
    abort: AbortSignal
    tool_use_id: str
    file_state: FileStateCache
    permission_context: PermissionGate | None
    session_dir: Path
    session_id: str
    transcript_path: Path | None
    registry: ToolRegistry | None
    messages: Sequence[MessageLike]
    options: dict[str, Any]
    overlay: KernelOverlay | None
    files: FileAccess | None


class ToolContext:
    """Shared session state plus the per-call parts (id, abort signal, progress sink).

    One is built per run; ``for_call`` makes the per-call copy once, cheaply, so a
    batch of 10,000 calls copies it 10,000 times and no more.
    """

    __slots__ = (
        "cwd",
        "abort",
        "tool_use_id",
        "file_state",
        "permission_context",
        "session_dir",
        "session_id",
        "transcript_path",
        "registry",
        "messages",
        "options",
        "overlay",
        "files",
        "_sink",
    )

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        abort: AbortSignal | None = None,
        file_state: FileStateCache | None = None,
        permission_context: PermissionGate | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        transcript_path: str | os.PathLike[str] | None = None,
        registry: ToolRegistry | None = None,
        messages: Sequence[MessageLike] | None = None,
        options: dict[str, Any] | None = None,
        progress: ProgressSink | None = None,
        tool_use_id: str = "",
        overlay: KernelOverlay | None = None,
        files: FileAccess | None = None,
    ) -> None:
        self.cwd = str(Path(cwd or os.getcwd()).resolve())
        self.abort = abort or AbortSignal()
        self.tool_use_id = tool_use_id
        self.file_state = file_state if file_state is not None else FileStateCache()
        self.permission_context = permission_context
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.session_dir = Path(session_dir) if session_dir else Path(tempfile.gettempdir()) / "nbtoolsched-sessions" / self.session_id
        # The session's JSONL transcript (what hooks get as ``transcript_path``); None until
        # an agent loop writes one. Hooks of a bare scheduler run get a minimal one.
        self.transcript_path = Path(transcript_path) if transcript_path else None
        self.registry = registry
        # The conversation so far (the agent's own list: read, never changed, here).
        self.messages: Sequence[MessageLike] = messages if messages is not None else []
        self.options = options if options is not None else {}
        # A speculation's kernel overlay (sandbox.KernelOverlay): shell tools run inside it.
        self.overlay = overlay
        # The host's view of the files (FileAccess): None means the local disk alone.
        self.files = files
        self._sink = progress or _drop_progress

    def progress(self, data: Any) -> None:
        """Report progress now; it reaches the consumer before the call finishes (as the
        ``data`` of a ``ProgressEvent``, in whatever shape the tool chose)."""
        self._sink(self.tool_use_id, data)

    def for_call(self, tool_use_id: str, abort: AbortSignal, sink: ProgressSink | None = None) -> "ToolContext":
        clone = object.__new__(ToolContext)
        clone.cwd = self.cwd
        clone.abort = abort
        clone.tool_use_id = tool_use_id
        clone.file_state = self.file_state
        clone.permission_context = self.permission_context
        clone.session_dir = self.session_dir
        clone.session_id = self.session_id
        clone.transcript_path = self.transcript_path
        clone.registry = self.registry
        clone.messages = self.messages
        clone.options = self.options
        clone.overlay = self.overlay
        clone.files = self.files
        clone._sink = sink if sink is not None else self._sink
        return clone

    def replace(self, **changes: Unpack[_Fields]) -> "ToolContext":
        """A copy with some fields changed: what a context modifier returns."""
        clone = self.for_call(self.tool_use_id, self.abort)
        for name, value in changes.items():
            if name not in ToolContext.__slots__ or name.startswith("_"):
                raise AttributeError(f"ToolContext has no field {name!r}")
            setattr(clone, name, value)
        return clone

    def resolve_path(self, path: str) -> str:
        """A tool's path argument made absolute against cwd (no symlink resolution)."""
        return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))

    def __repr__(self) -> str:
        return f"ToolContext(cwd={self.cwd!r}, tool_use_id={self.tool_use_id!r})"


ContextModifier = Callable[[ToolContext], ToolContext]
