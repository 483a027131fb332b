"""Whatever the script, limits, failures and abort timing, the transcript stays valid."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use

from .conftest import make_registry

seconds = st.sampled_from([0.0, 0.0, 0.002, 0.01])
blocks = st.one_of(
    st.builds(lambda: text("words")),
    st.builds(lambda p, s: tool_use("read", path=p, seconds=s), st.sampled_from("abc"), seconds),
    st.builds(lambda p, s: tool_use("write", path=p, seconds=s), st.sampled_from("abc"), seconds),
    st.builds(lambda f, s: tool_use("sh", command="x", fail=f, seconds=s), st.booleans(), seconds),
    st.builds(lambda s: tool_use("tick", seconds=s), seconds),
    st.just(tool_use("missing_tool")),
    st.just(tool_use("read", path=5)),  # wrong type: a validation error result
    st.just({"type": "tool_use", "name": "read", "raw_json": "{nope"}),
)
turns = st.builds(
    Turn,
    st.lists(blocks, max_size=4),
    delay_before_block=st.sampled_from([0.0, 0.002]),
    fail_after=st.one_of(st.none(), st.none(), st.integers(0, 12)),
    error_event_after=st.one_of(st.none(), st.none(), st.integers(1, 12)),
)
aborts = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["model_block", "started", "finished", "queued"]), st.integers(1, 4),
              st.sampled_from(["user_abort", "interrupt"])),
)

STOPS = {"end_turn", "max_turns", "aborted_streaming", "aborted_tools", "hook_stopped", "model_error"}


async def play(script: list[Turn], streaming: bool, retries: int, max_turns: int, abort: Any) -> None:
    agent = Agent(ScriptedModel(script), nts.Scheduler(make_registry()), streaming=streaming,
                  stream_retries=retries, max_turns=max_turns)
    if abort is not None:
        kind, nth, reason = abort
        count = 0

        def maybe_abort(event: Any) -> None:
            nonlocal count
            if event.kind == kind:
                count += 1
                if count == nth:
                    agent.abort(reason)

        agent.subscribe(maybe_abort)
    result = await asyncio.wait_for(agent.run("go"), timeout=30)
    validate_transcript(result.messages)
    assert result.stop_reason in STOPS
    assert result.turns <= max_turns
    if result.stop_reason == "model_error":
        assert result.error is not None
    tool_uses = [b for m in result.messages if m["role"] == "assistant" and isinstance(m["content"], list)
                 for b in m["content"] if b["type"] == "tool_use"]
    assert len({b["id"] for b in tool_uses}) == len(tool_uses)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(turns, min_size=1, max_size=4), streaming=st.booleans(), retries=st.integers(0, 1),
       max_turns=st.integers(1, 5), abort=aborts)
def test_every_run_ends_with_a_valid_transcript(script, streaming, retries, max_turns, abort) -> None:
    asyncio.run(play(script, streaming, retries, max_turns, abort))
