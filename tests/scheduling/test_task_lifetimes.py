"""No task outlives what started it: a cancelled run, a stream left early, submitted runs
of a closed scheduler, a merge stopped early. Each test checks ``asyncio.all_tasks()``
right after the end, with no turn of the loop in between."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

import pytest

import nbtoolsched as nts
from nbtoolsched.scheduling._merge import merge_capped
from tests.spies import Recorder, block


async def started(recorder: Recorder, count: int = 1) -> None:
    for _ in range(500):
        if recorder.running >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the calls never started")


async def test_a_cancelled_run_leaves_no_task(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = asyncio.all_tasks()
    run = asyncio.ensure_future(scheduler.run([block("Sleep", duration=30), block("Read", duration=30)]))
    await started(recorder, 2)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert asyncio.all_tasks() == before and recorder.running == 0


async def test_a_stream_left_early_leaves_no_task(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = asyncio.all_tasks()
    stream = scheduler.stream([block("Read", output="first"), block("Sleep", duration=30)])
    async with contextlib.aclosing(stream):
        async for event in stream:
            result = getattr(event, "result", None)  # a call's result event
            if result is not None:
                assert result.text == "first"
                break
    assert asyncio.all_tasks() == before and recorder.running == 0


async def test_closing_a_scheduler_ends_its_submitted_runs(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = asyncio.all_tasks()
    handle = scheduler.submit([block("Sleep", duration=30)])
    await started(recorder)
    await scheduler.aclose()
    assert handle.task is not None and handle.task.cancelled()
    assert asyncio.all_tasks() == before and recorder.running == 0
    with pytest.raises(RuntimeError, match="closed"):
        scheduler.submit([block("Read")])


async def test_a_merge_stopped_early_leaves_no_read_ahead() -> None:
    closed: list[int] = []

    async def numbers(start: int) -> AsyncIterator[int]:
        try:
            for n in range(start, start + 100):
                await asyncio.sleep(0.001 * (n % 3))
                yield n
        finally:
            closed.append(start)

    before = asyncio.all_tasks()
    merged = merge_capped([numbers(0), numbers(1000), numbers(2000)], cap=2)
    seen = []
    async with contextlib.aclosing(merged):
        async for value in merged:
            seen.append(value)
            if len(seen) == 5:
                break
    assert asyncio.all_tasks() == before
    assert sorted(closed) == [0, 1000]  # the two it had started (the third never began)
