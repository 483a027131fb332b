"""The client's files: ``fs/read_text_file`` and ``fs/write_text_file`` as the file tools' ``FileAccess``.

An editor holds buffers that are not saved yet. With the client's ``fs`` capability,
Read sees what the editor shows and Write and Edit change the editor's text (the editor
saves it, or shows it unsaved, as it likes). Everything else stays the tools' own, on
the local disk, before any text passes through here: path checks, the permission rules
and the approval, read-before-write, line numbers, line endings. An operation the client
did not offer is declined, and the tools use the disk for it.

The same object hears of every change a file tool made (``changed``), so the client can
be shown the change as a diff when the call ends, whoever did the writing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp.interfaces import Client

__all__ = ["ClientFiles", "CallChange"]


@dataclass(frozen=True, slots=True)
class CallChange:
    """What one call did to one file."""

    path: str
    before: str | None  # None: the call created the file
    after: str


class ClientFiles:
    """``FileAccess`` over one ACP session's client connection."""

    def __init__(self, client: Client, session_id: str, *, read: bool, write: bool) -> None:
        self.client = client
        self.session_id = session_id
        self.read = read
        self.write = write
        self._changes: dict[str, CallChange] = {}  # tool_use_id -> what the call changed last

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str | None:
        if not self.read:
            return None
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=path, line=line, limit=limit)
        except Exception as err:  # noqa: BLE001 - the tool's call fails with the client's words
            raise OSError(f"the editor could not read {path}: {_reason(err)}") from None
        return response.content

    async def write_text(self, path: str, text: str) -> bool:
        if not self.write:
            return False
        try:
            await self.client.write_text_file(session_id=self.session_id, path=path, content=text)
        except Exception as err:  # noqa: BLE001
            raise OSError(f"the editor could not write {path}: {_reason(err)}") from None
        return True

    def changed(self, tool_use_id: str, path: str, before: str | None, after: str) -> None:
        self._changes[tool_use_id] = CallChange(path, before, after)

    def take_change(self, tool_use_id: str) -> CallChange | None:
        """What the call changed (once: the record is dropped)."""
        return self._changes.pop(tool_use_id, None)

    def forget_changes(self) -> None:
        self._changes.clear()


def _reason(err: Exception) -> str:
    data = getattr(err, "data", None)
    details = data.get("details") if isinstance(data, dict) else None
    return f"{err} ({details})" if details else str(err) or type(err).__name__
