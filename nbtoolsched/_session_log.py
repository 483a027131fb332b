"""A session's transcript file, written and read the way Claude Code keeps it (JSONL).

One JSON object per line. Conversation entries carry ``type`` (``user`` or
``assistant``), ``uuid``, ``parentUuid`` (the entry before it, so a retried answer
starts a new branch), ``timestamp``, ``sessionId``, ``cwd``, ``version``,
``isSidechain`` and ``message`` (a role and Anthropic content blocks). A tool result is
a ``user`` entry holding one ``tool_result`` block plus a ``toolUseResult`` field.
Other entry types (``summary``, ``system``, ``file-history-snapshot``, ``progress``,
``attachment``...) are kept by the reader as entries and never become messages.

A ``system`` entry (``subtype``, ``content``, ``level``) records a notice such as a model
switch; it sits in the ``parentUuid`` chain like any entry and is never a message.

``TranscriptWriter`` appends one line per entry and flushes it at once, so a hook that
reads the file while the agent runs (``jq`` over ``transcript_path``) sees the
conversation so far, including the assistant entry with the tool_use being checked.
``read_transcript`` turns a file (Claude Code's own included) back into API messages,
and lists every line it could not use, by line number, instead of failing.

This module only knows message shapes, so every layer may use it: the agent loop
writes the session's file, and the hook runner writes a minimal one for a bare
scheduler run.
"""

from __future__ import annotations

import json
import os
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TypedDict, Union, Unpack

from ._messages import Block, BlockLike, MessageLike, ToolResultBlock, block_to_dict

EntryContent = Union[str, BlockLike, Sequence[BlockLike]]  # text, one block, or blocks


class AssistantFields(TypedDict, total=False):
    """What ``append_assistant`` takes besides the content (``append_message`` passes them on)."""

    message_id: str | None
    model: str | None
    stop_reason: str | None
    usage: Mapping[str, Any] | None

__all__ = [
    "Transcript",
    "TranscriptEntry",
    "TranscriptProblem",
    "TranscriptWriter",
    "messages_from_entries",
    "read_transcript",
    "tool_use_result_of",
    "transcript_file_for",
]

_CONVERSATION = ("user", "assistant")
_TAIL_BYTES = 1 << 20  # how much of an existing file is read to find where to continue


def _version() -> str:
    try:
        return metadata.version("nbtoolsched")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def transcript_file_for(session_dir: str | os.PathLike[str], session_id: str) -> Path:
    """Where a session's transcript lives: ``<session_dir>/<session_id>.jsonl``."""
    return Path(session_dir) / f"{session_id}.jsonl"


def _blocks(content: EntryContent | None) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, (Block, dict)):
        return [block_to_dict(content)]
    return [block_to_dict(b) for b in content or []]


def _result_text(block: Mapping[str, Any]) -> Any:
    content = block.get("content", "")
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "".join(texts) if len(texts) == len(content) else content
    return content


def tool_use_result_of(block: Mapping[str, Any]) -> Any:
    """What Claude Code stores as ``toolUseResult`` when only the result block is known:
    ``"Error: <text>"`` for an error, else the result's content."""
    content = _result_text(block)
    if block.get("is_error"):
        return f"Error: {content if isinstance(content, str) else json.dumps(content)}"
    return content


class TranscriptWriter:
    """Appends entries to one session's JSONL file, each flushed as it is written.

    An existing file is continued: the first new entry's ``parentUuid`` is the file's
    last ``uuid``, and a last line cut short by a crash is closed first so the next entry
    starts on a line of its own.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        session_id: str,
        cwd: str | os.PathLike[str],
        *,
        version: str | None = None,
        is_sidechain: bool = False,
    ) -> None:
        self.path = Path(path)
        self.session_id = session_id
        self.cwd = str(cwd)
        self.version = version or _version()
        self.is_sidechain = is_sidechain
        self.last_uuid: str | None = None
        self._needs_newline = False
        if self.path.exists():
            self.last_uuid, self._needs_newline = _tail_state(self.path)

    # -- conversation ---------------------------------------------------------------------
    def append_user(
        self, content: EntryContent, *, tool_use_result: object = None, is_meta: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        """A user entry (a string stays a string, as Claude Code writes a typed prompt);
        ``tool_use_result`` (plain JSON data, each tool its own) is stored as
        ``toolUseResult`` when given."""
        body = content if isinstance(content, str) else _blocks(content)
        entry: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": body}}
        if tool_use_result is not None:
            entry["toolUseResult"] = tool_use_result
        if is_meta:
            entry["isMeta"] = True
        return self.append_entry({**entry, **(extra or {})})

    def append_assistant(
        self,
        content: EntryContent,
        *,
        message_id: str | None = None,
        model: str | None = None,
        stop_reason: str | None = None,
        usage: Mapping[str, Any] | None = None,
    ) -> str:
        """An assistant entry. Claude Code writes one entry per content block of an answer,
        all with the answer's ``message.id``; pass the same ``message_id`` to do the same."""
        message = {
            "id": message_id or f"msg_{uuidlib.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": model or "unknown",
            "content": _blocks(content),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": dict(usage or {}),
        }
        return self.append_entry({"type": "assistant", "message": message})

    def append_tool_results(
        self, results: Iterable[ToolResultBlock | dict[str, Any]], tool_use_results: Mapping[str, Any] | None = None
    ) -> list[str]:
        """One user entry per tool_result, as Claude Code writes them.

        ``tool_use_results`` maps a tool_use id to its structured ``toolUseResult``;
        without one, the result's own text stands in (``"Error: ..."`` for an error)."""
        extra = tool_use_results or {}
        ids = []
        for result in results:
            block = block_to_dict(result)
            value = extra.get(block.get("tool_use_id"), None)
            ids.append(self.append_user([block], tool_use_result=value if value is not None else tool_use_result_of(block)))
        return ids

    def append_system(self, content: str, *, level: str = "info", subtype: str = "informational") -> str:
        """A notice for the person reading the session (a model switch, say), as Claude Code
        writes its ``system`` entries; readers never turn it into a message."""
        return self.append_entry({"type": "system", "subtype": subtype, "content": content, "level": level,
                                  "isMeta": False})

    def append_message(self, message: MessageLike, **assistant: Unpack[AssistantFields]) -> list[str]:
        """An API message as entries: tool results one per entry, other blocks grouped."""
        to_dict = getattr(message, "to_dict", None)  # our Message, or an SDK's message model
        data = to_dict() if callable(to_dict) else dict(message)
        if data.get("role") == "user" and isinstance(data.get("content"), str):
            return [self.append_user(data["content"])] if data["content"] else []
        blocks = _blocks(data.get("content"))
        if data.get("role") == "assistant":
            return [self.append_assistant(blocks, **assistant)] if blocks else []
        ids: list[str] = []
        pending: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if pending:
                    ids.append(self.append_user(pending))
                    pending = []
                ids += self.append_tool_results([block])
            else:
                pending.append(block)
        if pending:
            ids.append(self.append_user(pending))
        return ids

    def append_messages(self, messages: Iterable[MessageLike]) -> list[str]:
        return [uid for message in messages for uid in self.append_message(message)]

    # -- any entry -------------------------------------------------------------------------
    def append_entry(self, entry: Mapping[str, Any]) -> str:
        """Write one entry, filling the fields every conversation entry has; returns its uuid."""
        full = {
            "parentUuid": self.last_uuid,
            "isSidechain": self.is_sidechain,
            "userType": "external",
            "entrypoint": "nbtoolsched",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            **entry,
        }
        full.setdefault("uuid", str(uuidlib.uuid4()))
        full.setdefault("timestamp", _now())
        self._write(full)
        self.last_uuid = full["uuid"]
        return str(full["uuid"])

    def rewind(self, parent_uuid: str | None) -> None:
        """Make the next entry a child of ``parent_uuid``: what came after it is an abandoned
        branch (a streamed answer that was retried), which readers skip."""
        self.last_uuid = parent_uuid

    def _write(self, entry: Mapping[str, Any]) -> None:
        try:
            line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a file name decoded with surrogateescape...): escape it
            line = (json.dumps(entry, ensure_ascii=True, default=str) + "\n").encode("ascii")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as fh:
            if self._needs_newline:
                fh.write(b"\n")
                self._needs_newline = False
            fh.write(line)
            fh.flush()

    def __repr__(self) -> str:
        return f"TranscriptWriter({str(self.path)!r}, session_id={self.session_id!r})"


def _tail_state(path: Path) -> tuple[str | None, bool]:
    """The last uuid in the file and whether its last line lacks a newline."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
    needs_newline = bool(tail) and not tail.endswith(b"\n")
    for raw in reversed(tail.splitlines()):
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("uuid"), str):
            return data["uuid"], needs_newline
    return None, needs_newline


# -- reading -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TranscriptProblem:
    """A line that could not be used, and why."""

    line: int  # 1-based
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    """One line of the file, as read (``data`` holds every field)."""

    line: int
    type: str
    data: dict[str, Any]

    @property
    def uuid(self) -> str | None:
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent_uuid(self) -> str | None:
        value = self.data.get("parentUuid")
        return value if isinstance(value, str) else None

    @property
    def message(self) -> dict[str, Any] | None:
        value = self.data.get("message")
        return value if isinstance(value, dict) else None

    @property
    def is_sidechain(self) -> bool:
        return bool(self.data.get("isSidechain"))

    @property
    def timestamp(self) -> str | None:
        return self.data.get("timestamp")

    @property
    def session_id(self) -> str | None:
        return self.data.get("sessionId")


@dataclass
class Transcript:
    """A file read back: its API messages, every entry, and what could not be used."""

    path: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    entries: list[TranscriptEntry] = field(default_factory=list)
    problems: list[TranscriptProblem] = field(default_factory=list)

    @property
    def session_id(self) -> str | None:
        return next((e.session_id for e in self.entries if e.session_id), None)

    @property
    def cwd(self) -> str | None:
        return next((e.data["cwd"] for e in self.entries if isinstance(e.data.get("cwd"), str)), None)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """Every tool_use block of the messages, in order."""
        return [b for m in self.messages if m["role"] == "assistant" for b in _blocks(m["content"])
                if isinstance(b, dict) and b.get("type") == "tool_use"]


def read_transcript(path: str | os.PathLike[str], *, include_sidechains: bool = False) -> Transcript:
    """Read a JSONL transcript; bad lines are skipped and reported, never raised.

    Raises ``OSError`` only when the file itself cannot be read."""
    out = Transcript(Path(path))
    data = out.path.read_bytes()
    lines = data.split(b"\n")
    ends_cut = bool(data) and not data.endswith(b"\n")
    last = len(lines) if ends_cut else len(lines) - 1
    for number, raw in enumerate(lines[:last], start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            out.problems.append(TranscriptProblem(number, f"not UTF-8 text ({err.reason}); skipped"))
            continue
        except json.JSONDecodeError as err:
            if ends_cut and number == last:
                why = "the file ends in the middle of this entry (a write that was cut short); skipped"
            else:
                why = f"not valid JSON ({err.msg} at column {err.colno}); skipped"
            out.problems.append(TranscriptProblem(number, why))
            continue
        if not isinstance(item, dict):
            out.problems.append(TranscriptProblem(number, f"a JSON {type(item).__name__}, not an object; skipped"))
            continue
        kind = item.get("type")
        out.entries.append(TranscriptEntry(number, kind if isinstance(kind, str) else "", item))
    messages, problems = messages_from_entries(out.entries, include_sidechains=include_sidechains)
    out.messages = messages
    out.problems.extend(problems)
    out.problems.sort(key=lambda p: p.line)
    return out


def messages_from_entries(
    entries: Iterable[TranscriptEntry], *, include_sidechains: bool = False
) -> tuple[list[dict[str, Any]], list[TranscriptProblem]]:
    """The conversation the entries hold, as API messages (roles alternate, blocks merged).

    With ``parentUuid`` links, the conversation is the chain ending at the last
    conversation entry, so abandoned branches (a retried answer, a rewind) and anything
    before a compaction boundary are left out, as Claude Code leaves them out. Without
    links (a hand-written file) it is the conversation entries in file order."""
    problems: list[TranscriptProblem] = []
    usable: list[TranscriptEntry] = []
    for entry in entries:
        if entry.type not in _CONVERSATION or (entry.is_sidechain and not include_sidechains):
            continue
        message = entry.message
        if message is None or message.get("role") != entry.type or not isinstance(message.get("content"), (str, list)):
            problems.append(TranscriptProblem(entry.line, f"a {entry.type} entry without a usable message; skipped"))
            continue
        usable.append(entry)
    if not usable:
        return [], problems
    chain = _chain(list(entries), usable, problems)
    merged: list[dict[str, Any]] = []
    for entry in chain:
        message = entry.message
        assert message is not None
        content = message["content"]
        if content in ("", []):
            continue
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"] = _blocks(merged[-1]["content"]) + _blocks(content)
        else:  # a lone string prompt stays a string, as it was written
            merged.append({"role": message["role"], "content": content if isinstance(content, str) else _blocks(content)})
    return merged, problems


def _chain(entries: list[TranscriptEntry], usable: list[TranscriptEntry], problems: list[TranscriptProblem]) -> list[TranscriptEntry]:
    if not any(e.uuid for e in usable):
        return usable
    by_uuid: dict[str, TranscriptEntry] = {}
    for entry in entries:
        if entry.uuid is None:
            continue
        if entry.uuid in by_uuid:
            problems.append(TranscriptProblem(entry.line, f"uuid {entry.uuid} already used on line {by_uuid[entry.uuid].line}; ignored"))
            continue
        by_uuid[entry.uuid] = entry
    keep = {id(e) for e in usable}
    chain: list[TranscriptEntry] = []
    seen: set[str] = set()
    current: TranscriptEntry | None = usable[-1]
    while current is not None:
        if id(current) in keep:
            chain.append(current)
        parent = current.parent_uuid
        if parent is None:
            break
        if parent in seen:
            problems.append(TranscriptProblem(current.line, "parentUuid links form a loop; the history before it is left out"))
            break
        seen.add(parent)
        nxt = by_uuid.get(parent)
        if nxt is None:
            problems.append(TranscriptProblem(current.line, f"parentUuid {parent} is not in the file; the history before it is left out"))
        current = nxt
    chain.reverse()
    return chain
