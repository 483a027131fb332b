"""The Quick start demo: a model's realistic batch, scheduled, watched, drawn.

``python -m nbtoolsched demo`` sends Grep + Read + Edit + Glob + Read to the scheduler,
prints each call's state changes as they happen, then a timeline that shows the two
parallel batches around the serial Edit.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import nbtoolsched as nts
from nbtoolsched import events
from nbtoolsched.scheduling._timeline import render_text_timeline

SAMPLE = {
    "app/main.py": "from app.config import load\n\ndef main():\n    cfg = load()\n    print('hello', cfg['name'])\n",
    "app/config.py": "def load():\n    return {'name': 'world', 'debug': False}\n",
    "README.md": "# sample\n\nA tiny project for the nbtoolsched demo.\n",
    "tests/test_main.py": "def test_main():\n    assert True\n",
}


def _walk(root: str) -> list[str]:
    found = []
    for folder, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(found)


@nts.tool(read_only=True)
async def Grep(pattern: str, ctx: nts.ToolContext) -> str:
    """Search file contents with a regular expression (demo version)."""
    hits = []
    for rel in _walk(ctx.cwd):
        ctx.progress(f"scanning {rel}")
        await asyncio.sleep(0.05)
        text = Path(ctx.cwd, rel).read_text()
        hits += [f"{rel}:{n}: {line}" for n, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
    return "\n".join(hits)


@nts.tool(read_only=True)
async def Read(file_path: str, ctx: nts.ToolContext) -> str:
    """Read a file (demo version)."""
    await asyncio.sleep(0.15)
    path = ctx.resolve_path(file_path)
    ctx.file_state.record(path)
    return Path(path).read_text()


@nts.tool(read_only=True)
async def Glob(pattern: str, ctx: nts.ToolContext) -> str:
    """Find files by name pattern (demo version)."""
    await asyncio.sleep(0.1)
    return "\n".join(f for f in _walk(ctx.cwd) if fnmatch.fnmatch(f, pattern))


@nts.tool
async def Edit(file_path: str, old_string: str, new_string: str, ctx: nts.ToolContext) -> str:
    """Replace text in a file (demo version; not read-only, so it runs alone)."""
    await asyncio.sleep(0.2)
    path = Path(ctx.resolve_path(file_path))
    text = path.read_text()
    if text.count(old_string) != 1:
        raise ValueError(f"old_string must occur exactly once in {file_path}")
    path.write_text(text.replace(old_string, new_string))
    return f"Edited {file_path}"


BATCH = [
    {"type": "tool_use", "id": "toolu_01", "name": "Grep", "input": {"pattern": "load"}},
    {"type": "tool_use", "id": "toolu_02", "name": "Read", "input": {"file_path": "app/config.py"}},
    {"type": "tool_use", "id": "toolu_03", "name": "Edit", "input": {"file_path": "app/config.py", "old_string": "'debug': False", "new_string": "'debug': True"}},
    {"type": "tool_use", "id": "toolu_04", "name": "Glob", "input": {"pattern": "tests/*.py"}},
    {"type": "tool_use", "id": "toolu_05", "name": "Read", "input": {"file_path": "app/config.py"}},
]


async def run_demo(out: Any = print) -> list[nts.ToolResultBlock]:
    with tempfile.TemporaryDirectory() as root:
        for rel, text in SAMPLE.items():
            Path(root, rel).parent.mkdir(parents=True, exist_ok=True)
            Path(root, rel).write_text(text)
        sched = nts.Scheduler(nts.ToolRegistry([Grep, Read, Glob, Edit]), cwd=root)
        out("Batches:", " ".join(f"[{' '.join(b.names)}]{'' if b.concurrency_safe else '*'}" for b in sched.partition(BATCH)),
            "(* = runs alone)\n")
        start = time.monotonic()
        handle = sched.submit(BATCH)

        def show(event: events.Event) -> None:
            match event:
                case events.CallStarted():
                    state, text = "started", ""
                case events.ProgressEvent():
                    state, text = "progress", str(event.data)
                case events.ResultEvent():
                    state, text = "finished", event.status
                case _:
                    return
            out(f"{(event.time - start) * 1000:6.0f} ms  {event.tool_use_id}  {event.tool_name:<5} {state:<9} {text}")

        handle.subscribe(show)
        results = await handle
        out("\nResults (one per tool_use, in order):")
        for result in results:
            first = result.text.splitlines()[0] if result.text else ""
            out(f"  {result.tool_use_id}: {first[:70]}")
        out("\nTimeline:")
        out(render_text_timeline(handle.trace))
        return results


def main() -> int:
    asyncio.run(run_demo())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
