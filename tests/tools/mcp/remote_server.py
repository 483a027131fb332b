"""A small MCP server over HTTP for the remote-transport tests, or an HTTP server that is not one.

``python remote_server.py MODE PORT`` serves on 127.0.0.1:PORT until killed. MODE is

* ``http``: MCP over Streamable HTTP at ``/mcp``;
* ``sse``: MCP over the older HTTP+SSE transport at ``/sse``;
* ``http-list-error``: as ``http``, but the optional GET stream is refused with 405 (as the
  spec allows) and ``tools/list`` answers a JSON-RPC error;
* ``status-NNN``: every request is answered with HTTP status NNN (``status-500``, ``status-401``);
* ``garbage``: every request is answered 200 with an HTML page, not MCP;
* ``silent``: connections are accepted and requests never answered;
* ``endless-json``: a POST is answered 200 ``application/json`` with a body that never ends;
* ``endless-events``: a POST is answered 200 ``text/event-stream``, one ``data:`` line that never ends;
* ``sse-endless``: the GET event stream of HTTP+SSE is one ``data:`` line that never ends;
* ``truncated``: a POST is answered 200 ``application/json`` whose body stops short of its Content-Length.

In the MCP modes a ``tools/call`` of ``http_error`` never reaches the server: it is answered
with the HTTP status its ``status`` argument names and an HTML page, as a proxy in front of
a failing server would.
"""

from __future__ import annotations

import asyncio
import json
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


@server.tool()
def big(size: int) -> str:
    """A text of ``size`` characters."""
    return "y" * size


@server.tool()
def http_error(status: int) -> str:
    """Never runs: the HTTP layer answers this call with ``status`` (see ``intercept``)."""
    return "the call reached the server"


Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
App = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]
PAGE = b"<html><body><h1>Internal Server Error</h1>" + b"<p>upstream failed</p>" * 200 + b"</body></html>"


async def answer(send: Send, status: int, body: bytes, kind: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]})
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Receive) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def intercept(app: App, mode: str) -> App:
    """``app``, with the answers that no real MCP server gives made here (see the module's doc)."""

    async def wrapped(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "POST"):
            return await app(scope, receive, send)
        if scope["method"] == "GET":
            if mode == "http-list-error":
                return await answer(send, 405, b"", b"text/plain")
            return await app(scope, receive, send)
        body = await read_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = {}
        message = message if isinstance(message, dict) else {}
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and params.get("name") == "http_error":
            return await answer(send, int(params.get("arguments", {}).get("status", 500)), PAGE, b"text/html")
        if mode == "http-list-error" and message.get("method") == "tools/list":
            error = {"code": -32603, "message": "tool registry database is down"}
            return await answer(send, 200, json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error}).encode(), b"application/json")
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return wrapped


async def endless(receive: Receive, send: Send, kind: bytes, first: bytes, block: bytes) -> None:
    """Answer 200 with a body that goes on until the client hangs up."""
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.ensure_future(watch())
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    await send({"type": "http.response.body", "body": first, "more_body": True})
    while not gone.is_set():
        await send({"type": "http.response.body", "body": block, "more_body": True})
        await asyncio.sleep(0)
    watcher.cancel()


def not_mcp(mode: str) -> App:
    """A plain ASGI app answering every request the same way (``silent``: never)."""
    status = int(mode.removeprefix("status-")) if mode.startswith("status-") else 200

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if mode == "silent":
            await asyncio.sleep(3600)
        method = scope["method"]
        if mode in ("endless-json", "endless-events", "truncated") and method != "POST":
            return await answer(send, 405, b"", b"text/plain")
        if method == "POST":
            await read_body(receive)
        if mode == "endless-json":
            return await endless(receive, send, b"application/json", b"[", b'"xxxxxxxxxxxxxxxxxxxxxxxxxxxx",' * 30000)
        if mode == "endless-events":
            return await endless(receive, send, b"text/event-stream", b"event: message\ndata: ", b"x" * 1_000_000)
        if mode == "sse-endless":
            return await endless(receive, send, b"text/event-stream", b"data: ", b"x" * 1_000_000)
        if mode == "truncated":  # Content-Length says 500; the body stops after 10 bytes and the connection closes
            headers = [(b"content-type", b"application/json"), (b"content-length", b"500")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"jsonrpc"', "more_body": True})
            return
        body = b"<html><body>not an MCP server</body></html>" if mode == "garbage" else f"status {status}\n".encode()
        await answer(send, status, body, b"text/html" if mode == "garbage" else b"text/plain")

    return app


def main(mode: str, port: int) -> None:
    import uvicorn

    if mode in ("http", "sse", "http-list-error"):
        app = server.sse_app() if mode == "sse" else server.streamable_http_app()
        uvicorn.run(intercept(app, mode), host="127.0.0.1", port=port, log_level="warning")
    else:
        uvicorn.run(not_mcp(mode), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
