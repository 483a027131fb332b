"""The agent loop: turns, streaming executor hand-off, aborts, failures, hooks and limits."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent, AgentResult
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.agent import _texts as texts
from nbtoolsched.models import SCRIPT_FINISHED, ScriptedModel, Turn, text, tool_use

from .conftest import StopAfterHook


def three_turns(delay: float = 0.0) -> list[Turn]:
    return [
        Turn([text("Looking."), tool_use("read", path="a", seconds=0.03), tool_use("read", path="b"),
              tool_use("write", path="c")], delay_before_block=delay),
        Turn([tool_use("sh", command="ls"), tool_use("read", path="d")], delay_before_block=delay),
        Turn([text("All done.")]),
    ]


def results_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "tool_result"]


def texts_of(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


async def run(scheduler: nts.Scheduler, script: Any, prompt: str = "go", **options: Any) -> AgentResult:
    result = await Agent(ScriptedModel(script), scheduler, **options).run(prompt)
    validate_transcript(result.messages)
    return result


# -- the normal path ---------------------------------------------------------------------------
async def test_streaming_and_batch_modes_give_the_same_transcript(registry: nts.ToolRegistry, tmp_path: Any) -> None:
    streamed = await run(nts.Scheduler(registry, cwd=tmp_path), three_turns(0.01), streaming=True)
    batched = await run(nts.Scheduler(registry, cwd=tmp_path), three_turns(0.01), streaming=False)
    assert streamed.messages == batched.messages
    assert streamed.stop_reason == batched.stop_reason == "end_turn" and streamed.turns == 3
    assert [m["role"] for m in streamed.messages] == ["user", "assistant"] * 3
    first = results_of(streamed.messages[2])
    assert [r["content"] for r in first] == ["read a", "read b", "wrote c"]
    assert streamed.final_text == "All done."


async def test_results_follow_tool_use_order_even_when_a_later_call_finishes_first(scheduler: nts.Scheduler) -> None:
    script = [[tool_use("read", path="slow", seconds=0.2), tool_use("read", path="fast")], "ok"]
    result = await run(scheduler, script)
    spans = {s.tool_use_id: s for s in result.trace.states()}
    slow, fast = (spans[r["tool_use_id"]] for r in results_of(result.messages[2]))
    assert fast.finished_at < slow.finished_at
    assert [r["content"] for r in results_of(result.messages[2])] == ["read slow", "read fast"]


async def test_a_tool_starts_while_the_model_is_still_streaming(scheduler: nts.Scheduler) -> None:
    script = [Turn([tool_use("read", path="a"), text("thinking aloud for a while")], delay_before_block=0.15), "ok"]
    result = await run(scheduler, script)
    started = result.trace.of_kind("call_started")[0].time
    blocks = [e for e in result.trace.events if e.kind == "model_block" and e.turn == 1]
    assert started < blocks[-1].time
    finished = result.trace.of_kind("result_event")[0].time
    assert finished < blocks[-1].time  # it even finished before the answer was complete


async def test_in_batch_mode_tools_start_only_after_the_stream_ends(scheduler: nts.Scheduler) -> None:
    script = [Turn([tool_use("read", path="a"), text("more")], delay_before_block=0.05), "ok"]
    result = await run(scheduler, script, streaming=False)
    last_block = [e for e in result.trace.events if e.kind == "model_block"][1].time
    assert result.trace.of_kind("call_started")[0].time > last_block


async def test_the_model_is_shown_the_registry_tools_and_the_system_prompt(scheduler: nts.Scheduler) -> None:
    model = ScriptedModel([[tool_use("read", path="a")], "ok"])
    result = await Agent(model, scheduler, system="You are terse.").run("go")
    assert result.stop_reason == "end_turn"
    assert [t["name"] for t in model.calls[0].tools] == ["read", "reject", "sh", "tick", "write"]
    assert model.calls[0].system == "You are terse."
    assert model.calls[1].messages == result.messages[:3]


async def test_the_loop_events_share_one_trace_with_the_scheduler_events(scheduler: nts.Scheduler) -> None:
    seen: list[str] = []
    scheduler.events.subscribe(lambda e: seen.append(e.kind))
    result = await run(scheduler, three_turns())
    kinds = [e.kind for e in result.trace.events]
    assert kinds[0] == "agent_started" and kinds[-1] == "agent_finished"
    assert kinds.count("turn_started") == kinds.count("turn_finished") == 3
    assert {"call_queued", "call_started", "result_event", "model_block", "model_finished"} <= set(kinds)
    assert seen == kinds  # scheduler-wide listeners see the loop's events too
    assert result.trace.of_kind("agent_finished")[0].result is result


async def test_events_yields_live_and_ends_with_the_result(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel(three_turns()), scheduler)
    events = [e async for e in agent.events("go")]
    assert events[0].kind == "agent_started" and events[-1].kind == "agent_finished"
    result = events[-1].result
    assert isinstance(result, AgentResult) and result.stop_reason == "end_turn"


async def test_run_again_continues_the_same_conversation(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel(["first answer", "second answer"]), scheduler)
    await agent.run("one")
    result = await agent.run("two")
    validate_transcript(result.messages)
    assert [texts_of(m) for m in result.messages] == [["one"], ["first answer"], ["two"], ["second answer"]]


async def test_a_seeded_transcript_can_be_answered_as_it_is(scheduler: nts.Scheduler) -> None:
    seed = [{"role": "user", "content": "earlier question"}]
    result = await Agent(ScriptedModel(["answer"]), scheduler, messages=seed).run()
    assert result.messages[-1]["content"] == [{"type": "text", "text": "answer"}]


async def test_unknown_tools_and_broken_json_inputs_get_error_results_and_the_loop_goes_on(
    scheduler: nts.Scheduler,
) -> None:
    broken = {"type": "tool_use", "name": "read", "raw_json": '{"path": "a'}
    script = [[tool_use("nope"), broken, tool_use("read", path="ok")], "fine"]
    result = await run(scheduler, script)
    bad, broken_result, good = results_of(result.messages[2])
    assert bad["is_error"] and "nope" in bad["content"]
    assert broken_result["is_error"] and "not valid JSON" in broken_result["content"]
    assert result.messages[1]["content"][1]["input"] == {}
    assert good["content"] == "read ok" and result.stop_reason == "end_turn"


# -- limits and hooks ---------------------------------------------------------------------------
async def test_max_turns_stops_a_model_that_never_stops_calling_tools(scheduler: nts.Scheduler) -> None:
    model = ScriptedModel(lambda messages: [tool_use("read", path=str(len(messages)))])
    result = await Agent(model, scheduler, max_turns=3).run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "max_turns" and result.turns == 3 and model.turns_played == 3
    assert result.messages[-1]["role"] == "user" and results_of(result.messages[-1])


async def test_max_messages_stops_before_the_next_model_call(scheduler: nts.Scheduler) -> None:
    model = ScriptedModel(lambda messages: [tool_use("read", path="x")])
    result = await Agent(model, scheduler, max_messages=5).run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "max_messages" and len(result.messages) == 5 and model.turns_played == 2


async def test_a_hook_that_stops_continuation_ends_the_loop_after_the_results(registry: nts.ToolRegistry) -> None:
    scheduler = nts.Scheduler(registry, hooks=StopAfterHook("write"))
    model = ScriptedModel([[tool_use("read", path="a"), tool_use("write", path="b")], "never played"])
    result = await Agent(model, scheduler).run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "hook_stopped" and model.turns_played == 1
    last = result.messages[-1]
    assert [r["content"] for r in results_of(last)] == ["read a", "wrote b"]
    assert any("hook stopped after write" in t for t in texts_of(last))
    assert last["content"][0]["type"] == "tool_result"  # results first, then the hook's note


# -- aborts --------------------------------------------------------------------------------------
async def test_abort_mid_stream_answers_finished_calls_and_drops_the_unfinished_block(
    scheduler: nts.Scheduler,
) -> None:
    script = [Turn([tool_use("read", path="a"), tool_use("read", path="b")], delay_before_block=0.3)]
    agent = Agent(ScriptedModel(script), scheduler)
    agent.subscribe(lambda e: e.kind == "result_event" and agent.abort())
    start = time.monotonic()
    result = await agent.run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "aborted_streaming" and result.abort_reason == "user_abort"
    assert [b["type"] for b in result.messages[1]["content"]] == ["tool_use"]  # b never finished streaming
    assert [r["content"] for r in results_of(result.messages[2])] == ["read a"]
    assert texts_of(result.messages[2]) == [texts.INTERRUPT_NOTE]
    assert time.monotonic() - start < 5  # the 0.3 s wait for block b was cut short, not waited out


async def test_abort_mid_stream_in_batch_mode_answers_every_finished_call_as_not_run(scheduler: nts.Scheduler) -> None:
    script = [Turn([tool_use("read", path="a"), tool_use("read", path="b")], delay_before_block=0.3)]
    agent = Agent(ScriptedModel(script), scheduler, streaming=False)
    agent.subscribe(lambda e: e.kind == "model_block" and agent.abort())
    result = await agent.run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "aborted_streaming"
    only = results_of(result.messages[2])
    assert len(only) == 1 and only[0]["is_error"] and "stopped" in only[0]["content"]
    assert not scheduler.last_trace or not scheduler.last_trace.of_kind("call_started")


async def test_abort_mid_tools_stops_a_long_call_and_says_so(scheduler: nts.Scheduler, tool_log: list) -> None:
    script = [[tool_use("read", path="long", seconds=30), tool_use("write", path="after")], "never"]
    agent = Agent(ScriptedModel(script), scheduler)
    agent.subscribe(lambda e: e.kind == "call_started" and asyncio.get_running_loop().call_later(0.05, agent.abort))
    start = time.monotonic()
    result = await agent.run("go")
    validate_transcript(result.messages)
    assert time.monotonic() - start < 15
    assert result.stop_reason == "aborted_tools"
    long, after = results_of(result.messages[2])
    assert long["is_error"] and "interrupted" in long["content"]
    assert after["is_error"] and ("write", "after") not in tool_log
    assert texts_of(result.messages[2]) == [texts.INTERRUPT_NOTE_TOOLS]


@pytest.mark.parametrize("streaming", [True, False])
async def test_an_interrupt_lets_blocking_tools_finish_and_adds_no_note(scheduler: nts.Scheduler, streaming: bool) -> None:
    script = [[tool_use("read", path="keeps going", seconds=0.2), tool_use("tick", seconds=30)], "never"]
    agent = Agent(ScriptedModel(script), scheduler, streaming=streaming)
    agent.subscribe(lambda e: e.kind == "call_started" and e.tool_name == "tick" and agent.abort("interrupt"))
    result = await agent.run("go")
    validate_transcript(result.messages)
    assert result.stop_reason == "aborted_tools" and result.abort_reason == "interrupt"
    kept, ticked = results_of(result.messages[2])
    assert kept["content"] == "read keeps going" and ticked["is_error"]
    assert texts_of(result.messages[2]) == []


async def test_an_abort_signal_passed_to_run_stops_it(scheduler: nts.Scheduler) -> None:
    signal = nts.AbortSignal()
    agent = Agent(ScriptedModel([[tool_use("read", path="a", seconds=30)]]), scheduler)
    agent.subscribe(lambda e: e.kind == "call_started" and signal.abort())
    result = await agent.run("go", abort=signal)
    validate_transcript(result.messages)
    assert result.stop_reason == "aborted_tools"


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_rejected_call_stops_the_turn(scheduler: nts.Scheduler, streaming: bool) -> None:
    script = [[tool_use("reject"), tool_use("write", path="x")], "never"]
    model = ScriptedModel(script)
    result = await Agent(model, scheduler, streaming=streaming).run("go")
    validate_transcript(result.messages)
    assert result.stop_reason in ("aborted_tools", "aborted_streaming") and model.turns_played == 1
    assert all(r["is_error"] for r in results_of(result.messages[2]))


async def test_cancelling_the_run_task_leaves_every_call_answered(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel([[tool_use("read", path="a", seconds=30)]]), scheduler)
    started = asyncio.Event()
    agent.subscribe(lambda e: e.kind == "call_started" and started.set())
    task = asyncio.ensure_future(agent.run("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    validate_transcript(agent.messages)
    assert not agent.running


# -- stream failures ------------------------------------------------------------------------------
@pytest.mark.parametrize("streaming", [True, False])
async def test_a_failed_stream_without_retry_ends_with_model_error_and_a_valid_transcript(
    scheduler: nts.Scheduler, streaming: bool
) -> None:
    script = [Turn([tool_use("read", path="a"), tool_use("read", path="b"), text("tail")], fail_after=10)]
    result = await run(scheduler, script, streaming=streaming)
    assert result.stop_reason == "model_error" and result.error is not None
    assert result.error.kind == "stream_error"
    kept = results_of(result.messages[2])
    assert len(kept) == 1  # only block a finished streaming
    assert texts_of(result.messages[2])[-1].startswith("[The response stopped early")


async def test_a_failed_stream_is_retried_once_with_a_fresh_executor(scheduler: nts.Scheduler, tool_log: list) -> None:
    script = [
        Turn([tool_use("read", path="first try", seconds=5), tool_use("read", path="x")], error_event_after=9),
        [tool_use("read", path="second try")],
        "done",
    ]
    events: list[Any] = []
    result = await run(scheduler, script, stream_retries=1, on_event=events.append)
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert "first try" not in str(result.messages)  # the failed partial answer left no trace
    assert [r["content"] for r in results_of(result.messages[2])] == ["read second try"]
    failed = [e for e in events if e.kind == "stream_failed"]
    assert len(failed) == 1 and failed[0].will_retry and failed[0].error_kind == "stream_error"
    discarded = [e for e in events if e.kind == "result_event" and e.status == "cancelled"]
    assert len(discarded) == 1  # the call started by the failed answer was stopped


async def test_a_non_retryable_failure_is_not_retried(scheduler: nts.Scheduler) -> None:
    model = ScriptedModel([], strict=True)
    result = await Agent(model, scheduler, stream_retries=3).run("go")
    assert result.stop_reason == "model_error" and result.error.kind == "script" and model.turns_played == 1


async def test_a_model_that_raises_anything_ends_with_model_error(scheduler: nts.Scheduler) -> None:
    def broken(messages: list) -> Any:
        raise KeyError("oops")

    result = await Agent(ScriptedModel(broken), scheduler).run("go")
    assert result.stop_reason == "model_error" and result.error.kind == "unexpected" and "oops" in result.error.message


async def test_a_model_whose_stream_is_not_an_async_iterator_is_named(scheduler: nts.Scheduler) -> None:
    class Wrong:
        def stream(self, messages: list, **kw: Any) -> list:
            return []

    result = await Agent(Wrong(), scheduler).run("go")
    assert result.stop_reason == "model_error" and "Wrong.stream() must return an async iterator" in result.error.message


# -- construction -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"max_turns": 0}, "max_turns"), ({"max_messages": -1}, "max_messages"), ({"stream_retries": -1}, "stream_retries")],
)
def test_bad_options_are_refused_by_name(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Agent(ScriptedModel([]), **kwargs)


def test_a_model_without_stream_and_a_bad_scheduler_are_refused() -> None:
    with pytest.raises(TypeError, match="stream"):
        Agent(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Scheduler or a ToolRegistry"):
        Agent(ScriptedModel([]), "tools")  # type: ignore[arg-type]


async def test_a_registry_and_an_injected_context_are_accepted(registry: nts.ToolRegistry, tmp_path: Any) -> None:
    context = nts.ToolContext(tmp_path, options={"flag": 1})
    agent = Agent(ScriptedModel([[tool_use("read", path="a")], "ok"]), registry, context=context)
    result = await agent.run("go")
    assert result.stop_reason == "end_turn" and agent.scheduler.registry is registry
    assert agent.context.options == {"flag": 1} and agent.context.cwd == str(tmp_path.resolve())
    assert agent.scheduler.context.options == {}  # the agent's context is its own; the scheduler is unchanged


async def test_nothing_to_answer_and_a_second_concurrent_run_are_refused(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel([Turn(["slow"], delay_before_block=0.2)]), scheduler)
    with pytest.raises(ValueError, match="nothing to answer"):
        await agent.run()
    task = asyncio.ensure_future(agent.run("go"))
    await asyncio.sleep(0.05)
    with pytest.raises(RuntimeError, match="already running"):
        await agent.run("again")
    assert (await task).final_text == "slow"
    with pytest.raises(TypeError, match="prompt"):
        await agent.run(42)


async def test_an_exhausted_script_ends_the_loop_politely(scheduler: nts.Scheduler) -> None:
    result = await run(scheduler, [[tool_use("read", path="a")]])
    assert result.final_text == SCRIPT_FINISHED and result.stop_reason == "end_turn"
