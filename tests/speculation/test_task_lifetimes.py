"""A speculation never runs on behind whoever started it: ``speculate`` cancelled stops its
loop and waits for it; a pipeline's preparing of the next suggestion ends with reject."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import SpeculationPipeline, speculate
from nbtoolsched.speculation._loop import LoopRequest

from .conftest import loop, text


async def test_a_cancelled_speculate_stops_its_loop_and_leaves_no_task(sched: nts.Scheduler) -> None:
    running, ended = asyncio.Event(), asyncio.Event()

    async def slow_loop(request: LoopRequest) -> None:
        running.set()
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)  # its cleanup takes a while
            ended.set()

    before = asyncio.all_tasks()
    caller = asyncio.ensure_future(speculate("take your time", slow_loop, scheduler=sched, kernel=False))
    await asyncio.wait_for(running.wait(), 10)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert ended.is_set(), "the speculation's loop was still running after its caller was gone"
    assert asyncio.all_tasks() == before


async def test_rejecting_ends_the_preparing_of_the_next_suggestion(sched: nts.Scheduler) -> None:
    asked = asyncio.Event()

    async def slow_suggester(messages: list[dict[str, Any]]) -> str | None:
        asked.set()
        await asyncio.sleep(30)
        return "never"

    before = asyncio.all_tasks()
    pipeline = SpeculationPipeline(loop([text("done")]), scheduler=sched, suggest=slow_suggester, kernel=False)
    pipeline.start("say done")
    await asyncio.wait_for(asked.wait(), 10)
    await pipeline.reject()
    assert asyncio.all_tasks() == before


async def test_closing_a_pipeline_leaves_nothing_running(sched: nts.Scheduler) -> None:
    async def slow_loop(request: LoopRequest) -> None:
        await asyncio.sleep(30)

    async def never(messages: list[dict[str, Any]]) -> str | None:
        return None

    before = asyncio.all_tasks()
    pipeline = SpeculationPipeline(slow_loop, scheduler=sched, suggest=never, kernel=False, grace=0.1)
    spec = pipeline.start("wait")
    await asyncio.sleep(0.1)
    await pipeline.aclose()
    assert spec.state == "rejected" and asyncio.all_tasks() == before
