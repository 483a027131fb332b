"""MCP pieces that need no server: configuration, input models from JSON schema, content mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from nbtoolsched._messages import ImageBlock, TextBlock
from nbtoolsched.tools.mcp._config import McpConfigError, parse_mcp_config
from nbtoolsched.tools.mcp._schema import arguments_of, model_from_schema
from nbtoolsched.tools.mcp._tool import content_blocks, mcp_tool_name

# -- configuration ----------------------------------------------------------------------------


def test_accepts_mcp_servers_wrapper_or_bare_dict() -> None:
    entry = {"command": "python", "args": ["-m", "srv"], "env": {"A": "1"}}
    assert parse_mcp_config({"mcpServers": {"s": entry}})["s"].args == ["-m", "srv"]
    assert parse_mcp_config({"s": entry})["s"].env == {"A": "1"}


def test_reads_a_json_file(tmp_path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}))
    assert parse_mcp_config(path)["git"].command == "uvx"


def test_expands_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTS_TOKEN", "secret")
    monkeypatch.delenv("NTS_MISSING", raising=False)
    cfg = parse_mcp_config({"s": {"command": "srv", "args": ["${NTS_TOKEN}", "${NTS_MISSING:-fallback}"], "env": {"T": "${NTS_TOKEN}"}}})
    assert cfg["s"].args == ["secret", "fallback"] and cfg["s"].env == {"T": "secret"}


@pytest.mark.parametrize(
    "config, needle",
    [
        ({"s": {"args": []}}, "'s': command"),
        ({"s": {"command": "   "}}, "'s': command"),
        ({"s": {"command": "x", "args": "not-a-list"}}, "'s': args"),
        ({"s": {"type": "ws", "url": "wss://example.com/mcp"}}, "transport 'ws' is not supported"),
        ({"s": "python server.py"}, "must be an object"),
        ({"mcpServers": ["a"]}, "'mcpServers' must be an object"),
        ("/no/such/file.json", "cannot read MCP config"),
    ],
)
def test_bad_configs_name_the_problem(config: Any, needle: str) -> None:
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config(config)
    assert needle in str(err.value)


def test_tool_names_are_normalized() -> None:
    assert mcp_tool_name("my server", "do.it") == "mcp__my_server__do_it"


# -- input models ---------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "repo_path": {"type": "string"},
        "max_count": {"type": "integer", "default": 10},
        "mode": {"enum": ["fast", "slow"]},
        "files": {"type": "array", "items": {"type": "string"}},
        "ratio": {"type": "number"},
        "file-name": {"type": "string"},
        "class": {"type": "boolean"},
        "model_config": {"type": "string"},
        "either": {"type": ["string", "null"]},
    },
    "required": ["repo_path"],
    "additionalProperties": False,
}


def test_required_types_enums_and_extras_are_checked() -> None:
    model = model_from_schema(SCHEMA, "mcp__git__x")
    with pytest.raises(ValidationError) as err:
        model.model_validate({"max_count": "many", "mode": "medium", "files": [1], "bogus": 1})
    problems = {(e["loc"][0], e["type"]) for e in err.value.errors()}
    assert ("repo_path", "missing") in problems
    assert ("max_count", "int_parsing") in problems
    assert ("mode", "literal_error") in problems
    assert ("bogus", "extra_forbidden") in problems


def test_arguments_keep_the_schema_names_and_only_what_was_given() -> None:
    model = model_from_schema(SCHEMA, "mcp__git__x")
    given_args = {"repo_path": "/r", "file-name": "a b", "class": True, "model_config": "c", "ratio": 2, "either": None}
    assert arguments_of(model.model_validate(given_args)) == given_args


def test_extra_fields_pass_when_the_schema_allows_them() -> None:
    model = model_from_schema({"type": "object", "properties": {"a": {"type": "string"}}}, "t")
    assert arguments_of(model.model_validate({"a": "x", "b": [1]})) == {"a": "x", "b": [1]}


def test_a_missing_or_odd_schema_gives_a_permissive_model() -> None:
    for schema in (None, {}, {"type": "object", "properties": "nonsense"}, {"properties": {"x": "not a schema"}}):
        model = model_from_schema(schema, "t")
        assert arguments_of(model.model_validate({"x": 1})) == {"x": 1}


_PROPS = {
    "string": st.text(max_size=10),
    "integer": st.integers(-10**6, 10**6),
    "boolean": st.booleans(),
    "number": st.one_of(st.integers(-1000, 1000), st.floats(allow_nan=False, allow_infinity=False)),
    "array": st.lists(st.text(max_size=5), max_size=3),
}


@st.composite
def schema_and_value(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True), min_size=1, max_size=5, unique=True))
    props, value, required = {}, {}, []
    for name in names:
        kind = draw(st.sampled_from(sorted(_PROPS)))
        props[name] = {"type": kind, "items": {"type": "string"}} if kind == "array" else {"type": kind}
        if draw(st.booleans()):
            required.append(name)
            value[name] = draw(_PROPS[kind])
        elif draw(st.booleans()):
            value[name] = draw(_PROPS[kind])
    return {"type": "object", "properties": props, "required": required}, value


@settings(max_examples=80, deadline=None)
@given(schema_and_value())
def test_valid_arguments_round_trip_unchanged(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    schema, value = pair
    model = model_from_schema(schema, "mcp__s__t")
    out = arguments_of(model.model_validate(value))
    assert out == value
    assert [type(v) for v in out.values()] == [type(v) for v in value.values()]


@settings(max_examples=60, deadline=None)
@given(schema_and_value())
def test_dropping_a_required_argument_is_always_caught(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    schema, value = pair
    model = model_from_schema(schema, "mcp__s__t")
    for name in schema["required"]:
        with pytest.raises(ValidationError):
            model.model_validate({k: v for k, v in value.items() if k != name})


# -- content ---------------------------------------------------------------------------------------


def test_content_blocks_map_text_images_resources_and_structured_content() -> None:
    blocks = content_blocks({"content": [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
        {"type": "resource_link", "uri": "file:///b", "name": "b"},
    ]})
    assert isinstance(blocks[0], TextBlock) and blocks[0].text == "hello"
    assert isinstance(blocks[1], ImageBlock) and blocks[1].source == {"type": "base64", "media_type": "image/jpeg", "data": "aGk="}
    assert "body" in blocks[2].text and "file:///b" in blocks[3].text
    assert content_blocks({"content": [], "structuredContent": {"n": 1}})[0].text == '{"n": 1}'
