"""Turning pydantic's errors into sentences a model can act on."""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import ValidationError

from ._texts import wrap_error

__all__ = ["describe_validation_error", "schema_not_sent_hint", "invalid_input_text"]

_JSON_NAMES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    list: "array",
    tuple: "array",
    dict: "object",
    type(None): "null",
}

_EXPECTED = {
    "string": "string",
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "dict": "object",
    "model": "object",
    "literal": "one of the allowed values",
    "enum": "one of the allowed values",
    "none": "null",
}


def _path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "input"


def _received(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _expected(error_type: str) -> str:
    head = error_type.split("_")[0]
    return _EXPECTED.get(head, error_type.replace("_", " "))


def describe_validation_error(tool_name: str, err: ValidationError) -> str:
    """One line per problem: missing, unexpected, or wrong-typed fields, each named."""
    lines: list[str] = []
    for issue in err.errors():
        kind = issue["type"]
        where = _path(issue["loc"])
        if kind == "missing":
            lines.append(f"The required parameter `{where}` is missing")
        elif kind == "extra_forbidden":
            lines.append(f"An unexpected parameter `{where}` was provided")
        elif kind.endswith("_type") or kind.endswith("_parsing") or kind in ("model_attributes_type",):
            lines.append(
                f"The parameter `{where}` should be {_article(_expected(kind))} but {_article(_received(issue['input']))} was given"
            )
        else:
            lines.append(f"The parameter `{where}` is invalid: {issue['msg']}")
    if not lines:
        return str(err)
    noun = "problem" if len(lines) == 1 else "problems"
    return f"{tool_name} could not run because of the following {noun}:\n" + "\n".join(lines)


def _article(word: str) -> str:
    if word.startswith("one of") or word == "null":
        return word
    return ("an " if word[0] in "aeiou" else "a ") + word


def schema_not_sent_hint(tool_name: str) -> str:
    return (
        "\n\nThis tool's schema has not been loaded into the conversation, so its typed parameters "
        "(numbers, booleans, arrays) were probably sent as strings. Load it first: call ToolSearch "
        f'with query "select:{tool_name}", then retry this call.'
    )


def invalid_input_text(tool_name: str, err: ValidationError, hint: str = "") -> str:
    return wrap_error(f"InputValidationError: {describe_validation_error(tool_name, err)}{hint}")
