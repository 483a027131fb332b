import asyncio
from typing import Any

import pytest

import nbtoolsched as nts

from tests.spies import Recorder, block


async def drain(ex: nts.StreamingToolExecutor) -> list[Any]:
    return [u async for u in ex.get_remaining_results()]


def outcomes(updates: list[Any]) -> list[nts.events.ResultEvent]:
    return [u for u in updates if isinstance(u, nts.events.ResultEvent)]


async def test_safe_tool_starts_as_soon_as_it_is_added(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    async with scheduler.streaming_executor() as ex:
        first = ex.add_tool(block("Read", duration=0.3))
        await asyncio.sleep(0.05)
        assert first.status == "executing" and recorder.running == 1  # started while the "stream" goes on
        ex.add_tool(block("Grep", duration=0.01))
        updates = await drain(ex)
        assert len(outcomes(updates)) == 2


async def test_unsafe_waits_for_all_before_and_blocks_all_after(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    async with scheduler.streaming_executor() as ex:
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
    async with scheduler.streaming_executor() as ex:
        slow, fast = block("Read", duration=0.3), block("Read", duration=0.0)
        ex.add_tool(slow)
        ex.add_tool(fast)
        await asyncio.sleep(0.1)
        ready = [u.tool_use_id for u in ex.get_completed_results() if isinstance(u, nts.events.ResultEvent)]
        assert ready == [fast["id"]]
    async with scheduler.streaming_executor() as ex2:
        unsafe, after = block("Edit", duration=0.3), block("Read")
        ex2.add_tool(unsafe)
        ex2.add_tool(after)
        await asyncio.sleep(0.1)
        assert [u for u in ex2.get_completed_results() if isinstance(u, nts.events.ResultEvent)] == []


async def test_progress_is_delivered_at_once(scheduler: nts.Scheduler) -> None:
    async with scheduler.streaming_executor() as ex:
        ex.add_tool(block("Read", progress=2, duration=0.5))
        await asyncio.sleep(0.05)
        early = list(ex.get_completed_results())
        assert [type(u).__name__ for u in early] == ["ProgressEvent", "ProgressEvent"]
        await drain(ex)


async def test_shell_failure_cancels_running_siblings_and_says_who_failed(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    async with scheduler.streaming_executor() as ex:
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
    async with scheduler.streaming_executor() as ex:
        ok, bad = block("Read", duration=0.2, output="fine"), block("Read", fail=True)
        ex.add_tool(ok)
        ex.add_tool(bad)
        results = {o.tool_use_id: o for o in outcomes(await drain(ex))}
        assert results[ok["id"]].result.content == "fine" and results[bad["id"]].status == "error"


async def test_interrupt_stops_cancel_tools_and_lets_block_tools_finish(scheduler: nts.Scheduler) -> None:
    abort = nts.AbortSignal()
    async with scheduler.streaming_executor(abort=abort) as ex:
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
    async with scheduler.streaming_executor() as ex:
        ex.add_tool(block("Read", duration=5))
        ex.add_tool(block("Edit"))
        await asyncio.sleep(0.05)
        ex.discard()
        assert await drain(ex) == []
    assert recorder.running == 0  # leaving the block waited for the stopped call
    final = ex.outcomes()
    assert all(o.is_error for o in final) and "streamed again" in final[1].result.content


async def test_cap_applies_to_the_streaming_executor(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    scheduler.max_concurrency = 2
    async with scheduler.streaming_executor() as ex:
        for _ in range(6):
            ex.add_tool(block("Read", duration=0.03))
        assert len(outcomes(await drain(ex))) == 6
        assert recorder.peak == 2


async def test_unknown_and_invalid_calls_complete_without_running(scheduler: nts.Scheduler) -> None:
    async with scheduler.streaming_executor() as ex:
        ex.add_tool(block("Nope"))
        ex.add_tool(block("Read", duration="soon"))
        results = outcomes(await drain(ex))
        assert "no tool named 'Nope'" in results[0].result.content
        assert "InputValidationError" in results[1].result.content


def test_add_tool_outside_a_running_loop_is_a_clear_error(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    with pytest.raises(RuntimeError, match="none is running"):
        ex.add_tool(block("Read"))


async def test_a_long_queue_answered_at_once_after_an_abort_does_not_recurse(scheduler: nts.Scheduler) -> None:
    """Each instantly answered call starts the next: that chain must not grow the stack."""
    abort = nts.AbortSignal()
    async with scheduler.streaming_executor(abort=abort) as ex:
        ex.add_tool(block("Edit", duration=5))
        for _ in range(3000):
            ex.add_tool(block("Read"))
        await asyncio.sleep(0.01)
        abort.abort()
        results = outcomes(await drain(ex))
        assert len(results) == 3001 and all(o.status == "cancelled" for o in results)


async def test_add_tool_without_async_with_says_how_to_use_it(scheduler: nts.Scheduler) -> None:
    ex = scheduler.streaming_executor()
    with pytest.raises(RuntimeError, match="async with scheduler.streaming_executor"):
        ex.add_tool(block("Read"))


async def test_leaving_the_block_waits_for_every_call_and_leaves_no_task(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = len(asyncio.all_tasks())
    async with scheduler.streaming_executor() as ex:
        for _ in range(3):
            ex.add_tool(block("Read", duration=0.05))
        ex.add_tool(block("Edit", duration=0.02))
    assert len(asyncio.all_tasks()) == before
    assert [o.status for o in ex.outcomes()] == ["completed"] * 4
    assert recorder.running == 0


async def test_an_error_in_the_body_stops_every_call_and_answers_it(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = len(asyncio.all_tasks())
    with pytest.raises(ValueError, match="the stream broke"):
        async with scheduler.streaming_executor() as ex:
            ex.add_tool(block("Read", duration=5))
            ex.add_tool(block("Edit"))
            await asyncio.sleep(0.05)
            raise ValueError("the stream broke")
    assert len(asyncio.all_tasks()) == before and recorder.running == 0
    final = ex.outcomes()
    assert [o.status for o in final] == ["cancelled", "cancelled"]
    assert "interrupted" in final[0].result.text and "did not run" in final[1].result.text


async def test_cancelling_the_owner_stops_the_calls_and_the_cancellation_goes_on(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    entered = asyncio.Event()

    async def owner() -> None:
        async with scheduler.streaming_executor() as ex:
            ex.add_tool(block("Read", duration=5))
            entered.set()
            await drain(ex)

    task = asyncio.ensure_future(owner())
    await entered.wait()
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.running == 0


async def test_safe_calls_context_modifiers_apply_in_block_order_when_their_batch_closes() -> None:
    """Streaming keeps safe calls' modifiers (Claude Code's streaming executor drops them)."""
    log: list[str] = []

    def adding(tag: str):  # type: ignore[no-untyped-def]
        return lambda c: c.replace(options={**c.options, "marks": [*c.options.get("marks", []), tag]})

    @nts.tool(read_only=True)
    async def mark(tag: str, wait: float, ctx: nts.ToolContext) -> nts.ToolOutput:
        log.append(f"{tag} saw {','.join(ctx.options.get('marks', []))}")
        await asyncio.sleep(wait)
        return nts.ToolOutput(tag, context_modifier=adding(tag))

    @nts.tool()
    async def write(tag: str, ctx: nts.ToolContext) -> nts.ToolOutput:
        log.append(f"{tag} saw {','.join(ctx.options.get('marks', []))}")
        return nts.ToolOutput(tag, context_modifier=adding(tag))

    sched = nts.Scheduler(nts.ToolRegistry([mark, write]))
    async with sched.streaming_executor() as ex:
        ex.add_tool({"type": "tool_use", "id": "a", "name": "mark", "input": {"tag": "a", "wait": 0.05}})
        ex.add_tool({"type": "tool_use", "id": "b", "name": "mark", "input": {"tag": "b", "wait": 0.0}})
        await asyncio.sleep(0.1)  # both finished; the batch is still open, so nothing applied yet
        assert ex.context.options.get("marks") is None
        ex.add_tool({"type": "tool_use", "id": "c", "name": "mark", "input": {"tag": "c", "wait": 0.0}})
        ex.add_tool({"type": "tool_use", "id": "d", "name": "write", "input": {"tag": "d"}})
        ex.add_tool({"type": "tool_use", "id": "e", "name": "mark", "input": {"tag": "e", "wait": 0.0}})
    assert log == ["a saw ", "b saw ", "c saw ", "d saw a,b,c", "e saw a,b,c,d"]
    assert ex.context.options["marks"] == ["a", "b", "c", "d", "e"]
