"""Agent loop: streaming executor vs running tools after the stream ends.

A scripted three-turn session whose blocks stream with realistic pauses and whose
tools take realistic times, run twice in the same process: once handing each tool_use
to the streaming executor as its block completes, once running the tools after the
whole answer (``streaming=False``). For each turn the table shows the model's stream
time, the tools' own time (measured in the batch run), the ideal ``max(stream, tools)``
and the floor (no tool can start before its own block is complete), so the streaming
path can be judged against both.

    python benchmarks/bench_agent.py [--scale 1.0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from dataclasses import dataclass

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent, AgentResult
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use


def make_registry() -> nts.ToolRegistry:
    @nts.tool(read_only=True)
    async def Read(path: str, seconds: float) -> str:
        """Read a file."""
        await asyncio.sleep(seconds)
        return f"contents of {path}"

    @nts.tool(read_only=True)
    async def Grep(pattern: str, seconds: float) -> str:
        """Search files."""
        await asyncio.sleep(seconds)
        return f"3 matches for {pattern}"

    @nts.tool()
    async def Edit(file_path: str, seconds: float) -> str:
        """Edit a file."""
        await asyncio.sleep(seconds)
        return f"edited {file_path}"

    @nts.tool()
    async def Bash(command: str, seconds: float) -> str:
        """Run a command."""
        await asyncio.sleep(seconds)
        return f"$ {command}\nok"

    return nts.ToolRegistry([Read, Grep, Edit, Bash])


def session(scale: float) -> list[Turn]:
    """Three turns: parallel reads, edits then a test run, a closing summary."""
    s = scale
    timing = dict(delay_before_block=0.12 * s, delay_per_delta=0.01 * s, input_deltas=6, text_deltas=8)
    return [
        Turn([text("I'll look at the parser and its tests first."),
              tool_use("Grep", pattern="def parse", seconds=0.30 * s),
              tool_use("Read", path="src/parser.py", seconds=0.25 * s),
              tool_use("Read", path="tests/test_parser.py", seconds=0.25 * s)], **timing),
        Turn([text("The empty-input case is not handled; fixing it."),
              tool_use("Edit", file_path="src/parser.py", seconds=0.15 * s),
              tool_use("Bash", command="pytest -q tests/test_parser.py", seconds=0.60 * s)], **timing),
        Turn([text("Fixed: parse() now returns an empty tree for empty input, and the tests pass.")], **timing),
    ]


@dataclass
class TurnTimes:
    stream: float  # turn_started -> model_finished
    total: float  # turn_started -> turn_finished
    floor: float  # no tool can start before its block is complete: max(stream, block end + tool time)


def turn_times(result: AgentResult) -> list[TurnTimes]:
    marks: dict[int, dict[str, float]] = {}
    block_end: dict[str, tuple[int, float]] = {}
    for e in result.trace.events:
        if e.kind in ("turn_started", "model_finished", "turn_finished"):
            marks.setdefault(e.data["turn"], {})[e.kind] = e.time
        elif e.kind == "model_block" and e.tool_use_id:
            block_end[e.tool_use_id] = (e.data["turn"], e.time)
    reach: dict[int, float] = {}
    for span in result.trace.spans():
        if span.tool_use_id in block_end and span.duration is not None:
            turn, arrived = block_end[span.tool_use_id]
            end = arrived - marks[turn]["turn_started"] + span.duration
            reach[turn] = max(reach.get(turn, 0.0), end)
    times = []
    for turn, m in sorted(marks.items()):
        stream = m["model_finished"] - m["turn_started"]
        times.append(TurnTimes(stream, m["turn_finished"] - m["turn_started"], max(stream, reach.get(turn, 0.0))))
    return times


async def one_run(scale: float, streaming: bool) -> tuple[float, list[TurnTimes]]:
    agent = Agent(ScriptedModel(session(scale)), nts.Scheduler(make_registry()), streaming=streaming)
    loop = asyncio.get_running_loop()
    start = loop.time()
    result = await agent.run("Fix the parser's empty-input bug.")
    elapsed = loop.time() - start
    validate_transcript(result.messages)
    assert result.stop_reason == "end_turn" and result.turns == 3, result.stop_reason
    return elapsed, turn_times(result)


async def main(scale: float, repeat: int) -> None:
    runs = []
    for _ in range(repeat):  # alternate the two paths so machine noise hits both alike
        runs.append((await one_run(scale, True), await one_run(scale, False)))
    best = min(runs, key=lambda pair: pair[0][0] + pair[1][0])
    (s_total, s_turns), (b_total, b_turns) = best
    print(f"agent loop, 3 scripted turns, scale {scale}, best of {repeat} (seconds)\n")
    print(f"{'turn':>4} {'stream':>8} {'tools':>8} {'ideal':>8} {'floor':>8} {'batch':>8} {'streaming':>10} {'vs ideal':>9}")
    ideal_total = 0.0
    for n, (s, b) in enumerate(zip(s_turns, b_turns), 1):
        tools = b.total - b.stream  # the tools alone, measured where nothing overlaps them
        ideal = max(b.stream, tools)
        ideal_total += ideal
        print(f"{n:>4} {b.stream:8.3f} {tools:8.3f} {ideal:8.3f} {s.floor:8.3f} {b.total:8.3f} {s.total:10.3f}"
              f" {s.total / ideal:8.2f}x")
    print(f"\nend to end: batch {b_total:.3f}  streaming {s_total:.3f}  ideal {ideal_total:.3f}")
    print(f"streaming / batch = {s_total / b_total:.2f}   streaming / ideal = {s_total / ideal_total:.2f}")
    all_ratios = [s[0] / b[0] for s, b in runs]
    print(f"streaming / batch over all {repeat} runs: median {statistics.median(all_ratios):.2f}")
    print("\nideal = max(stream, tools); floor = the best any scheduler can do when a tool can only start once"
          "\nits block is complete (the last block's tool must run after the stream): the streaming path is"
          "\nmeasured against both.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every delay and tool duration")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.scale <= 0 or args.repeat < 1:
        parser.error("--scale must be > 0 and --repeat >= 1")
    asyncio.run(main(args.scale, args.repeat))
