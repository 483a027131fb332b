"""A small MCP server over HTTP for the remote-transport tests, or an HTTP server that is not one.

``python remote_server.py MODE PORT`` serves on 127.0.0.1:PORT until killed. MODE is

* ``http``: MCP over Streamable HTTP at ``/mcp``;
* ``sse``: MCP over the older HTTP+SSE transport at ``/sse``;
* ``status-NNN``: every request is answered with HTTP status NNN (``status-500``, ``status-401``);
* ``garbage``: every request is answered 200 with an HTML page, not MCP;
* ``silent``: connections are accepted and requests never answered.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Awaitable, Callable

try:  # mcp >= 2
    from mcp.server.mcpserver import Context, MCPServer as _Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP as _Server  # type: ignore[no-redef]

from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)
server = _Server("remote", log_level="WARNING")


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Repeat the text."""
    return text


@server.tool(annotations=READ_ONLY)
def header(name: str, ctx: Context) -> str:
    """The value of the HTTP request header ``name`` as the server received it."""
    headers = getattr(ctx.request_context.request, "headers", None) or {}  # the HTTP request's (a starlette Request)
    return headers.get(name, f"<no {name} header>")


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after ``seconds``."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g}"


@server.tool()
def die() -> str:
    """End the whole server process at once, mid-call."""
    os._exit(3)


Send = Callable[[dict[str, Any]], Awaitable[None]]


def not_mcp(mode: str) -> Callable[[dict[str, Any], Any, Send], Awaitable[None]]:
    """A plain ASGI app answering every request the same way (``silent``: never)."""
    status = int(mode.removeprefix("status-")) if mode.startswith("status-") else 200

    async def app(scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            return
        if mode == "silent":
            await asyncio.sleep(3600)
        body = b"<html><body>not an MCP server</body></html>" if mode == "garbage" else f"status {status}\n".encode()
        kind = b"text/html" if mode == "garbage" else b"text/plain"
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": body})

    return app


def main(mode: str, port: int) -> None:
    if mode in ("http", "sse"):
        transport = "streamable-http" if mode == "http" else "sse"
        if hasattr(server.settings, "port"):  # mcp 1.x: where to listen is a setting
            server.settings.host, server.settings.port = "127.0.0.1", port
            server.run(transport)
        else:  # mcp 2.x: an argument of run
            server.run(transport, host="127.0.0.1", port=port)
    else:
        import uvicorn

        uvicorn.run(not_mcp(mode), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
