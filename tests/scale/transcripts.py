"""Transcripts written by a test: answers of tool calls, in the shape Claude Code writes.

Each answer is one assistant message (one entry per tool_use block, sharing the message
id); each call gets a tool_result one second after the answer's last tool_use, in order.
Inputs are written as given, so a test can record what a model really sent (a string
where an object belongs, say).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def _ts(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_transcript(path: Path, answers: Sequence[Sequence[tuple[str, Any]]], cwd: str = "/home/u/proj") -> Path:
    """``answers``: per answer, its calls as (tool name, input); ids are ``c1``, ``c2``... in order."""
    lines: list[dict[str, Any]] = []
    clock = START
    n = 0

    def entry(kind: str, message: dict[str, Any]) -> None:
        lines.append({"type": kind, "isSidechain": False, "cwd": cwd, "sessionId": path.stem, "version": "2.1.88",
                      "timestamp": _ts(clock), "message": message})

    entry("user", {"role": "user", "content": "go"})
    for a, calls in enumerate(answers):
        ids = []
        for name, data in calls:
            n += 1
            ids.append(f"c{n}")
            clock += timedelta(milliseconds=100)
            entry("assistant", {"id": f"msg_{a}", "role": "assistant",
                                "content": [{"type": "tool_use", "id": f"c{n}", "name": name, "input": data}]})
        for tool_use_id in ids:
            clock += timedelta(seconds=1)
            entry("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok"}]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
