from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbtoolsched._messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, parse_block

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
extra_keys = st.dictionaries(st.sampled_from(["cache_control", "citations", "x_meta"]), json_values, max_size=2)


@given(st.text(max_size=30), st.text(min_size=1, max_size=20), st.dictionaries(st.text(max_size=10), json_values, max_size=5), extra_keys)
def test_tool_use_round_trips_exactly(id_: str, name: str, input: dict[str, Any], extra: dict[str, Any]) -> None:
    raw = {"type": "tool_use", "id": id_, "name": name, "input": input, **extra}
    assert parse_block(raw).to_dict() == raw


@given(st.text(max_size=20), st.one_of(st.text(max_size=50), st.lists(st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=20)), max_size=3)), st.sampled_from([None, True, False]), extra_keys)
def test_tool_result_round_trips_exactly(tool_use_id: str, content: Any, is_error: bool | None, extra: dict[str, Any]) -> None:
    raw: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}
    if is_error is not None:
        raw["is_error"] = is_error
    assert parse_block(raw).to_dict() == raw


def test_text_and_reference_round_trip_and_unknown_types_are_kept() -> None:
    for raw in (
        {"type": "text", "text": "hi", "citations": []},
        {"type": "tool_reference", "tool_name": "mcp__git__git_log"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
    ):
        assert parse_block(raw).to_dict() == raw


def test_models_render_as_api_dicts() -> None:
    assert TextBlock("x").to_dict() == {"type": "text", "text": "x"}
    assert ToolResultBlock.make("t1", "out", is_error=True).to_dict() == {"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": True}
    assert ToolUseBlock(id="a", name="Read", input={"file_path": "x"}).to_dict()["type"] == "tool_use"
    assert Message(role="user", content=[TextBlock("x")]).to_dict() == {"role": "user", "content": [{"type": "text", "text": "x"}]}


@pytest.mark.parametrize("bad, words", [("nope", "must be an object"), ({"text": "x"}, "needs a string 'type'"), ({"type": "tool_use", "id": "a"}, "invalid tool_use block")])
def test_bad_blocks_name_the_problem(bad: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_block(bad)
