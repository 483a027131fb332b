"""A call that reports progress without end costs the trace and a slow stream consumer a bounded amount."""

from __future__ import annotations

from pathlib import Path

import nbtoolsched as nts
from nbtoolsched._events import ProgressDropped, ProgressEvent, ResultEvent
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.scheduling._engine import PROGRESS_BACKLOG as STREAM_PROGRESS_CAP
from nbtoolsched._events import RunEvents
from nbtoolsched.scheduling._trace import PROGRESS_KEPT, Trace

from tests.spies import block


@nts.tool(read_only=True)
async def chatty(n: int, ctx: nts.ToolContext) -> str:
    """Reports progress n times without ever yielding to the loop: no consumer can keep up."""
    for i in range(n):
        ctx.progress({"i": i})
    return "done"


async def test_the_trace_keeps_the_first_and_last_progress_of_a_call_and_counts_the_rest(scheduler: nts.Scheduler, tmp_path: Path) -> None:
    await scheduler.run([block("Read", progress=5000), block("Grep", progress=3)])
    trace = scheduler.last_trace
    assert trace is not None
    kept = [e for e in trace.of_kind("progress_event") if e.tool_name == "Read"]
    assert [e.data["step"] for e in kept] == [*range(PROGRESS_KEPT), *range(5000 - PROGRESS_KEPT, 5000)]
    [dropped] = trace.of_kind("progress_dropped")
    assert dropped.tool_name == "Read" and dropped.count == 5000 - 2 * PROGRESS_KEPT
    kinds = [e.kind for e in trace.events if getattr(e, "tool_name", "") == "Read"]
    assert kinds.index("progress_dropped") == kinds.index("progress_event") + PROGRESS_KEPT  # between the first and the last
    assert kinds[-1] == "result_event"
    spans = {s.tool_name: s for s in trace.states()}
    assert spans["Read"].progress_count == 5000 and spans["Grep"].progress_count == 3  # counts stay exact
    path = tmp_path / "trace.jsonl"
    trace.write(path)
    assert {s.tool_name: s.progress_count for s in Trace.read(path).states()} == {"Read": 5000, "Grep": 3}


async def test_the_trace_does_not_grow_with_the_number_of_progress_events(scheduler: nts.Scheduler) -> None:
    sizes = []
    for n in (1_000, 20_000):
        await scheduler.run([block("Read", progress=n)])
        assert scheduler.last_trace is not None
        sizes.append(len(scheduler.last_trace))
    assert sizes[0] == sizes[1] <= 2 * PROGRESS_KEPT + 6  # run start and end, queued, started, dropped marker, finished


async def test_a_trace_read_mid_call_holds_the_latest_progress_too() -> None:
    trace = Trace(keep_progress=2)
    events = RunEvents([trace.record])
    for i in range(10):
        events.emit(ProgressEvent("t1", "Read", i, 0.0, 1))
    assert [e.count if isinstance(e, ProgressDropped) else e.data for e in trace.events] == [0, 1, 6, 8, 9]
    for i in range(10, 13):
        events.emit(ProgressEvent("t1", "Read", i, 0.0, 1))
    events.emit(ResultEvent("t1", "Read", status="completed", batch=1))
    assert [s.progress_count for s in trace.states()] == [13]


async def test_a_slow_stream_consumer_loses_the_oldest_progress_never_the_result(tmp_path: Path) -> None:
    sched = nts.Scheduler(ToolRegistry([chatty]), cwd=tmp_path, session_dir=tmp_path / "s")
    n = 20_000
    events = [e async for e in sched.stream([{"type": "tool_use", "id": "c", "name": "chatty", "input": {"n": n}}])]
    progress = [e for e in events if isinstance(e, ProgressEvent)]
    [dropped] = [e for e in events if isinstance(e, ProgressDropped)]  # the one event for missed progress
    assert events.index(dropped) == events.index(progress[0]) - 1  # said where, and how many
    assert (dropped.tool_use_id, dropped.tool_name, dropped.count) == ("c", "chatty", n - STREAM_PROGRESS_CAP)
    assert dropped.time == progress[0].time and dropped.batch == progress[0].batch == 1
    assert [e.data["i"] for e in progress] == list(range(n - STREAM_PROGRESS_CAP, n))
    assert isinstance(events[-1], ResultEvent) and events[-1].result is not None and events[-1].result.text == "done"
    state = nts.events.CallState("c", "chatty")
    for event in events:
        state.apply(event)
    assert state.progress_count == n  # the reducer counts what was missed, as it does from a trace
