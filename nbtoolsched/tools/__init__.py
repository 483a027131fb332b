"""Built-in tools: Bash, WebFetch, ToolSearch, Sleep, the file tools, and MCP servers.

``nbtoolsched.default_registry()`` gives a registry with all of them; MCP tools come
from a connected ``McpManager`` (``include_mcp=``), since starting servers is async.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from .._exports import publish
from .._registry import ToolRegistry
from .._tool._base import Tool
from ._bash import BashTool
from ._sleep import SleepTool
from ._toolsearch import ToolSearchTool
from ._webfetch import WebFetchTool
from .files import FILE_TOOLS, EditTool, GlobTool, GrepTool, NotebookEditTool, ReadTool, WriteTool
from .mcp._config import McpHttpServerConfig, McpServerConfig, McpSseServerConfig, McpStdioServerConfig, parse_mcp_config
from .mcp._manager import McpManager, connect_mcp_servers
from .mcp._tool import McpTool

__all__ = [
    "BUILTIN_TOOLS",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "McpHttpServerConfig",
    "McpManager",
    "McpServerConfig",
    "McpSseServerConfig",
    "McpStdioServerConfig",
    "McpTool",
    "NotebookEditTool",
    "ReadTool",
    "SleepTool",
    "ToolSearchTool",
    "WebFetchTool",
    "WriteTool",
    "builtin_tools",
    "connect_mcp_servers",
    "parse_mcp_config",
]


BUILTIN_TOOLS: tuple[type[Tool[Any]], ...] = (BashTool, WebFetchTool, ToolSearchTool, SleepTool, *FILE_TOOLS)


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool (a registry owns its tool objects)."""
    return [item() if isinstance(item, type) else item for item in BUILTIN_TOOLS]


def default_registry(
    cwd: str | os.PathLike[str] | None = None, *, include_mcp: McpManager | Tool | Iterable[Tool] | None = None
) -> ToolRegistry:
    """A registry with every built-in tool, plus MCP tools if given.

    ``include_mcp`` may be a connected ``McpManager``, a tool or an iterable of tools.
    ``cwd`` is accepted for symmetry with ``Scheduler(cwd=...)``: tools read the
    working directory from their call context, so the registry itself needs none.
    """
    registry = ToolRegistry(builtin_tools())
    for tool in _mcp_tools(include_mcp):
        registry.register(tool)
    return registry


def _mcp_tools(source: McpManager | Tool | Iterable[Tool] | None) -> Iterable[Tool]:
    if source is None:
        return ()
    tools: object = source.tools if isinstance(source, McpManager) else source
    if isinstance(tools, Tool):
        return (tools,)
    if not isinstance(tools, Iterable):
        raise TypeError(f"include_mcp must be an McpManager or an iterable of tools, got {type(source).__name__}")
    return list(tools)


publish(__name__, __all__, globals())
