"""A pydantic model from an MCP tool's JSON ``inputSchema``.

Permissive on purpose: it checks what the model most often gets wrong (missing
required fields, basic types, enum values, unexpected fields when the schema forbids
them) and leaves deeper checks to the server. Property names that are not valid
Python identifiers travel as aliases, so the arguments go out exactly as named.
"""

from __future__ import annotations

import keyword
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["model_from_schema", "arguments_of"]

_SIMPLE: dict[str, Any] = {"string": str, "integer": int, "boolean": bool, "null": type(None), "object": dict[str, Any]}


def model_from_schema(schema: Any, model_name: str) -> type[BaseModel]:
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    extra = "forbid" if schema.get("additionalProperties") is False else "allow"
    fields: dict[str, Any] = {}
    for index, (prop, sub) in enumerate(properties.items()):
        annotation = _annotation(sub if isinstance(sub, dict) else {})
        field_name = prop if _usable(prop) else f"field_{index}"
        if prop in required:
            fields[field_name] = (annotation, Field(..., alias=prop))
        else:
            fields[field_name] = (Optional[annotation], Field(None, alias=prop))
    config = ConfigDict(extra=extra, populate_by_name=False, protected_namespaces=())  # type: ignore[typeddict-item]
    return create_model(_class_name(model_name), __config__=config, **fields)


def arguments_of(parsed: BaseModel) -> dict[str, Any]:
    """The arguments to send: only what the model gave, under the schema's own names."""
    return parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _annotation(schema: dict[str, Any]) -> Any:
    if "const" in schema and _literal_ok([schema["const"]]):
        return Literal[schema["const"]]
    if isinstance(schema.get("enum"), list) and schema["enum"] and _literal_ok(schema["enum"]):
        return Literal[tuple(schema["enum"])]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union([_annotation(o if isinstance(o, dict) else {}) for o in options])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_type(k, schema) for k in kind])
    return _type(kind, schema)


def _type(kind: Any, schema: dict[str, Any]) -> Any:
    if kind == "number":
        return Union[int, float]
    if kind == "array":
        items = schema.get("items")
        return list[_annotation(items)] if isinstance(items, dict) else list[Any]  # type: ignore[misc]
    return _SIMPLE.get(kind, Any) if isinstance(kind, str) else Any


def _union(options: list[Any]) -> Any:
    if any(o is Any for o in options):
        return Any
    unique = list(dict.fromkeys(options))
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]


def _literal_ok(values: list[Any]) -> bool:
    return all(isinstance(v, (str, int, bool)) or v is None for v in values)


def _usable(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_") and not hasattr(BaseModel, name)


def _class_name(name: str) -> str:
    cleaned = "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_") if part)
    return (cleaned or "Mcp") + "Input"
