"""Synthetic Claude Code transcripts, for benchmarks and demonstrations at scale.

Each session is a realistic mix of answers (searches and reads in parallel, edits, git
and test commands, a destructive command, a web fetch, Claude Code's own TodoWrite and two
sub-agents (Task) in parallel, judged from its table of them), written as Claude Code
writes them: one assistant entry per tool_use block sharing the answer's ``message.id``,
one user entry per tool_result after the answer's last tool_use (with the
``toolUseResult`` durations Glob and Task report of themselves), ``parentUuid`` links and
timestamps. Durations are drawn from a seeded random generator, so a seed always gives
the same files.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["write_synthetic_transcripts", "ANSWERS"]

# (tool, input) lists: one list per answer; "{cwd}" is the session's project directory.
ANSWERS: tuple[tuple[tuple[str, dict[str, Any]], ...], ...] = (
    (("Grep", {"pattern": "def main", "path": "{cwd}/src"}), ("Read", {"file_path": "{cwd}/src/app.py"}), ("Read", {"file_path": "{cwd}/README.md"})),
    (("Edit", {"file_path": "{cwd}/src/app.py", "old_string": "x = 1", "new_string": "x = 2"}),),
    (("Bash", {"command": "git status"}), ("Bash", {"command": "git diff --stat"})),
    (("Bash", {"command": "python -m pytest -q"}),),
    (("Glob", {"pattern": "**/*.py"}), ("Read", {"file_path": "{cwd}/src/util.py"})),
    (("Write", {"file_path": "{cwd}/notes.md", "content": "todo\n"}),),
    (("Bash", {"command": "rm -rf build"}),),
    (("WebFetch", {"url": "https://docs.python.org/3/", "prompt": "summary"}),),
    (("TodoWrite", {"todos": []}),),
    (("Bash", {"command": "ls -la"}), ("Read", {"file_path": "{cwd}/pyproject.toml"})),
    (("Task", {"description": "find the tests", "prompt": "where are the tests?", "subagent_type": "Explore"}),
     ("Task", {"description": "read the docs", "prompt": "summarize docs/", "subagent_type": "Explore"})),
)
# What Claude Code writes as toolUseResult for a tool that measures itself (the replay believes it).
_SELF_TIMED = {"Glob": "durationMs", "Task": "totalDurationMs"}


def _ts(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_synthetic_transcripts(folder: str | os.PathLike[str], sessions: int, *, answers: int = 6, seed: int = 0) -> list[Path]:
    """Write ``sessions`` transcript files into ``folder`` (``answers`` tool answers each)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for n in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        cwd = f"/home/dev/project{n % 50}"
        clock = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n)
        lines: list[dict[str, Any]] = []
        parent: str | None = None

        def entry(kind: str, message: dict[str, Any], **extra: Any) -> None:
            nonlocal parent
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
                          "version": "2.0.76", "type": kind, "message": message, "uuid": uid, "timestamp": _ts(clock), **extra})
            parent = uid

        entry("user", {"role": "user", "content": "please fix the failing test"})
        for a in range(answers):
            clock += timedelta(seconds=rng.uniform(1, 4))
            message_id = f"msg_{n:05d}_{a:02d}"
            calls = ANSWERS[rng.randrange(len(ANSWERS))]
            ids = []
            for b, (name, template) in enumerate(calls):
                tool_use_id = f"toolu_{n:05d}_{a:02d}_{b}"
                ids.append((tool_use_id, name))
                data = json.loads(json.dumps(template).replace("{cwd}", cwd))
                entry("assistant", {"id": message_id, "type": "message", "role": "assistant", "model": "synthetic",
                                    "content": [{"type": "tool_use", "id": tool_use_id, "name": name, "input": data}],
                                    "stop_reason": None, "usage": {}})
                clock += timedelta(milliseconds=rng.randint(20, 120))
            for tool_use_id, name in ids:
                took = rng.uniform(0.05, 2.5)
                clock += timedelta(seconds=took)
                meta: Any = {_SELF_TIMED[name]: round(took * 1000)} if name in _SELF_TIMED else "ok"
                entry("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok"}]},
                      toolUseResult=meta)
        path = out / f"{session_id}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths
