"""Sleep: progress each second, bounded input, and "cancel" on interrupt."""

from __future__ import annotations

import asyncio
import time

import pytest

import nbtoolsched as nts
from nbtoolsched._registry import ToolRegistry
from nbtoolsched._tool._abort import INTERRUPT, AbortSignal
from nbtoolsched.tools._sleep import SleepTool


def sleep_use(seconds: float, id: str = "s") -> dict:
    return {"type": "tool_use", "id": id, "name": "Sleep", "input": {"seconds": seconds}}


@nts.tool(read_only=True)
async def steady(seconds: float) -> str:
    """Keeps working through an interrupt (interrupt behaviour "block")."""
    await asyncio.sleep(seconds)
    return "finished"


@pytest.fixture
def sched(tmp_path) -> nts.Scheduler:
    return nts.Scheduler(ToolRegistry([SleepTool(), steady]), cwd=tmp_path)


@pytest.mark.heavy  # sleeps 2.2 s
async def test_sleep_reports_each_second_then_finishes(sched: nts.Scheduler) -> None:
    events = [e async for e in sched.stream([sleep_use(2.2)])]
    progress = [e.data["elapsed"] for e in events if e.kind == "progress_event"]
    assert progress == [1, 2]
    assert events[-1].kind == "result_event" and events[-1].result.text == "Slept for 2.2 seconds."


async def test_sleep_is_safe_read_only_and_cancellable() -> None:
    tool = SleepTool()
    parsed = tool.input_model(seconds=1)
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    assert tool.interrupt_behavior == "cancel"


@pytest.mark.parametrize("seconds", [-1, 301, "soon"])
async def test_out_of_range_seconds_are_refused(sched: nts.Scheduler, seconds: object) -> None:
    [result] = await sched.run([sleep_use(seconds)])  # type: ignore[arg-type]
    assert result.is_error and "seconds" in result.text


async def test_interrupt_stops_sleep_but_not_a_blocking_tool(sched: nts.Scheduler) -> None:
    abort = AbortSignal()
    async with sched.streaming_executor(abort=abort) as ex:
        ex.add_tool(sleep_use(60))
        ex.add_tool({"type": "tool_use", "id": "w", "name": "steady", "input": {"seconds": 0.5}})
        await asyncio.sleep(0.1)
        started = time.monotonic()
        abort.abort(INTERRUPT)
        updates = [u async for u in ex.get_remaining_results() if not isinstance(u, nts.events.ProgressEvent)]
    outcomes = {o.tool_use_id: o for o in updates}
    assert outcomes["s"].status == "cancelled" and outcomes["s"].is_error
    assert outcomes["w"].status == "completed" and outcomes["w"].result.text == "finished"
    assert time.monotonic() - started < 30  # Sleep(60) did not run to the end


async def test_only_sleep_running_makes_the_executor_interruptible(sched: nts.Scheduler) -> None:
    async with sched.streaming_executor() as ex:
        ex.add_tool(sleep_use(5))
        await asyncio.sleep(0.05)
        assert ex.interruptible
        ex.discard()
