import asyncio
from typing import Any

import nbtoolsched as nts
from nbtoolsched.execution import CallOutcome

from .conftest import Recorder, block


async def drain(ex: nts.StreamingToolExecutor) -> list[Any]:
    return [u async for u in ex.get_remaining_results()]


def outcomes(updates: list[Any]) -> list[CallOutcome]:
    return [u for u in updates if isinstance(u, CallOutcome)]


async def test_safe_tool_starts_as_soon_as_it_is_added(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    ex = scheduler.streaming_executor()
    first = ex.add_tool(block("Read", duration=0.3))
    await asyncio.sleep(0.05)
    assert first.status == "executing" and recorder.running == 1  # started while the "stream" goes on
    ex.add_tool(block("Grep", duration=0.01))
    updates = await drain(ex)
    assert len(outcomes(updates)) == 2


async def test_unsafe_waits_for_all_before_and_blocks_all_after(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    ex = scheduler.streaming_executor()
    blocks = [block("Read", duration=0.2), block("Edit", duration=0.1), block("Read", duration=0.01)]
    tracked = [ex.add_tool(b) for b in blocks]
    await asyncio.sleep(0.05)
    assert [t.status for t in tracked] == ["executing", "queued", "queued"]
    results = outcomes(await drain(ex))
    assert [o.tool_use_id for o in results] == [b["id"] for b in blocks]
    iv = recorder.intervals
    assert iv[blocks[1]["id"]][0] >= iv[blocks[0]["id"]][1]
    assert iv[blocks[2]["id"]][0] >= iv[blocks[1]["id"]][1]
    assert recorder.overlaps_with_unsafe == []


async def test_completed_safe_result_may_overtake_a_running_safe_one_but_not_an_unsafe_one(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    slow, fast = block("Read", duration=0.3), block("Read", duration=0.0)
    ex.add_tool(slow)
    ex.add_tool(fast)
    await asyncio.sleep(0.1)
    ready = [u.tool_use_id for u in ex.get_completed_results() if isinstance(u, CallOutcome)]
    assert ready == [fast["id"]]
    ex2 = scheduler.streaming_executor()
    unsafe, after = block("Edit", duration=0.3), block("Read")
    ex2.add_tool(unsafe)
    ex2.add_tool(after)
    await asyncio.sleep(0.1)
    assert [u for u in ex2.get_completed_results() if isinstance(u, CallOutcome)] == []
    await drain(ex)
    await drain(ex2)


async def test_progress_is_delivered_at_once(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    ex.add_tool(block("Read", progress=2, duration=0.5))
    await asyncio.sleep(0.05)
    early = list(ex.get_completed_results())
    assert [type(u).__name__ for u in early] == ["ProgressEvent", "ProgressEvent"]
    await drain(ex)


async def test_shell_failure_cancels_running_siblings_and_says_who_failed(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    ex = scheduler.streaming_executor()
    sibling = block("SafeBash", duration=5)
    failing = block("SafeBash", duration=0.05, fail=True)
    ex.add_tool(sibling)
    ex.add_tool(failing)
    results = outcomes(await drain(ex))
    assert results[0].status == "cancelled"
    text = results[0].result.content
    assert "SafeBash" in text and "failed" in text and "did not interrupt" in text
    assert results[1].status == "error"
    assert recorder.running == 0
    assert not scheduler.context.abort.aborted  # the query itself goes on


async def test_failure_of_a_non_shell_tool_cancels_nothing(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    ok, bad = block("Read", duration=0.2, output="fine"), block("Read", fail=True)
    ex.add_tool(ok)
    ex.add_tool(bad)
    results = {o.tool_use_id: o for o in outcomes(await drain(ex))}
    assert results[ok["id"]].result.content == "fine" and results[bad["id"]].status == "error"


async def test_interrupt_stops_cancel_tools_and_lets_block_tools_finish(scheduler: nts.Scheduler) -> None:
    abort = nts.AbortSignal()
    ex = scheduler.streaming_executor(abort=abort)
    sleeper = block("Sleep", duration=5)
    reader = block("Read", duration=0.2, output="kept")
    ex.add_tool(sleeper)
    ex.add_tool(reader)
    await asyncio.sleep(0.05)
    assert not ex.interruptible  # one running tool blocks interrupts
    abort.abort("interrupt")
    results = outcomes(await drain(ex))
    assert results[0].status == "cancelled"
    assert results[1].result.content == "kept"


async def test_discard_answers_nothing_further_and_stops_running_tools(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    ex = scheduler.streaming_executor()
    ex.add_tool(block("Read", duration=5))
    ex.add_tool(block("Edit"))
    await asyncio.sleep(0.05)
    ex.discard()
    assert await drain(ex) == []
    await ex.aclose()
    assert recorder.running == 0
    final = ex.outcomes()
    assert all(o.is_error for o in final) and "streamed again" in final[1].result.content


async def test_cap_applies_to_the_streaming_executor(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    scheduler.max_concurrency = 2
    ex = scheduler.streaming_executor()
    for _ in range(6):
        ex.add_tool(block("Read", duration=0.03))
    assert len(outcomes(await drain(ex))) == 6
    assert recorder.peak == 2


async def test_unknown_and_invalid_calls_complete_without_running(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    ex.add_tool(block("Nope"))
    ex.add_tool(block("Read", duration="soon"))
    results = outcomes(await drain(ex))
    assert "no tool named 'Nope'" in results[0].result.content
    assert "InputValidationError" in results[1].result.content


def test_add_tool_outside_a_running_loop_is_a_clear_error(scheduler: nts.Scheduler) -> None:
    import pytest

    ex = scheduler.streaming_executor()
    with pytest.raises(RuntimeError, match="none is running"):
        ex.add_tool(block("Read"))


async def test_a_long_queue_answered_at_once_after_an_abort_does_not_recurse(scheduler: nts.Scheduler) -> None:
    """Each instantly answered call starts the next: that chain must not grow the stack."""
    abort = nts.AbortSignal()
    ex = scheduler.streaming_executor(abort=abort)
    ex.add_tool(block("Edit", duration=5))
    for _ in range(3000):
        ex.add_tool(block("Read"))
    await asyncio.sleep(0.01)
    abort.abort()
    results = outcomes(await drain(ex))
    assert len(results) == 3001 and all(o.status == "cancelled" for o in results)
