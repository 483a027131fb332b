"""ScriptedModel: deterministic streams from data, delays, failures, functions of the conversation."""

from __future__ import annotations

import time

import pytest

from nbtoolsched.models import SCRIPT_FINISHED, ModelError, ScriptedModel, Turn, collect, text, tool_use


async def _events(model: ScriptedModel, messages: list | None = None) -> list[dict]:
    return [e async for e in model.stream(messages or [{"role": "user", "content": "go"}])]


async def test_a_turn_streams_in_the_api_shapes_with_deterministic_ids() -> None:
    script = [Turn([text("hi"), tool_use("Read", path="a.py")], input_deltas=5)]
    first, second = await _events(ScriptedModel(script)), await _events(ScriptedModel(script))
    assert first == second
    kinds = [e["type"] for e in first]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert sum(e.get("delta", {}).get("type") == "input_json_delta" for e in first) == 5
    answer = await collect(ScriptedModel(script).stream([]))
    assert answer.content()[1] == {"type": "tool_use", "id": "toolu_001_01", "name": "Read", "input": {"path": "a.py"}}
    assert answer.stop_reason == "tool_use" and answer.message_id == "msg_scripted_001"


async def test_an_explicit_id_and_stop_reason_are_kept() -> None:
    model = ScriptedModel([Turn([tool_use("Read", {"path": "a"}, id="toolu_mine")], stop_reason="max_tokens")])
    answer = await collect(model.stream([]))
    assert answer.content()[0]["id"] == "toolu_mine" and answer.stop_reason == "max_tokens"


async def test_running_out_of_turns_answers_script_finished() -> None:
    model = ScriptedModel(["only turn"])
    assert (await collect(model.stream([]))).content() == [{"type": "text", "text": "only turn"}]
    last = await collect(model.stream([]))
    assert last.content() == [{"type": "text", "text": SCRIPT_FINISHED}] and last.stop_reason == "end_turn"
    assert model.turns_played == 2


async def test_strict_mode_raises_a_script_error_instead() -> None:
    model = ScriptedModel([], strict=True)
    with pytest.raises(ModelError) as caught:
        await _events(model)
    assert caught.value.kind == "script" and "no turn 1" in caught.value.message


async def test_a_function_script_answers_the_conversation_so_far() -> None:
    def answer(messages: list[dict]) -> object:
        if len(messages) > 2:
            return None
        return [tool_use("Echo", said=messages[-1]["content"])]

    model = ScriptedModel(answer)
    first = await collect(model.stream([{"role": "user", "content": "ping"}], tools=[{"name": "Echo"}], system="sys"))
    assert first.content()[0]["input"] == {"said": "ping"}
    assert model.calls[0].tools == [{"name": "Echo"}] and model.calls[0].system == "sys"
    done = await collect(model.stream([{"role": "user", "content": "a"}] * 3))
    assert done.content()[0]["text"] == SCRIPT_FINISHED


async def test_the_model_keeps_its_own_copy_of_what_it_was_shown() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "a"}]}]
    model = ScriptedModel(["ok"])
    await _events(model, messages)
    messages[0]["content"].append({"type": "text", "text": "changed later"})
    assert len(model.calls[0].messages[0]["content"]) == 1


async def test_fail_after_raises_mid_stream_after_exactly_that_many_events() -> None:
    model = ScriptedModel([Turn([text("abc"), tool_use("Read")], fail_after=4)])
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in model.stream([]):
            seen.append(event)
    assert len(seen) == 4 and caught.value.kind == "stream_error" and caught.value.retryable


async def test_error_event_after_sends_an_error_event_and_ends() -> None:
    events = await _events(ScriptedModel([Turn(["abc"], error_event_after=2)]))
    assert len(events) == 3 and events[-1]["type"] == "error"


async def test_delays_are_spent_before_blocks_and_deltas() -> None:
    model = ScriptedModel([Turn(["ab", "cd"], delay_before_block=0.05, delay_per_delta=0.02, text_deltas=2)])
    start = time.monotonic()
    await _events(model)
    assert time.monotonic() - start >= 2 * 0.05 + 4 * 0.02 - 0.01  # a lower bound only: never timing-tight


@pytest.mark.parametrize(
    ("script", "error", "words"),
    [
        ([[{"type": "image"}]], ValueError, "'text' or 'tool_use'"),
        ([[{"type": "tool_use", "input": {}}]], ValueError, "non-empty string 'name'"),
        ([[{"type": "tool_use", "name": "X", "input": [1]}]], ValueError, "must be a dict"),
        ([[{"type": "text"}]], ValueError, "string 'text'"),
        ([[3]], TypeError, "got int"),
        ([42], TypeError, "got int"),
    ],
)
def test_a_bad_script_is_refused_up_front_with_a_clear_error(script: list, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        ScriptedModel(script)


@pytest.mark.parametrize(("field", "value"), [("delay_before_block", -1), ("input_deltas", 0), ("text_deltas", 0)])
def test_bad_turn_settings_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        Turn(["x"], **{field: value})
