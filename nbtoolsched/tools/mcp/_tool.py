"""One MCP server tool as a scheduler Tool named ``mcp__<server>__<tool>``.

``readOnlyHint`` makes it read-only and concurrency-safe; without it the tool runs
alone. Its schema is the server's own, deferred until ToolSearch loads it; its own
permission check passes the question on (so the rules, or a person, decide).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..._messages import ImageBlock, TextBlock
from pydantic import BaseModel

from ..._tool._base import Tool, ToolOutput
from ..._tool._context import ToolContext
from ._config import normalize_name
from ._schema import arguments_of, model_from_schema

if TYPE_CHECKING:
    from ._manager import McpServerConnection

__all__ = ["McpTool", "mcp_tool_name", "content_blocks"]


def mcp_tool_name(server: str, tool: str) -> str:
    return f"mcp__{normalize_name(server)}__{normalize_name(tool)}"


class McpTool(Tool[BaseModel]):
    is_mcp = True
    should_defer = True

    def __init__(self, server: "McpServerConnection", info: dict[str, Any]) -> None:
        self.server = server
        self.tool_name: str = info["name"]
        self.name = mcp_tool_name(server.name, self.tool_name)  # type: ignore[misc]
        self.description = (info.get("description") or info.get("title") or "").strip()  # type: ignore[misc]
        self.raw_schema: dict[str, Any] = info.get("inputSchema") or {"type": "object", "properties": {}}
        self.input_model = model_from_schema(self.raw_schema, self.name)  # type: ignore[misc]
        annotations = info.get("annotations") or {}
        self.annotations = annotations
        meta = info.get("_meta") or {}
        self.always_load = meta.get("anthropic/alwaysLoad") is True  # type: ignore[misc]
        hint = meta.get("anthropic/searchHint")
        self.search_hint = hint if isinstance(hint, str) else (annotations.get("title") or "")  # type: ignore[misc]

    def is_read_only(self, input: BaseModel) -> bool:
        return self.annotations.get("readOnlyHint") is True

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return self.is_read_only(input)

    def is_destructive(self, input: BaseModel) -> bool:
        return self.annotations.get("destructiveHint") is True

    def input_schema(self) -> dict[str, Any]:
        return self.raw_schema

    def prompt(self) -> str:
        return self.description or f"The {self.tool_name} tool of the MCP server {self.server.name!r}."

    async def call(self, input: BaseModel, ctx: ToolContext) -> ToolOutput:
        return await self.server.call_tool(self.tool_name, arguments_of(input), progress=ctx.progress)


def content_blocks(result: dict[str, Any]) -> list[Any]:
    """MCP result content (dumped by alias) as tool_result blocks."""
    blocks: list[Any] = [block for item in result.get("content") or [] if (block := _block(item)) is not None]
    if not blocks and result.get("structuredContent") is not None:
        blocks.append(TextBlock(json.dumps(result["structuredContent"], ensure_ascii=False)))
    return blocks


def _block(item: Any) -> Any:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "text":
        return TextBlock(str(item.get("text", "")))
    if kind == "image" and item.get("data"):
        source = {"type": "base64", "media_type": item.get("mimeType") or "image/png", "data": item["data"]}
        return ImageBlock(source=source)
    if kind == "resource":
        resource = item.get("resource") or {}
        if "text" in resource:
            return TextBlock(f"[resource {resource.get('uri', '')}]\n{resource['text']}")
        return TextBlock(f"[binary resource {resource.get('uri', '')} ({resource.get('mimeType') or 'unknown type'}) not shown]")
    if kind == "resource_link":
        return TextBlock(f"[resource link: {item.get('name') or ''} {item.get('uri', '')}]".replace("  ", " "))
    if kind == "audio":
        return TextBlock(f"[audio ({item.get('mimeType') or 'unknown type'}) not shown]")
    return TextBlock(json.dumps(item, ensure_ascii=False, default=str))
