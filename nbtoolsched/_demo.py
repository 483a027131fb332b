"""The Quick start demo: a model's realistic batch, scheduled, checked, watched, drawn.

``python -m nbtoolsched demo`` sends Grep + Read + Edit + Glob + Read to the real
built-in tools, in a small sample project made in a temporary directory. The permissions
are Claude Code's default mode with no rules: reads in the project run unasked, the Edit
asks, and the demo's policy (a scripted approver, standing where a person or a headless
policy would answer) allows it. The demo prints each call's state changes as they happen,
the ask and its answer, every result whole (the Edit's result is a unified diff of the
file, and the second Read shows the changed line), and a timeline of the batches.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import nbtoolsched as nts
from nbtoolsched import events
from nbtoolsched.scheduling._timeline import render_text_timeline

SAMPLE = {
    "app/main.py": "from app.config import load\n\ndef main():\n    cfg = load()\n    print('hello', cfg['name'])\n",
    "app/config.py": "def load():\n    return {'name': 'world', 'debug': False}\n",
    "README.md": "# sample\n\nA tiny project for the nbtoolsched demo.\n",
    "tests/test_main.py": "def test_main():\n    assert True\n",
}

BATCH = [
    {"type": "tool_use", "id": "toolu_01", "name": "Grep", "input": {"pattern": "load"}},
    {"type": "tool_use", "id": "toolu_02", "name": "Read", "input": {"file_path": "app/config.py"}},
    {"type": "tool_use", "id": "toolu_03", "name": "Edit", "input": {"file_path": "app/config.py", "old_string": "'debug': False", "new_string": "'debug': True"}},
    {"type": "tool_use", "id": "toolu_04", "name": "Glob", "input": {"pattern": "tests/*.py"}},
    {"type": "tool_use", "id": "toolu_05", "name": "Read", "input": {"file_path": "app/config.py"}},
]


def demo_policy(root: str, out: Callable[..., Any], clock: Callable[[], float]) -> nts.Approver:
    """The demo's scripted approver: an Edit or Write under app/ is allowed, anything else
    denied. It prints the ask and its answer, in the same columns as the state changes."""

    def short(text: str) -> str:
        return text.replace(root + os.sep, "")

    async def answer(request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
        target = os.path.realpath(os.path.join(root, str(request.input.get("file_path", ""))))
        path = Path(os.path.relpath(target, root)).as_posix()  # app/../x is x, not under app/
        allowed = request.tool_name in ("Edit", "Write") and path.startswith("app/")
        verdict = "allowed by the demo's policy" if allowed else "denied by the demo's policy"
        out(f"{clock():6.0f} ms  {request.tool_use_id}  {request.tool_name:<5} asks      "
            f"{short(request.reason).rstrip('.')} -> {verdict}")
        if allowed:
            return nts.ApprovalAnswer("allow", by_policy=True)
        return nts.ApprovalAnswer("deny", "the demo's policy allows edits under app/ only", by_policy=True)

    return answer


async def run_demo(out: Any = print) -> list[nts.ToolResultBlock]:
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        for rel, text in SAMPLE.items():
            Path(root, rel).parent.mkdir(parents=True, exist_ok=True)
            Path(root, rel).write_text(text, encoding="utf-8")

        def ms(at: float | None = None) -> float:  # since the batch was submitted
            return ((time.monotonic() if at is None else at) - start) * 1000

        sched = nts.Scheduler(nts.default_registry(), permissions=nts.Permissions(cwd=root),
                              approver=demo_policy(root, out, ms), cwd=root)
        out("Batches:", " ".join(f"[{' '.join(b.names)}]{'' if b.concurrency_safe else '*'}" for b in sched.partition(BATCH)),
            "(* = runs alone)")
        out("Permissions: default mode, no rules: reads in the project run unasked, the Edit asks.\n")
        start = time.monotonic()
        handle = sched.submit(BATCH)

        def show(event: events.Event) -> None:
            match event:
                case events.CallStarted():
                    state, text = "started", ""
                case events.ProgressEvent():
                    state, text = "progress", str(event.data)
                case events.ApprovalAnswered():
                    state, text = "answered", event.answer
                case events.ResultEvent():
                    state, text = "finished", event.status
                case _:
                    return
            out(f"{ms(event.time):6.0f} ms  {event.tool_use_id}  {event.tool_name:<5} {state:<9} {text}".rstrip())

        handle.subscribe(show)
        results = await handle
        names = {block["id"]: block["name"] for block in BATCH}
        out("\nResults (one per tool_use, in order):")
        for result in results:
            first, *rest = result.text.splitlines() or [""]
            out(f"  {result.tool_use_id} {names[result.tool_use_id]:<5} {first}")
            for line in rest:
                out(f"  {'':14} {line}")
        out("\nTimeline (? = waiting for the approver):")
        out(render_text_timeline(handle.trace))
        return results


def main() -> int:
    asyncio.run(run_demo())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
