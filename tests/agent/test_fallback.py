"""Model fallback as Claude Code does it, per-run scheduler overrides, and a deferred approval.

An overloaded model (529, or an ``overloaded_error`` mid-answer) or one that keeps
failing hands the turn to ``fallback_model``: the partial answer is discarded with its
executor, its calls are answered in the file (off the main chain), a system entry and a
``ModelFallback`` event say so, and the transcript stays valid and re-readable.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ModelError, ScriptedModel, Turn, text, tool_use
from nbtoolsched._session_log import read_transcript


class Failing:
    """A model whose every request fails before the first byte."""

    def __init__(self, kind: str = "overloaded", status: int | None = 529, name: str = "primary") -> None:
        self.kind, self.status, self.name = kind, status, name
        self.calls = 0

    async def stream(self, messages: list[dict[str, Any]], *, tools: Any = None, system: Any = None):
        self.calls += 1
        raise ModelError(self.kind, "Overloaded" if self.kind == "overloaded" else "bad request", status=self.status)
        yield {}  # an async generator, like a real adapter


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def record(agent: Agent) -> list[Any]:
    seen: list[Any] = []
    agent.subscribe(seen.append)
    return seen


async def test_an_overloaded_model_hands_the_turn_to_the_fallback(scheduler: nts.Scheduler, tool_log) -> None:
    primary = Failing()
    fallback = ScriptedModel([[tool_use("read", path="a")], "read it"], name="backup")
    agent = Agent(primary, scheduler, fallback_model=fallback)
    events = record(agent)
    result = await agent.run("go")
    assert result.stop_reason == "end_turn" and result.turns == 2 and result.final_text == "read it"
    assert primary.calls == 1 and fallback.turns_played == 2  # the rest of the run stays on the fallback
    assert tool_log == [("read", "a")]
    switch = [e for e in events if isinstance(e, nts.events.ModelFallback)]
    assert [(e.turn, e.from_model, e.to_model) for e in switch] == [(1, "primary", "backup")]
    failed = [e for e in events if isinstance(e, nts.events.StreamFailed)]
    assert [(e.error_kind, e.will_retry) for e in failed] == [("overloaded", True)]
    validate_transcript(result.messages)
    path = agent.transcript.path
    notice = [e for e in entries(path) if e["type"] == "system"]
    assert len(notice) == 1 and notice[0]["level"] == "warning" and "Switched to backup" in notice[0]["content"]
    assert read_transcript(path).messages == result.messages
    # the next run (a new prompt) starts on the primary model again, as in Claude Code
    await agent.run("again")
    assert primary.calls == 2 and agent.active_model is fallback


async def test_an_overload_mid_answer_discards_its_calls_and_answers_them_in_the_file(scheduler, tool_log) -> None:
    # message_start, the text block (3 events) and the read block (start, 4 deltas, stop): the
    # read starts running, then the server reports an overload before the write block.
    answer = Turn([text("Let me look."), tool_use("read", path="a", seconds=2.0), tool_use("write", path="b")],
                  error_event_after=10)
    primary = ScriptedModel([answer], name="primary")
    fallback = ScriptedModel(["Nothing to change."], name="backup")
    agent = Agent(primary, scheduler, fallback_model=fallback)
    events = record(agent)
    result = await asyncio.wait_for(agent.run("go"), 10)
    assert result.stop_reason == "end_turn" and result.final_text == "Nothing to change."
    assert tool_log == [("read", "a")]  # it had started; the write never did
    assert result.messages == [{"role": "user", "content": [{"type": "text", "text": "go"}]},
                               {"role": "assistant", "content": [{"type": "text", "text": "Nothing to change."}]}]
    stopped = [e for e in events if isinstance(e, nts.events.ResultEvent)]
    assert [(e.tool_name, e.status) for e in stopped] == [("read", "cancelled")]
    lines = entries(agent.transcript.path)
    abandoned = [e for e in lines if e["type"] == "assistant" and e["message"]["content"][0]["type"] == "tool_use"]
    assert [e["message"]["content"][0]["name"] for e in abandoned] == ["read"]
    answers = [e for e in lines if e["type"] == "user" and e["message"]["content"][0]["type"] == "tool_result"]
    assert [a["message"]["content"][0]["tool_use_id"] for a in answers] == [abandoned[0]["message"]["content"][0]["id"]]
    assert answers[0]["toolUseResult"] == "Model fallback triggered"
    assert answers[0]["message"]["content"][0]["content"].startswith("Model fallback triggered: primary failed")
    assert answers[0]["message"]["content"][0]["is_error"] is True
    system = next(e for e in lines if e["type"] == "system")
    prompt = lines[0]
    assert system["parentUuid"] == prompt["uuid"]  # the abandoned answer is a side branch
    assert lines[-1]["parentUuid"] == system["uuid"]
    back = read_transcript(agent.transcript.path)
    assert back.problems == [] and back.messages == result.messages


async def test_repeated_failures_fall_back_once_the_retries_are_spent(scheduler) -> None:
    primary = ScriptedModel([Turn(["x"], fail_after=1), Turn(["x"], fail_after=1), "never"], name="primary")
    fallback = ScriptedModel(["from the fallback"], name="backup")
    agent = Agent(primary, scheduler, stream_retries=1, fallback_model=fallback)
    events = record(agent)
    result = await agent.run("go")
    assert result.final_text == "from the fallback" and primary.turns_played == 2
    assert [e.will_retry for e in events if isinstance(e, nts.events.StreamFailed)] == [True, True]
    assert len([e for e in events if isinstance(e, nts.events.ModelFallback)]) == 1
    validate_transcript(result.messages)


async def test_a_request_the_model_rejects_does_not_fall_back(scheduler) -> None:
    fallback = ScriptedModel(["unused"])
    agent = Agent(Failing("invalid_request", 400), scheduler, fallback_model=fallback)
    result = await agent.run("go")
    assert result.stop_reason == "model_error" and result.error.kind == "invalid_request"
    assert fallback.turns_played == 0


async def test_when_the_fallback_fails_too_the_run_ends_with_the_error(scheduler) -> None:
    agent = Agent(Failing(name="primary"), scheduler, fallback_model=Failing(name="backup"))
    events = record(agent)
    result = await agent.run("go")
    assert result.stop_reason == "model_error" and result.error.overloaded
    assert len([e for e in events if isinstance(e, nts.events.ModelFallback)]) == 1  # one switch, never back and forth
    validate_transcript(result.messages)


async def test_without_a_fallback_an_overload_ends_the_run_as_before(scheduler) -> None:
    result = await Agent(Failing(), scheduler).run("go")
    assert result.stop_reason == "model_error"


def test_a_fallback_that_is_not_a_model_is_refused(scheduler) -> None:
    with pytest.raises(TypeError, match="fallback_model must have a stream"):
        Agent(ScriptedModel([]), scheduler, fallback_model="claude-haiku")  # type: ignore[arg-type]


# -- per-run overrides and a deferred approval ----------------------------------------------------------
@pytest.fixture
def guarded(registry: nts.ToolRegistry, tmp_path: Path) -> nts.Scheduler:
    """Default mode with nobody to ask: ``write`` (not read-only) needs an approver."""
    return nts.Scheduler(registry, permissions=nts.Permissions(cwd=tmp_path), cwd=tmp_path, session_dir=tmp_path / "s")


async def test_a_run_can_bring_its_own_approver_mode_and_cap(guarded, tool_log) -> None:
    script = [[tool_use("write", path="a")], [tool_use("read", path="x", seconds=0.2), tool_use("read", path="y", seconds=0.2)],
              "done"]
    agent = Agent(ScriptedModel(script), guarded)
    events = record(agent)
    result = await agent.run("go", approver=nts.ApprovalBroker("deny"), max_concurrency=1)
    first = result.messages[2]["content"][0]
    assert first["is_error"] and tool_log[0] == ("read", "x")  # the write was refused by the run's approver
    starts = {e.tool_use_id: e.time for e in events if isinstance(e, nts.events.CallStarted)}
    ends = {e.tool_use_id: e.time for e in events if isinstance(e, nts.events.ResultEvent)}
    reads = [b["id"] for b in result.messages[3]["content"]]
    assert starts[reads[1]] >= ends[reads[0]]  # max_concurrency=1: one read after the other
    again = Agent(ScriptedModel([[tool_use("write", path="b")], "done"]), guarded)
    planned = await again.run("go", mode="plan", approver=nts.ApprovalBroker("allow"))
    assert planned.messages[2]["content"][0]["is_error"]  # plan mode refuses the write whatever the approver says
    assert ("write", "b") not in tool_log


async def test_a_deferred_approval_pauses_the_run_with_every_call_answered(guarded, tool_log) -> None:
    model = ScriptedModel([[tool_use("read", path="a"), tool_use("write", path="b")], "never asked"])
    agent = Agent(model, guarded)
    result = await agent.run("go", approver=nts.ApprovalBroker("defer"))
    assert result.stop_reason == "approval_deferred" and model.turns_played == 1
    assert tool_log == [("read", "a")]
    validate_transcript(result.messages)
