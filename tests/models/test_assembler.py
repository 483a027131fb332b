"""StreamAssembler: blocks come out the moment they stop; broken streams fail clearly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched._messages import TextBlock, ToolUseBlock
from nbtoolsched.models import ModelError, StreamAssembler, _stream_events as ev


def _answer() -> list[dict]:
    tool = {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"path": "x.py", "limit": 5}}
    return [
        ev.message_start("msg_1"),
        *ev.block_events(0, {"type": "text", "text": "Reading it."}, 3),
        *ev.block_events(1, tool, 6),
        *ev.block_events(2, {"type": "text", "text": "and more"}, 2),
        ev.message_delta("tool_use", 12),
        ev.message_stop(),
    ]


def test_each_block_is_reported_when_its_stop_arrives_and_not_before() -> None:
    assembler = StreamAssembler()
    reported = [(i, assembler.feed(e)) for i, e in enumerate(_answer())]
    finished = [(i, f) for i, f in reported if f is not None]
    stops = [i for i, e in enumerate(_answer()) if e["type"] == "content_block_stop"]
    assert [i for i, _ in finished] == stops
    tool = finished[1][1]
    assert isinstance(tool.block, ToolUseBlock) and tool.is_tool_use
    assert tool.block.input == {"path": "x.py", "limit": 5} and tool.input_error is None
    assert isinstance(finished[0][1].block, TextBlock) and finished[0][1].block.text == "Reading it."
    assert assembler.stop_reason == "tool_use" and assembler.done and assembler.message_id == "msg_1"
    assert assembler.usage["output_tokens"] == 12
    assert [b["type"] for b in assembler.content()] == ["text", "tool_use", "text"]


def test_an_unfinished_block_is_left_out_of_the_content() -> None:
    assembler = StreamAssembler()
    for event in _answer()[:-8]:  # cut inside the tool block
        assembler.feed(event)
    assert [b["type"] for b in assembler.content()] == ["text"]
    assert assembler.unfinished == [1]


@pytest.mark.parametrize(
    ("raw", "words"),
    [('{"path": "x', "not valid JSON"), ("[1, 2]", "must be a JSON object, got list"), ("42", "got int")],
)
def test_bad_tool_input_json_becomes_an_input_error_not_a_crash(raw: str, words: str) -> None:
    assembler = StreamAssembler()
    block = {"type": "tool_use", "id": "toolu_b", "name": "Read", "raw_json": raw}
    finished = [assembler.feed(e) for e in ev.block_events(0, block, 3)][-1]
    assert finished is not None and finished.block.input == {}
    assert words in (finished.input_error or "") and repr(raw)[:6] in finished.input_error


def test_a_tool_block_without_deltas_keeps_its_start_input() -> None:
    assembler = StreamAssembler()
    assembler.feed(ev.block_start(0, {"type": "tool_use", "id": "t", "name": "Now"}))
    finished = assembler.feed(ev.block_stop(0))
    assert finished is not None and finished.block.input == {} and finished.input_error is None


def test_thinking_and_signature_deltas_build_a_thinking_block() -> None:
    assembler = StreamAssembler()
    assembler.feed(ev.block_start(0, {"type": "thinking", "thinking": ""}))
    assembler.feed({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}})
    assembler.feed({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}})
    assembler.feed({"type": "ping"})
    assembler.feed({"type": "some_future_event"})
    assert assembler.feed(ev.block_stop(0)).block.to_dict() == {"type": "thinking", "thinking": "hm", "signature": "sig"}


def test_an_error_event_mid_stream_is_a_stream_error() -> None:
    assembler = StreamAssembler()
    for event in _answer()[:4]:
        assembler.feed(event)
    with pytest.raises(ModelError) as caught:
        assembler.feed(ev.error_event("overloaded_error", "Overloaded"))
    assert caught.value.kind == "stream_error" and caught.value.error_type == "overloaded_error"
    assert caught.value.events_before == 4 and caught.value.retryable


def test_an_error_event_before_anything_else_keeps_its_api_kind() -> None:
    with pytest.raises(ModelError) as caught:
        StreamAssembler().feed(ev.error_event("invalid_request_error", "bad"))
    assert caught.value.kind == "invalid_request" and not caught.value.retryable


@pytest.mark.parametrize(
    ("events", "words"),
    [
        ([ev.text_delta(3, "x")], "block 3, which is not open"),
        ([ev.block_stop(0)], "block 0, which is not open"),
        ([ev.block_start(0, {"type": "text"}), ev.block_start(0, {"type": "text"})], "started twice"),
        ([{"type": "content_block_start", "index": 0}], "no content_block"),
        ([{"type": "content_block_delta", "index": "0"}], "no integer index"),
        (["not a dict"], "must be a dict, got str"),
    ],
)
def test_events_that_do_not_fit_together_raise_bad_stream(events: list, words: str) -> None:
    assembler = StreamAssembler()
    with pytest.raises(ModelError) as caught:
        for event in events:
            assembler.feed(event)
    assert caught.value.kind == "bad_stream" and words in caught.value.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(tool_input=st.dictionaries(st.text(max_size=10), json_values, max_size=5), pieces=st.integers(1, 40))
def test_any_input_split_into_any_number_of_deltas_comes_back_equal(tool_input: dict, pieces: int) -> None:
    assembler = StreamAssembler()
    block = {"type": "tool_use", "id": "toolu_h", "name": "T", "input": tool_input}
    finished = [assembler.feed(e) for e in ev.block_events(0, block, pieces)][-1]
    assert finished is not None and finished.input_error is None
    assert finished.block.input == json.loads(json.dumps(tool_input))
