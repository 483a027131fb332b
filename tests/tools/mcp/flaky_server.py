"""A tiny MCP server for failure tests: one tool answers, one hangs, one kills the process.

Run as ``python flaky_server.py``; it speaks MCP over stdio.
"""

from __future__ import annotations

import asyncio
import os
import sys

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as _Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef]

from mcp.types import ToolAnnotations

server = _Server("flaky")
READ_ONLY = ToolAnnotations(readOnlyHint=True)


@server.tool(annotations=READ_ONLY)
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return " ".join([text] * times)


@server.tool(annotations=READ_ONLY)
async def hang(seconds: float = 3600) -> str:
    """Never answer (within any test's patience)."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool()
def crash(code: int = 3) -> str:
    """Exit the whole server process at once, mid-call."""
    sys.stdout.flush()
    os._exit(code)


@server.tool()
def fail(message: str) -> str:
    """Raise, so the server answers with isError."""
    raise ValueError(message)


if __name__ == "__main__":
    server.run()
