"""Invariants over random batches, for both schedulers.

Whatever the mix of safe and unsafe calls, durations, failures and aborts: one result
per block, in order; no unsafe call overlaps another call; never more than the cap
running; safe neighbours really overlap; nothing left running afterwards.
"""

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbtoolsched as nts

from tests.spies import Recorder, SpyTool

NAMES = ["Read", "Grep", "Edit", "Bash", "SafeBash"]
SAFE = {"Read", "Grep", "SafeBash"}

calls = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from([0.0, 0.005, 0.02]), st.booleans()),
    min_size=1,
    max_size=12,
)
plans = st.fixed_dictionaries({
    "calls": calls,
    "cap": st.integers(1, 4),
    "abort_after": st.one_of(st.none(), st.sampled_from([0.0, 0.01, 0.03])),
})


def make(recorder: Recorder) -> nts.ToolRegistry:
    return nts.ToolRegistry([SpyTool(n, recorder, safe=n in SAFE, shell="Bash" in n) for n in NAMES])


def blocks_for(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"t{i}", "name": name, "input": {"duration": d, "fail": fail}}
            for i, (name, d, fail) in enumerate(plan["calls"])]


async def _with_abort(coro_factory: Any, abort: nts.AbortSignal, after: float | None) -> Any:
    task = asyncio.ensure_future(coro_factory())
    if after is not None:
        await asyncio.sleep(after)
        abort.abort()
    return await task


def check(plan: dict[str, Any], recorder: Recorder, results: list[Any], tasks_before: int) -> None:
    blocks = blocks_for(plan)
    assert [r.tool_use_id for r in results] == [b["id"] for b in blocks]
    assert recorder.overlaps_with_unsafe == []
    assert recorder.peak <= plan["cap"]
    assert recorder.running == 0
    assert len(asyncio.all_tasks()) <= tasks_before


def overlapping_safe_pair(plan: dict[str, Any], recorder: Recorder) -> bool:
    """Adjacent safe calls that start together (among the first ``cap`` of a run of safe
    calls) and both run 20 ms must overlap. Later ones start when a slot frees, which
    may be just after a neighbour of the same length ended: no overlap is owed there."""
    c, cap = plan["calls"], plan["cap"]
    position = 0  # index within the current run of consecutive safe calls
    for i in range(len(c) - 1):
        position = position + 1 if i and c[i - 1][0] in SAFE and c[i][0] in SAFE else 0
        (a, da, _), (b, db, _) = c[i], c[i + 1]
        if position + 1 >= cap:
            continue
        if a in SAFE and b in SAFE and da == db == 0.02 and f"t{i}" in recorder.intervals and f"t{i+1}" in recorder.intervals:
            s1, e1 = recorder.intervals[f"t{i}"]
            s2, e2 = recorder.intervals[f"t{i+1}"]
            if not (s1 < e2 and s2 < e1):
                return False
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans)
def test_batch_scheduler_invariants(plan: dict[str, Any]) -> None:
    recorder = Recorder()
    sched = nts.Scheduler(make(recorder), max_concurrency=plan["cap"])

    async def main() -> None:
        before = len(asyncio.all_tasks())
        abort = nts.AbortSignal()
        run = await _with_abort(lambda: sched.run_outcomes(blocks_for(plan), abort=abort), abort, plan["abort_after"])
        results = [o.result for o in run.outcomes]
        await asyncio.sleep(0)
        check(plan, recorder, results, before)
        if plan["abort_after"] is None:  # a batch run stops nothing when a shell call fails
            assert all((r.is_error is True) == f for r, (_, _, f) in zip(results, plan["calls"]))
            if plan["cap"] >= 2:
                assert overlapping_safe_pair(plan, recorder)

    asyncio.run(main())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans, st.sampled_from([0.0, 0.002]))
def test_streaming_executor_invariants(plan: dict[str, Any], gap: float) -> None:
    recorder = Recorder()
    sched = nts.Scheduler(make(recorder), max_concurrency=plan["cap"])

    async def main() -> None:
        before = len(asyncio.all_tasks())
        abort = nts.AbortSignal()
        ex = sched.streaming_executor(abort=abort)

        async def feed_and_drain() -> list[Any]:
            async with ex:
                for b in blocks_for(plan):
                    ex.add_tool(b)
                    await asyncio.sleep(gap)  # blocks arrive as a stream would deliver them
                seen = [u for u in ex.get_completed_results() if isinstance(u, nts.events.ResultEvent)]
                seen += [u async for u in ex.get_remaining_results() if isinstance(u, nts.events.ResultEvent)]
            assert len({o.tool_use_id for o in seen}) == len(seen)  # nothing yielded twice
            return ex.outcomes()

        outcomes = await _with_abort(feed_and_drain, abort, plan["abort_after"])
        await asyncio.sleep(0)
        check(plan, recorder, [o.result for o in outcomes], before)

    asyncio.run(main())
