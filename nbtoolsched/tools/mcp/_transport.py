"""The SDK transport a server's config names: a child process over stdio, Streamable HTTP, or HTTP+SSE.

``open_transport`` yields the (read, write) stream pair a ``ClientSession`` runs on. It
must be entered and left by one task (the SDK's anyio scopes live inside it). The HTTP
transports send the entry's headers on every request; ``HttpStatus`` remembers the last
HTTP error a server answered, because the SDK turns some of them (a 401 or a 500 on
Streamable HTTP) into a bare JSON-RPC error that no longer says which, and ends the
connection on an answer that is not MCP at all (an HTML page), which the SDK may wait on.
Works with the mcp SDK 1.x (httpx) and 2.x (httpx2): both build their client with
``create_mcp_http_client``.
"""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, TextIO

from ._config import McpHttpServerConfig, McpServerConfig, McpStdioServerConfig

__all__ = ["HttpStatus", "open_transport"]

_HINTS = {
    401: "the server wants credentials: check the entry's headers (OAuth sign-in is not supported)",
    403: "the server refused these credentials: check the entry's headers",
    404: "nothing answers MCP at this path: check the url",
}
_MCP_CONTENT = ("application/json", "text/event-stream")  # what an MCP endpoint answers 200 with


class NotMcpResponse(Exception):
    """A 200 answer that is neither JSON nor an event stream: whatever answers, it is not MCP."""


class HttpStatus:
    """The last HTTP error a remote server answered, as a phrase."""

    def __init__(self) -> None:
        self.error: str | None = None

    async def _record(self, response: Any) -> None:
        code = response.status_code
        if code >= 400:
            text = f"HTTP {code} {response.reason_phrase}".strip()
            hint = _HINTS.get(code)
            self.error = f"{text} ({hint})" if hint else text
            return
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if code == 200 and response.request.method in ("GET", "POST") and kind not in _MCP_CONTENT:
            # the SDK would wait (mcp 1.x) or fail one request (2.x): end the connection at once
            self.error = f"HTTP 200 with content type {kind or '(none)'}, which is not MCP"
            raise NotMcpResponse(self.error)

    def client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        """The SDK's HTTP client (its default timeouts), recording error statuses.

        Its signature is the SDK's client factory's, so the SSE transport can call it too.
        """
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks = {"request": [], "response": [self._record]}
        return client


@asynccontextmanager
async def open_transport(
    config: McpServerConfig, *, cwd: str | None, errlog: TextIO | None, status: HttpStatus
) -> AsyncIterator[tuple[Any, Any]]:
    """The stream pair of the server's transport, open while the block runs."""
    if isinstance(config, McpStdioServerConfig):
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=config.command, args=config.args, env=config.env, cwd=config.cwd or cwd)
        async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
            yield read, write
    elif isinstance(config, McpHttpServerConfig):
        from mcp.client.streamable_http import streamable_http_client

        async with status.client(headers=config.headers) as client:
            async with streamable_http_client(config.url, http_client=client) as streams:
                yield streams[0], streams[1]  # mcp 1.x adds a third item, the session id getter
    else:
        from mcp.client.sse import sse_client

        async with sse_client(config.url, headers=config.headers, httpx_client_factory=status.client) as (read, write):
            yield read, write
