"""Speculation: how much waiting accepting a speculated answer saves.

A scripted three-turn session (the real Agent loop, a ScriptedModel streaming with
realistic pauses, the built-in tools with realistic latencies added) is run two ways for each
"think time" (how long the user looks at the suggestion before accepting it):

* normal: the user accepts, then the agent runs all the turns;
* speculative: the agent starts on the suggestion at once, in an overlay; when the user
  accepts, the overlay is copied back, and if the speculation had not finished (or
  stopped at a boundary) a normal run continues from where it stopped.

The table shows accept-to-done wall time for both, the time saved, and what
``AcceptResult.time_saved`` reported. Three sessions: one that speculation can finish
(search, read, edit, summary), one that ends in a simulated test run, and one that ends
in a real ``pytest`` run on the small project (edit, then test). The last two run both
ways a speculation can: Claude Code's path-rewriting overlay, where a command that is not
read-only is a boundary (the test waits for the user), and the kernel overlay, where the
test runs ahead too (overlayfs under the OS sandbox).

    python benchmarks/bench_speculation.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use
from nbtoolsched.speculation import agent_loop, start_speculation
from nbtoolsched.tools import BashTool, EditTool, GrepTool, ReadTool

SCALE = 1.0


class _Slowed:
    """A built-in tool that first waits its realistic latency (the tiny project makes the
    real work instant), then does exactly what the built-in does."""

    latency = 0.0

    async def call(self, input: Any, ctx: nts.ToolContext) -> Any:
        await asyncio.sleep(self.latency * SCALE)
        return await super().call(input, ctx)  # type: ignore[misc]


class Read(_Slowed, ReadTool):
    latency = 0.05


class Grep(_Slowed, GrepTool):
    latency = 0.30


class Edit(_Slowed, EditTool):
    latency = 0.05


def test_run() -> str:
    """A short test run: a real command that is not read-only, so speculation stops there."""
    return f"python3 -c \"import time; time.sleep({1.2 * SCALE:.3f}); print('4 passed')\""


PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"


def session(test_run: str | None) -> list[Turn]:
    timing = dict(delay_before_block=0.15 * SCALE, delay_per_delta=0.02 * SCALE, input_deltas=6, text_deltas=10)
    edit = tool_use("Edit", file_path="src/parser.py", old_string="return None", new_string="return []")
    second = [text("Empty input returns None; it should be an empty list."), edit]
    if test_run is not None:
        second.append(tool_use("Bash", command=test_run))
    return [
        Turn([text("Looking for the parser."), tool_use("Grep", pattern="def parse"),
              tool_use("Read", file_path="src/parser.py"), tool_use("Read", file_path="tests/test_parser.py")], **timing),
        Turn(second, **timing),
        Turn([text("Done: parse('') now returns an empty list.")], **timing),
    ]


def project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src/parser.py").write_text("def parse(text):\n    if not text:\n        return None\n    return text.split()\n")
    (root / "tests/test_parser.py").write_text("from src.parser import parse\n\ndef test_empty():\n    assert parse('') == []\n")
    (root / "tests/__init__.py").write_text("")
    (root / "src/__init__.py").write_text("")
    return root


def scheduler(cwd: Path) -> nts.Scheduler:
    # acceptEdits: the session's own Edits need no person, as a speculation's need not either.
    perms = nts.Permissions(mode="acceptEdits", cwd=cwd, approver=_yes)
    return nts.Scheduler(nts.ToolRegistry([Read(), Grep(), Edit(), BashTool()]), permissions=perms, cwd=cwd,
                         session_dir=cwd.parent / "session")


async def _yes(request: Any) -> nts.ApprovalAnswer:
    return nts.ApprovalAnswer("allow")  # the user approves the test run in the normal turn


SUGGESTION = "Fix parse() for empty input"


async def normal(base: Path, script: list[Turn], think: float) -> float:
    sched = scheduler(project(base / "normal"))
    await asyncio.sleep(think)  # the user reads the suggestion
    start = time.perf_counter()
    result = await Agent(ScriptedModel(script), sched).run(SUGGESTION)
    assert result.stop_reason == "end_turn", result.stop_reason
    return time.perf_counter() - start


async def speculative(base: Path, script: list[Turn], think: float, kernel: bool) -> tuple[float, float, str, str]:
    sched = scheduler(project(base / ("kernel" if kernel else "paths")))
    make = lambda s, m, n: Agent(ScriptedModel(script), s, messages=m, max_turns=n)  # noqa: E731
    spec = start_speculation(SUGGESTION, agent_loop(make), scheduler=sched, kernel=kernel)
    await asyncio.sleep(think)
    start = time.perf_counter()
    accepted = await spec.accept()
    if accepted.query_required:  # continue normally from where the speculation stopped
        prompt = {"role": "user", "content": [{"type": "text", "text": SUGGESTION}]}
        rest = ScriptedModel(remaining(script, accepted.messages))
        result = await Agent(rest, sched, messages=[prompt, *accepted.messages]).run(None)
        assert result.stop_reason == "end_turn", result.stop_reason
    elapsed = time.perf_counter() - start
    assert "return []" in Path(sched.context.cwd, "src/parser.py").read_text()
    return elapsed, accepted.time_saved, accepted.boundary.kind, spec.overlay_kind


def remaining(script: list[Turn], kept: list[dict[str, Any]]) -> list[Turn]:
    """What the model still has to say: the calls dropped from the last kept turn, then the rest.

    (A call stopped at a boundary is dropped from the transcript, so the model asks for
    it again in the next normal turn.)
    """
    answers = [m for m in kept if m["role"] == "assistant"]
    done = len(answers)
    if not done:
        return script
    calls = {(b["name"], repr(b["input"])) for b in answers[-1]["content"] if b["type"] == "tool_use"}
    last = script[done - 1]
    dropped = [b for b in last.blocks if b["type"] == "tool_use" and (b["name"], repr(b["input"])) not in calls]
    timing = dict(delay_before_block=last.delay_before_block, delay_per_delta=last.delay_per_delta,
                  input_deltas=last.input_deltas, text_deltas=last.text_deltas)
    again = [Turn(dropped, **timing)] if dropped else []
    return again + list(script[done:])


async def main() -> None:
    rows = []
    sessions = (("search-read-edit", None, (False,), (0.5, 1.5, 4.0)),
                ("+ simulated test run", test_run(), (False, True), (0.5, 1.5, 4.0)),
                ("edit, then a real pytest run", PYTEST, (False, True), (1.5, 4.0, 8.0)))
    for name, run, overlays, thinks in sessions:
        for think in thinks:
            think *= SCALE
            for kernel in overlays:
                with tempfile.TemporaryDirectory() as tmp:
                    base = Path(tmp)
                    plain = await normal(base, session(run), think)
                    fast, reported, boundary, used = await speculative(base, session(run), think, kernel)
                rows.append((name, think, used, plain, fast, plain - fast, reported, boundary))
    print("| session | think (s) | overlay | normal accept->done (s) | speculative accept->done (s) | saved (s) | "
          "saved | reported time_saved (s) | boundary at accept |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for name, think, used, plain, fast, saved, reported, boundary in rows:
        print(f"| {name} | {think:.2f} | {used} | {plain:.3f} | {fast:.3f} | {saved:.3f} | {saved / plain:.0%} | "
              f"{reported:.3f} | {boundary} |")
    for label, think in (("+ simulated test run", 4.0), ("edit, then a real pytest run", 8.0)):
        for row in (r for r in rows if r[0] == label and r[1] == think * SCALE):
            _, _, used, plain, _, saved, _, _ = row
            print(f"{label}, accepted after {think:g} s of reading, {used} overlay: saves {saved / plain:.0%} of the turn"
                  + (" (target >= 90 %)" if used == "kernel" else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every simulated duration")
    SCALE = parser.parse_args().scale
    os.environ.setdefault("PYTHONHASHSEED", "0")
    asyncio.run(main())
