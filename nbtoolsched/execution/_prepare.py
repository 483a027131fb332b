"""Checking a batch of tool_use blocks once, before anything runs.

Each block is looked at exactly once: its shape, its tool, its input. The result feeds
both the partition (is it safe to run beside others?) and the pipeline (run it), so no
input is validated twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from .._messages import Block, ToolReferenceBlock
from .._registry import ToolRegistry
from .._tool._abort import INTERRUPT
from .._tool._base import Tool
from ._texts import call_description, no_such_tool, wrap_error
from ._validation import invalid_input_text, schema_not_sent_hint

__all__ = ["PreparedCall", "prepare_call", "prepare_calls", "discovered_tools", "is_safe"]


@dataclass(slots=True)
class PreparedCall:
    index: int
    tool_use_id: str
    name: str
    input: dict[str, Any]
    tool: Tool | None = None
    parsed: BaseModel | None = None
    error: str | None = None  # the finished error text when the call cannot run at all
    safe: bool = False

    @property
    def description(self) -> str:
        return call_description(self.name, self.input)

    @property
    def interrupt_behavior(self) -> str:
        try:
            return self.tool.interrupt_behavior if self.tool is not None else "block"
        except (Exception, SystemExit):
            return "block"

    def stops_for(self, reason: str) -> bool:
        """An interrupt (a new user message) stops only tools that declared "cancel"."""
        return reason != INTERRUPT or self.interrupt_behavior == "cancel"


def discovered_tools(messages: Iterable[object]) -> set[str]:
    """Names of deferred tools whose schemas a ToolSearch result already loaded (in
    messages as dicts or models; anything else is passed over)."""
    found: set[str] = set()
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if not isinstance(content, list):
            continue
        for block in content:
            _collect_references(block, found)
    return found


def _collect_references(block: Any, found: set[str]) -> None:
    if isinstance(block, ToolReferenceBlock):
        found.add(block.tool_name)
        return
    if isinstance(block, Block):
        block = block.to_dict()
    if not isinstance(block, dict):
        return
    if block.get("type") == "tool_reference" and isinstance(block.get("tool_name"), str):
        found.add(block["tool_name"])
    elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        for inner in block["content"]:
            _collect_references(inner, found)


def is_safe(tool: Tool, parsed: BaseModel) -> bool:
    """Fail closed: a tool that raises while answering (or calls ``sys.exit``) is not safe."""
    try:
        return bool(tool.is_concurrency_safe(parsed))
    except (Exception, SystemExit):
        return False


def prepare_call(
    index: int,
    block: object,
    registry: ToolRegistry,
    *,
    seen_ids: set[str] | None = None,
    discovered: set[str] | None = None,
    tools: "ToolsByName | None" = None,
) -> PreparedCall:
    """One block checked: shape, id, tool, input. Anything may come in (a model's answer):
    what is not a tool_use block becomes a call with an error, never an exception."""
    if isinstance(block, Block):
        block = block.to_dict()
    if not isinstance(block, dict):
        return _bad(index, f"block {index} is a {type(block).__name__}, not a tool_use object")
    if block.get("type", "tool_use") != "tool_use":
        return _bad(index, f"block {index} has type {block.get('type')!r}; only tool_use blocks can be run")
    tool_use_id, name, raw = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        return _bad(index, f"block {index} has no string 'id'; every tool_use needs a unique id")
    if seen_ids is not None:
        if tool_use_id in seen_ids:
            return _bad(index, f"block {index} repeats the id {tool_use_id!r}; ids must be unique", tool_use_id)
        seen_ids.add(tool_use_id)
    if not isinstance(name, str) or not name:
        return _bad(index, f"block {index} ({tool_use_id}) has no string 'name'", tool_use_id)
    if not isinstance(raw, dict):
        what = "no 'input'" if raw is None else f"an input of type {type(raw).__name__}"
        return PreparedCall(
            index, tool_use_id, name, {}, error=wrap_error(f"InputValidationError: {name} got {what}; input must be an object")
        )
    tool = registry.get(name) if tools is None else tools[name]
    if tool is None:
        return PreparedCall(index, tool_use_id, name, raw, error=no_such_tool(name))
    try:
        parsed = tool.input_model.model_validate(raw)
    except ValidationError as err:
        hint = ""
        if discovered is not None and registry.is_deferred(tool) and tool.name not in discovered and "ToolSearch" in registry:
            hint = schema_not_sent_hint(tool.name)
        return PreparedCall(index, tool_use_id, name, raw, tool=tool, error=invalid_input_text(tool.name, err, hint))
    return PreparedCall(index, tool_use_id, name, raw, tool=tool, parsed=parsed, safe=is_safe(tool, parsed))


def prepare_calls(blocks: Iterable[object], registry: ToolRegistry, *, discovered: set[str] | None = None) -> list[PreparedCall]:
    seen: set[str] = set()
    tools = ToolsByName(registry)
    return [prepare_call(i, b, registry, seen_ids=seen, discovered=discovered, tools=tools) for i, b in enumerate(blocks)]


class ToolsByName(dict[str, "Tool | None"]):
    """The registry's answer for each name, asked once per batch: a batch is prepared
    in one go, with no await in between, so the registry cannot change meanwhile."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__()
        self.registry = registry

    def __missing__(self, name: str) -> "Tool | None":
        found = self[name] = self.registry.get(name)
        return found


def _bad(index: int, problem: str, tool_use_id: str | None = None) -> PreparedCall:
    return PreparedCall(index, tool_use_id or f"invalid_block_{index}", "?", {}, error=wrap_error(f"Error: {problem}"))
