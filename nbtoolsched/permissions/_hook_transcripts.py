"""The transcript a bare scheduler run hands to hooks as ``transcript_path``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .._session_log import TranscriptWriter, read_transcript, transcript_file_for
from ._base import HookEvent

__all__ = ["RunTranscripts"]


class RunTranscripts:
    """Hooks always get a real ``transcript_path``. An agent loop writes the session's file
    (``ctx.transcript_path``); for a bare scheduler run, a file under the session folder
    is written here, only when a hook fires, holding what is known: the conversation in
    ``ctx.messages`` and an assistant entry for each tool_use that reached a hook."""

    def __init__(self) -> None:
        self._logs: dict[Path, tuple[TranscriptWriter, set[str]]] = {}

    def path_for(self, event: HookEvent) -> str | None:
        ctx = event.ctx
        if ctx.transcript_path is not None:
            return str(ctx.transcript_path)
        path = transcript_file_for(ctx.session_dir, ctx.session_id)
        try:
            writer, known = self._logs.get(path) or self._open(path, event)
            if event.tool_use_id and event.tool_use_id not in known:
                writer.append_assistant([{"type": "tool_use", "id": event.tool_use_id, "name": event.tool_name,
                                          "input": event.tool_input}])
                known.add(event.tool_use_id)
        except (OSError, TypeError, ValueError):
            return str(path) if path.exists() else None
        return str(path)

    def _open(self, path: Path, event: HookEvent) -> tuple[TranscriptWriter, set[str]]:
        writer = TranscriptWriter(path, event.ctx.session_id, event.ctx.cwd)
        if path.exists() and path.stat().st_size:
            known = {b["id"] for b in read_transcript(path).tool_uses if isinstance(b.get("id"), str)}
        else:
            writer.append_messages(event.ctx.messages)
            known = set(_tool_use_ids(event.ctx.messages))
        self._logs[path] = (writer, known)
        return writer, known


def _tool_use_ids(messages: Iterable[Any]) -> Iterable[str]:
    for message in messages:
        data = message.to_dict() if hasattr(message, "to_dict") else message
        content = data.get("content") if isinstance(data, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                yield block["id"]
