"""Agent loop: streaming executor vs tools after the stream, and what a %%agent cell adds.

Part 1 (``streaming``). A scripted three-turn session whose blocks stream with
realistic pauses and whose tools take realistic times, run twice in the same process:
once handing each tool_use to the streaming executor as its block completes, once
running the tools after the whole answer (``streaming=False``). For each turn the table
shows the model's stream time, the tools' own time (measured in the batch run), the
ideal ``max(stream, tools)`` and the floor (no tool can start before its own block is
complete), so the streaming path can be judged against both.

Part 2 (``cell``). The same session through the bare ``Agent`` and through an
``%%agent`` cell (a NotebookSession on this loop, without a kernel: the live view,
a tool panel per turn, the UI pump). It reports the time from the last byte of each
tool_use block (the model yielding its ``content_block_stop``) to the tool's first
line, on both paths, and the cell's added latency per turn over the bare Agent, from
sessions with no delays and instant tools (so only overhead is left), alternated to
share machine noise. Target: under 5 ms per turn.

Part 3 (``models``). The same session through the real SDK clients over HTTP: a
``ScriptServer`` on 127.0.0.1 (its own thread) streams the turns as Anthropic's Messages
API events to ``AnthropicModel`` and as Chat Completions chunks to ``OpenAIModel``, with
the in-process ``ScriptedModel`` as the baseline. For each tool call it reports the time
from the last byte of its arguments (written by the server) to the tool's first line,
and from the bytes that tell the client the call is complete to that line. Anthropic
sends ``content_block_stop`` right after the arguments; Chat Completions has no such
event, so a call is complete only when the next call's first chunk or the
``finish_reason`` arrives, and the wait for it is the model's, not the scheduler's.

    python benchmarks/bench_agent.py [--part all|streaming|cell|models] [--scale 1.0] [--repeat 3] [--sessions 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent, AgentResult
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use


STARTS: dict[str, float] = {}  # "Tool:argument" -> perf_counter at the tool's first line


async def _work(tag: str, seconds: float) -> None:
    STARTS[tag] = time.perf_counter()
    if seconds > 0:
        await asyncio.sleep(seconds)


def make_registry() -> nts.ToolRegistry:
    @nts.tool(read_only=True)
    async def Read(path: str, seconds: float) -> str:
        """Read a file."""
        await _work(f"Read:{path}", seconds)
        return f"contents of {path}"

    @nts.tool(read_only=True)
    async def Grep(pattern: str, seconds: float) -> str:
        """Search files."""
        await _work(f"Grep:{pattern}", seconds)
        return f"3 matches for {pattern}"

    @nts.tool()
    async def Edit(file_path: str, seconds: float) -> str:
        """Edit a file."""
        await _work(f"Edit:{file_path}", seconds)
        return f"edited {file_path}"

    @nts.tool()
    async def Bash(command: str, seconds: float) -> str:
        """Run a command."""
        await _work(f"Bash:{command}", seconds)
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
            marks.setdefault(e.turn, {})[e.kind] = e.time
        elif e.kind == "model_block" and e.tool_use_id:
            block_end[e.tool_use_id] = (e.turn, e.time)
    reach: dict[int, float] = {}
    for call in result.trace.states():
        if call.tool_use_id in block_end and call.duration is not None:
            turn, arrived = block_end[call.tool_use_id]
            end = arrived - marks[turn]["turn_started"] + call.duration
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


async def streaming_part(scale: float, repeat: int) -> None:
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


# -- part 2: what an %%agent cell adds -------------------------------------------------------------------
class BlockClock:
    """Wraps a model: notes when each tool_use block's last event (content_block_stop) is handed to the loop."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.name = model.name
        self.stops: dict[str, float] = {}  # "Tool:argument" -> perf_counter at its block's last byte

    async def stream(self, messages: list[dict[str, Any]], *, tools: Any = None, system: Any = None) -> AsyncIterator[dict[str, Any]]:
        names: dict[int, str] = {}
        inputs: dict[int, str] = {}
        async for event in self.model.stream(messages, tools=tools, system=system):
            index = event.get("index", -1)
            if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
                names[index], inputs[index] = event["content_block"]["name"], ""
            elif event["type"] == "content_block_delta" and index in names:
                inputs[index] += event["delta"].get("partial_json", "")
            elif event["type"] == "content_block_stop" and index in names:
                data = json.loads(inputs.pop(index))
                argument = data.get("path") or data.get("pattern") or data.get("file_path") or data.get("command")
                self.stops[f"{names.pop(index)}:{argument}"] = time.perf_counter()  # as the loop receives it
            yield event


def gaps(clock: BlockClock) -> list[float]:
    """Call right after the session: STARTS holds this session's tool starts."""
    return [STARTS[tag] - stopped for tag, stopped in clock.stops.items() if tag in STARTS]


def quiet_project() -> str:
    """An empty folder with no settings files, for the notebook session."""
    folder = tempfile.mkdtemp(prefix="nbtoolsched-bench-")
    os.environ["CLAUDE_CONFIG_DIR"] = os.path.join(folder, "claude")
    return folder


async def bare_session(scale: float, gaps_out: list[float]) -> float:
    clock = BlockClock(ScriptedModel(session(scale)))
    STARTS.clear()
    permissions = nts.Permissions(cwd=os.getcwd(), approver=nts.ApprovalBroker("allow"))
    agent = Agent(clock, nts.Scheduler(make_registry(), permissions=permissions))
    start = time.perf_counter()
    result = await agent.run("Fix the parser's empty-input bug.")
    elapsed = time.perf_counter() - start
    assert result.stop_reason == "end_turn" and result.turns == 3, result.stop_reason
    gaps_out += gaps(clock)
    return elapsed


async def cell_session(notebook: Any, scale: float, gaps_out: list[float]) -> float:
    from nbtoolsched.notebook._agent_cell import conversation_for

    clock = BlockClock(ScriptedModel(session(scale)))
    STARTS.clear()
    conversation = conversation_for(notebook)
    start = time.perf_counter()
    cell = conversation.start("Fix the parser's empty-input bug.", model=clock, new=True)
    result = await cell
    elapsed = time.perf_counter() - start
    assert result is not None and result.stop_reason == "end_turn" and result.turns == 3, result
    gaps_out += gaps(clock)
    return elapsed


def _ms(values: list[float]) -> str:
    values = sorted(v * 1000 for v in values)
    return f"median {statistics.median(values):6.2f}  p90 {values[int(0.9 * (len(values) - 1))]:6.2f}  max {values[-1]:6.2f} ms"


async def cell_part(scale: float, sessions: int) -> None:
    from nbtoolsched.notebook._session import NotebookSession

    os.chdir(quiet_project())
    notebook = NotebookSession(registry=make_registry(), policy="allow")
    # realistic pauses: the time from a tool_use block's last byte to its tool's first line
    bare_gaps: list[float] = []
    cell_gaps: list[float] = []
    for _ in range(3):
        await bare_session(scale, bare_gaps)
        await cell_session(notebook, scale, cell_gaps)
    print(f"%%agent cell vs bare Agent, 3 scripted turns (5 tool calls), scale {scale}\n")
    print(f"last byte of a tool_use block -> the tool's first line ({len(bare_gaps)} calls each)")
    print(f"  bare Agent   {_ms(bare_gaps)}")
    print(f"  %%agent cell {_ms(cell_gaps)}")
    # overhead only: no pauses, instant tools; the two paths alternate
    bare: list[float] = []
    cell: list[float] = []
    for _ in range(5):  # warm up imports, widget classes and caches
        await bare_session(0.0, [])
        await cell_session(notebook, 0.0, [])
    for _ in range(sessions):
        bare.append(await bare_session(0.0, []))
        cell.append(await cell_session(notebook, 0.0, []))
    added = (statistics.median(cell) - statistics.median(bare)) / 3
    print(f"\nwhole session, no pauses, instant tools ({sessions} sessions each)")
    print(f"  bare Agent   {_ms(bare)}")
    print(f"  %%agent cell {_ms(cell)}")
    print(f"  added by the cell: {added * 1000:.2f} ms per turn (target < 5 ms)  "
          f"[pump renders: {notebook.pump.renders}]")
    notebook.close()


# -- part 3: the real SDK clients over HTTP ---------------------------------------------------------------
def _tags(result: AgentResult) -> dict[str, str]:
    """tool_use id -> the "Tool:argument" tag its tool notes in STARTS."""
    tags = {}
    for message in result.messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_use":
                data = block["input"]
                argument = data.get("path") or data.get("pattern") or data.get("file_path") or data.get("command")
                tags[block["id"]] = f"{block['name']}:{argument}"
    return tags


async def sdk_session(kind: str, scale: float, from_arguments: list[float], from_complete: list[float]) -> float:
    from nbtoolsched.models import ScriptServer

    STARTS.clear()
    permissions = nts.Permissions(cwd=os.getcwd(), approver=nts.ApprovalBroker("allow"))
    scheduler = nts.Scheduler(make_registry(), permissions=permissions)
    if kind == "scripted":
        clock = BlockClock(ScriptedModel(session(scale)))
        start = time.perf_counter()
        result = await Agent(clock, scheduler).run("Fix the parser's empty-input bug.")
        elapsed = time.perf_counter() - start
        found = gaps(clock)  # in process, the last argument byte and the block's stop are one event apart
        from_arguments += found
        from_complete += found
    else:
        with ScriptServer(session(scale)) as server:
            model: Any = (nts.AnthropicModel(api_key="bench", base_url=server.anthropic_url, max_retries=0)
                          if kind == "anthropic" else nts.OpenAIModel("scripted", base_url=server.openai_url, max_retries=0))
            start = time.perf_counter()
            result = await Agent(model, scheduler).run("Fix the parser's empty-input bug.")
            elapsed = time.perf_counter() - start
            for call_id, tag in _tags(result).items():
                from_arguments.append(STARTS[tag] - server.argument_ends[call_id])
                from_complete.append(STARTS[tag] - server.complete_at[call_id])
    assert result.stop_reason == "end_turn" and result.turns == 3, (kind, result.stop_reason, result.error)
    validate_transcript(result.messages)
    return elapsed


async def models_part(scale: float, repeat: int) -> None:
    kinds = {"scripted": "ScriptedModel (in process)", "anthropic": "AnthropicModel (SDK, HTTP)",
             "openai": "OpenAIModel (SDK, HTTP)"}
    arguments: dict[str, list[float]] = {k: [] for k in kinds}
    complete: dict[str, list[float]] = {k: [] for k in kinds}
    totals: dict[str, list[float]] = {k: [] for k in kinds}
    for kind in kinds:  # warm up: imports, SDK clients, connection code paths
        await sdk_session(kind, 0.0, [], [])
    for _ in range(repeat):  # the three alternate, so machine noise hits all alike
        for kind in kinds:
            totals[kind].append(await sdk_session(kind, scale, arguments[kind], complete[kind]))
    calls = len(arguments["scripted"])
    print(f"the same 3-turn session (5 tool calls) through three models, scale {scale}, {repeat} runs each\n")
    print("last byte of a call's arguments -> its tool's first line")
    for kind, label in kinds.items():
        print(f"  {label:<28} {_ms(arguments[kind])}")
    print("the bytes that complete a call (Anthropic: content_block_stop; OpenAI: the next call or finish_reason)"
          " -> its tool's first line")
    base = statistics.median(complete["scripted"])
    for kind, label in kinds.items():
        ratio = statistics.median(complete[kind]) / base if base > 0 else float("nan")
        print(f"  {label:<28} {_ms(complete[kind])}   {ratio:5.1f}x the in-process baseline")
    print(f"\nwhole session (median of {repeat}): " + "  ".join(
        f"{label.split()[0]} {statistics.median(totals[kind]):.3f} s" for kind, label in kinds.items()))
    print(f"({calls} calls per model. OpenAI's gap from the last argument byte includes the model's own wait before"
          "\nits next chunk: here the script's pause before the next block. A p90 above the median is the Bash call"
          "\nwaiting for the Edit before it, which must finish first and could start only that much later.)")


async def main(part: str, scale: float, repeat: int, sessions: int) -> None:
    if part in ("all", "streaming"):
        await streaming_part(scale, repeat)
    if part in ("all", "cell"):
        if part == "all":
            print("\n" + "-" * 72 + "\n")
        await cell_part(scale, sessions)
    if part in ("all", "models"):
        if part == "all":
            print("\n" + "-" * 72 + "\n")
        await models_part(scale, repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "streaming", "cell", "models"], default="all")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every delay and tool duration")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=30, help="part 2: overhead sessions per path")
    args = parser.parse_args()
    if args.scale <= 0 or args.repeat < 1 or args.sessions < 1:
        parser.error("--scale must be > 0, --repeat and --sessions >= 1")
    asyncio.run(main(args.part, args.scale, args.repeat, args.sessions))
