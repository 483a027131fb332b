"""The %%toolcall body parser: every accepted shape, every rejection, and its invariants."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched._messages import ToolUseBlock
from nbtoolsched.notebook._cellparse import CellError, IdMaker, parse_cell

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
        ("- Read: {file_path: [unclosed", "cannot be read (line 1"),
        ("42", "expected a list of tool calls"),
        ("- just text", "expected a tool call"),
        ("- Read: {a: 1}\n  Grep: {b: 2}", "one key"),
        ("- Read: [1, 2]", "must be a mapping"),
        ('[{"name": "", "input": {}}]', "non-empty string"),
        ('[{"id": 5, "name": "Read", "input": {}}]', "id must be a non-empty string"),
        ("- Raed: {}", "unknown tool 'Raed'. Did you mean 'Read'"),
        ("- Raed: README.md", "unknown tool 'Raed'. Did you mean 'Read'"),  # not "the input must be a mapping"
        ("- Read: {file_path: README.md", "(line 1): a { is never closed; add the }"),
        ("- Grep: {pattern: [a, b", "(line 1): a [ is never closed; add the ]"),
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


# -- hostile or mistaken bodies: clear errors, bounded time and memory ---------------------------


def _error(body: str, ns: dict | None = None) -> str:
    with pytest.raises(CellError) as info:
        parse(body, ns)
    return str(info.value)


def test_json_nested_thousands_deep_names_the_limit_and_line():
    body = '[{"name": "Read", "input": {"x":\n' + "[" * 2000 + "]" * 2000 + "}}]"
    assert _error(body) == "the cell is nested more than 100 levels deep (line 2); tool inputs are never that deep"


def test_brackets_inside_json_strings_do_not_count_as_nesting():
    deep_text = "[" * 500 + '\\" {' * 50
    assert parse(json.dumps([{"name": "Read", "input": {"x": deep_text}}]))[0]["input"] == {"x": deep_text}


def test_yaml_nested_thousands_deep_names_the_limit_and_line():
    message = _error("- Grep: {pattern: a}\n- Read: " + "{a: " * 2000 + "1" + "}" * 2000)
    assert message == "the cell is nested more than 100 levels deep (line 2, column 401)"
    block = "- Read:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(150)) + "  " * 151 + "1\n"
    assert "nested more than 100 levels deep (line 101" in _error(block)


def test_a_self_referencing_yaml_alias_is_a_cycle():
    assert _error("- Read: {file_path: x}\n- Grep: {pattern: &a [*a]}") == (
        "the cell has an alias *a inside the value it names (a cycle) (line 2, column 23)"
    )


def test_a_yaml_alias_bomb_stops_early():
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, name in zip("abcde", "bcdef"):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    body = "- Read:\n    file_path: x\n    junk: {" + ", ".join(levels) + "}\n"  # 9**6 values once expanded
    message = _error(body)
    assert "more than 100,000 values once its aliases (*name) are expanded (line 3" in message


def test_aliases_within_the_limit_still_work_and_give_separate_inputs():
    blocks = parse("- Read: &r {file_path: a}\n- Read: *r\n")
    assert [b["input"] for b in blocks] == [{"file_path": "a"}, {"file_path": "a"}]
    assert blocks[0]["input"] is not blocks[1]["input"]


def test_a_variable_that_contains_itself_is_refused_with_its_line():
    looped: list = []
    looped.append(looped)
    itself: dict = {"file_path": "a"}
    itself["again"] = itself
    assert _error("- Read: {file_path: $l}", {"l": looped}) == (
        "$l (line 1): its value contains itself (a cyclic reference); a tool input must be plain data"
    )
    assert _error("$l", {"l": looped}).startswith("$l (line 1): its value contains itself")
    assert _error("- Grep: {pattern: x}\n- Read: $d", {"d": itself}).startswith("$d (line 2): its value contains itself")


def test_a_variable_shared_twice_is_fine_and_copied():
    opts = {"limit": 3, "models": (ToolUseBlock(id="t", name="Read"),)}
    blocks = parse("- Grep: $o\n- Grep: $o", {"o": opts})
    assert blocks[0]["input"] == blocks[1]["input"] == {"limit": 3, "models": [ToolUseBlock(id="t", name="Read").to_dict()]}
    assert blocks[0]["input"] is not opts and blocks[0]["input"] is not blocks[1]["input"]


def test_a_variable_too_large_or_too_deep_is_refused():
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert _error("- Read: {x: $deep}", {"deep": deep}) == "$deep (line 1): its value is nested more than 100 levels deep"
    big = list(range(100_001))
    assert _error("- Read: {x: $big}", {"big": big}) == "$big (line 1): its value holds more than 100,000 values"


@pytest.mark.parametrize("body", ["- Read: {n: " + "9" * 5000 + "}", '[{"name": "Read", "input": {"n": ' + "9" * 5000 + "}}]"])
def test_a_number_python_will_not_read_is_a_cell_error(body):
    assert _error(body).startswith("the cell has a value that cannot be read: Exceeds the limit (4300 digits)")


# -- the short form's one required field, YAML errors people can act on, warnings --------------------
REQUIRED = {"Read": ["file_path"], "Grep": ["pattern"], "Edit": ["file_path", "old_string", "new_string"], "Bash": ["command"]}


def test_an_unclosed_brace_is_said_in_one_short_line():
    with pytest.raises(CellError) as info:
        parse("- Read: {file_path: README.md")
    assert len(str(info.value)) < 100, str(info.value)  # it was 392 characters of YAML advice


def test_a_misspelt_short_form_call_names_the_tool_even_with_a_bare_value():
    with pytest.raises(CellError, match="Did you mean 'Read'"):
        parse_short("- Raed: README.md")


def parse_short(body: str, first_line: int = 2):
    return parse_cell(body, {}, lambda n: n in TOOLS, TOOLS, IdMaker(), required_fields=lambda n: REQUIRED[n], first_line=first_line)


def test_a_bare_value_fills_the_one_required_field():
    blocks = parse_short("- Bash: ls -la\n- Read: README.md\n- Bash: echo {a,b}\n")
    assert [b["input"] for b in blocks] == [{"command": "ls -la"}, {"file_path": "README.md"}, {"command": "echo {a,b}"}]
    with pytest.raises(CellError, match=r"Edit needs file_path, old_string, new_string"):
        parse_short("- Edit: notes.md")


@pytest.mark.parametrize("body", ["- Bash: {command: echo a: b}", "- Bash: echo a: b", "- Bash: [ -f x ] && echo y",
                                  "- Bash: {command: ls # c}"])
def test_yaml_errors_say_what_to_quote_and_count_lines_from_the_cell(body):
    with pytest.raises(CellError) as info:
        parse_short("\n- Read: README.md\n" + body)  # the magic line, a blank line, then the calls
    message = str(info.value)
    assert "(line 4," in message and "single quotes" in message and "mapping values" not in message


def test_double_quoted_escapes_and_dropped_comments_warn():
    parsed = parse_short('- Grep: "\\bTODO\\b"\n- Bash: ls # the rest\n- Grep: \'\\bkept\\b\'\n')
    assert parsed[0]["input"]["pattern"] == "\bTODO\b" and parsed[2]["input"]["pattern"] == "\\bkept\\b"
    assert [w.split(":")[0] for w in parsed.warnings] == ["line 2", "line 3"]
    with pytest.raises(CellError, match="single quotes to keep backslashes"):
        parse_short('- Grep: "\\dTODO"')
