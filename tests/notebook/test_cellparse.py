"""The %%toolcall body parser: every accepted shape, every rejection, and its invariants."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.messages import ToolUseBlock
from nbtoolsched.notebook.cellparse import CellError, IdMaker, parse_cell

TOOLS = ["Read", "Grep", "Edit", "Bash"]


def parse(body: str, ns: dict | None = None, make_id: IdMaker | None = None) -> list[dict]:
    return parse_cell(body, ns or {}, lambda n: n in TOOLS, TOOLS, make_id or IdMaker())


def test_short_yaml_form_gets_generated_ids():
    blocks = parse("- Read: {file_path: README.md}\n- Grep: {pattern: TODO, path: src}\n")
    assert blocks == [
        {"type": "tool_use", "id": "toolu_nb_0001", "name": "Read", "input": {"file_path": "README.md"}},
        {"type": "tool_use", "id": "toolu_nb_0002", "name": "Grep", "input": {"pattern": "TODO", "path": "src"}},
    ]


def test_ids_continue_across_cells_and_skip_ids_the_cell_uses():
    make = IdMaker()
    parse("- Read: {file_path: a}", make_id=make)
    blocks = parse('[{"id": "toolu_nb_0003", "name": "Read", "input": {}}, {"name": "Grep", "input": {}}]', make_id=make)
    assert [b["id"] for b in blocks] == ["toolu_nb_0003", "toolu_nb_0002"]
    assert parse("- Read: {}", make_id=make)[0]["id"] == "toolu_nb_0004"


def test_json_list_of_tool_use_blocks_keeps_ids():
    body = json.dumps([{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x"}}])
    assert parse(body)[0]["id"] == "t1"


def test_whole_assistant_message_and_content_list_skip_text_blocks():
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x"}},
        {"type": "thinking", "thinking": "...", "signature": "s"},
        {"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "y"}},
    ]}
    assert [b["id"] for b in parse(json.dumps(message))] == ["t1", "t2"]
    assert [b["id"] for b in parse(json.dumps(message["content"]))] == ["t1", "t2"]


def test_single_block_and_single_short_mapping():
    assert parse('{"name": "Read", "input": {"file_path": "a"}}')[0]["name"] == "Read"
    assert parse("Bash: {command: ls}")[0]["input"] == {"command": "ls"}
    assert parse("- Read:")[0]["input"] == {}


def test_dollar_name_is_looked_up_not_evaluated():
    ns = {"path": "src/app.py", "opts": {"limit": 3}}
    blocks = parse('- Read: {file_path: $path}\n- Grep: {pattern: "$$HOME", path: "echo $path"}\n', ns)
    assert blocks[0]["input"] == {"file_path": "src/app.py"}
    assert blocks[1]["input"] == {"pattern": "$HOME", "path": "echo $path"}  # only whole values
    with pytest.raises(CellError, match=r"no variable 'nope'"):
        parse("- Read: {file_path: $nope}", ns)
    # nothing is evaluated: an expression is just an unknown name
    with pytest.raises(CellError, match="no variable"):
        parse("- Read: {file_path: $__import__}", {})


def test_whole_body_variable_holding_blocks_or_models():
    blocks = [ToolUseBlock(id="t9", name="Read", input={"file_path": "a"})]
    assert parse("$calls", {"calls": blocks})[0]["id"] == "t9"
    assert parse("$calls", {"calls": [{"name": "Grep", "input": {}}]})[0]["name"] == "Grep"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "the cell is empty"),
        ("   \n", "the cell is empty"),
        ("[{,]", "not valid JSON"),
        ("- Read: {file_path: [unclosed", "not valid YAML"),
        ("42", "expected a list of tool calls"),
        ("- just text", "expected a tool call"),
        ("- Read: {a: 1}\n  Grep: {b: 2}", "one key"),
        ("- Read: [1, 2]", "must be a mapping"),
        ('[{"name": "", "input": {}}]', "non-empty string"),
        ('[{"id": 5, "name": "Read", "input": {}}]', "id must be a non-empty string"),
        ("- Raed: {}", "unknown tool 'Raed'. Did you mean 'Read'"),
        ('[{"id": "a", "name": "Read", "input": {}}, {"id": "a", "name": "Grep", "input": {}}]', "duplicate tool_use id 'a'"),
        ('{"role": "user", "content": []}', "role 'user'"),
        ('{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}', "no tool_use blocks"),
    ],
)
def test_bad_bodies_give_one_clear_message(body, message):
    with pytest.raises(CellError) as info:
        parse(body)
    assert message in str(info.value)
    assert "\n" not in str(info.value).split(";")[0]  # the first clause is one line


names = st.sampled_from(TOOLS)
values = st.one_of(st.integers(), st.text(max_size=20).filter(lambda s: not s.startswith("$")), st.booleans(), st.none())
inputs = st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), values, max_size=4)


@settings(max_examples=120, deadline=None)
@given(calls=st.lists(st.tuples(names, inputs, st.booleans()), min_size=1, max_size=8))
def test_any_valid_list_round_trips_with_unique_ids(calls):
    raw = [{"name": n, "input": i, **({"id": f"given_{k}"} if with_id else {})} for k, (n, i, with_id) in enumerate(calls)]
    blocks = parse(json.dumps(raw))
    assert [b["name"] for b in blocks] == [c[0] for c in calls]
    assert [b["input"] for b in blocks] == [c[1] for c in calls]
    ids = [b["id"] for b in blocks]
    assert len(set(ids)) == len(ids)
    assert all(b["type"] == "tool_use" for b in blocks)


@settings(max_examples=200, deadline=None)
@given(body=st.text(max_size=80))
def test_arbitrary_text_either_parses_or_raises_cell_error(body):
    try:
        blocks = parse(body)
    except CellError as err:
        assert str(err)
    else:
        assert blocks and all(b["name"] in TOOLS for b in blocks)
