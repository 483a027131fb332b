"""Built-in tools: Bash, WebFetch, ToolSearch, Sleep, the file tools, and MCP servers.

``default_registry()`` gives a registry with all of them; MCP tools come from a
connected ``McpManager`` (``include_mcp=``), since starting servers is async.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from .._registry import ToolRegistry
from .._tool._base import Tool
from ._bash import BashTool
from ._sleep import SleepTool
from ._toolsearch import ToolSearchTool
from ._webfetch import WebFetchTool
from .files import FILE_TOOLS, EditTool, GlobTool, GrepTool, NotebookEditTool, ReadTool, WriteTool
from .mcp._config import McpServerConfig, parse_mcp_config
from .mcp._manager import McpManager, connect_mcp_servers
from .mcp._tool import McpTool

__all__ = [
    "BUILTIN_TOOLS",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "McpManager",
    "McpServerConfig",
    "McpTool",
    "NotebookEditTool",
    "ReadTool",
    "SleepTool",
    "ToolSearchTool",
    "WebFetchTool",
    "WriteTool",
    "builtin_tools",
    "connect_mcp_servers",
    "default_registry",
    "parse_mcp_config",
]


BUILTIN_TOOLS: tuple[type[Tool[Any]], ...] = (BashTool, WebFetchTool, ToolSearchTool, SleepTool, *FILE_TOOLS)


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool (a registry owns its tool objects)."""
    return [item() if isinstance(item, type) else item for item in BUILTIN_TOOLS]


def default_registry(cwd: str | os.PathLike[str] | None = None, *, include_mcp: Any = None) -> ToolRegistry:
    """A registry with every built-in tool, plus MCP tools if given.

    ``include_mcp`` may be a connected ``McpManager`` or an iterable of tools.
    ``cwd`` is accepted for symmetry with ``Scheduler(cwd=...)``: tools read the
    working directory from their call context, so the registry itself needs none.
    """
    registry = ToolRegistry(builtin_tools())
    for tool in _mcp_tools(include_mcp):
        registry.register(tool)
    return registry


def _mcp_tools(source: Any) -> Iterable[Tool]:
    if source is None:
        return ()
    tools = getattr(source, "tools", source)
    if isinstance(tools, Tool):
        return (tools,)
    try:
        return list(tools)
    except TypeError:
        raise TypeError(f"include_mcp must be an McpManager or an iterable of tools, got {type(source).__name__}") from None
