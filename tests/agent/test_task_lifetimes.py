"""An agent turn leaves nothing behind: cancelled while the model streams and a tool runs,
or watched through ``events()`` and left early, every task it made has ended (the model
stream's cleanup included) and every tool_use has its tool_result."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use

from .conftest import make_registry


class SlowToClose:
    """A model whose stream takes a while to clean up when it is stopped."""

    name = "slow-to-close"

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.closed = False

    async def stream(self, messages: list[dict[str, Any]], *, tools: Any = None, system: Any = None) -> AsyncIterator[Any]:
        try:
            async for event in self.inner.stream(messages, tools=tools, system=system):
                yield event
        finally:
            await asyncio.sleep(0.2)  # e.g. an HTTP connection being closed
            self.closed = True


def tick_then_wait() -> ScriptedModel:
    """A tool_use the executor starts at once, then a long pause before the next block."""
    return ScriptedModel([Turn([tool_use("tick", seconds=30), text("never said")], delay_before_block=0.5)])


async def test_a_turn_cancelled_mid_stream_leaves_no_task(tmp_path: Any) -> None:
    model = SlowToClose(tick_then_wait())
    sched = nts.Scheduler(make_registry(), cwd=tmp_path, session_dir=tmp_path / "s")
    agent = Agent(model, sched)
    before = asyncio.all_tasks()
    run = asyncio.ensure_future(agent.run("go"))
    await asyncio.sleep(1.0)  # the tick call runs; the model is still streaming
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert model.closed, "the run ended before its model stream was closed"
    assert asyncio.all_tasks() == before
    validate_transcript(agent.messages)  # the tick call has its result


async def test_events_left_early_leave_no_task(tmp_path: Any) -> None:
    model = SlowToClose(tick_then_wait())
    sched = nts.Scheduler(make_registry(), cwd=tmp_path, session_dir=tmp_path / "s")
    agent = Agent(model, sched)
    before = asyncio.all_tasks()
    events = agent.events("go")
    async with contextlib.aclosing(events):
        async for event in events:
            if getattr(event, "tool_name", "") == "tick":
                break
    assert not agent.running and model.closed
    assert asyncio.all_tasks() == before
    validate_transcript(agent.messages)
