"""The server on stdin and stdout, for as long as the client keeps stdin open.

Every line the client sends is screened before the SDK reads it: a line that is not
JSON gets a JSON-RPC parse error, and one that is not a request, notification or
response object (a batch, a bare number, no method and no id) an invalid-request error,
instead of being dropped without a word or stopping the connection. stdout carries
JSON-RPC alone: ``print`` and stray writes go to stderr while the server runs.

When stdin closes (the client quit, or died) the SDK stops the requests in flight (a
prompt's run is cancelled, and with it every command it started) and then every session
is closed (its MCP servers stopped); SIGTERM does the same. Nothing is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from typing import TYPE_CHECKING, Any, cast

from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES, run_agent
from acp.stdio import stdio_streams

if TYPE_CHECKING:
    from acp.interfaces import Agent

from .._tasks import TaskOwner
from ._server import NbtoolschedAgent

__all__ = ["serve", "screen_line"]

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


async def serve(agent: NbtoolschedAgent) -> None:
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    screened = asyncio.StreamReader(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    with contextlib.redirect_stdout(sys.stderr):
        if main is not None:
            loop.add_signal_handler(signal.SIGTERM, main.cancel)
        try:
            async with TaskOwner() as tasks:
                tasks.start(_screen(reader, screened, writer), name="acp stdin")
                try:
                    # The SDK routes each method it finds on the agent and answers "method not
                    # found" for the rest, so the agent has only the methods it implements.
                    await run_agent(cast("Agent", agent), writer, screened)
                finally:
                    await agent.aclose()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)


async def _screen(source: asyncio.StreamReader, target: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while line := await _read_line(source):
            reply = screen_line(line)
            if reply is None:
                target.feed_data(line)
            else:
                writer.write((json.dumps(reply) + "\n").encode("utf-8"))
    finally:
        target.feed_eof()


async def _read_line(source: asyncio.StreamReader) -> bytes:
    """The next line, however long (b"" at the end of input)."""
    chunks = []
    while True:
        try:
            chunks.append(await source.readuntil(b"\n"))
            return b"".join(chunks)
        except asyncio.LimitOverrunError as over:
            chunks.append(await source.readexactly(over.consumed))
        except asyncio.IncompleteReadError as end:
            chunks.append(end.partial)
            return b"".join(chunks)


def screen_line(line: bytes) -> dict[str, Any] | None:
    """None for a line the SDK may read; otherwise the JSON-RPC error that answers it."""
    text = line.strip()
    if not text:
        return None
    try:
        message = json.loads(text)
    except ValueError as err:
        return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({err})")
    if not isinstance(message, dict):
        what = "a batch (a JSON array)" if isinstance(message, list) else f"a JSON {type(message).__name__}"
        return _error(None, INVALID_REQUEST, f"Invalid request: a message must be a JSON object, not {what}; "
                                             "batches are not supported")
    ident = message.get("id")
    if "id" in message and not (ident is None or isinstance(ident, (str, int)) and not isinstance(ident, bool)):
        return _error(None, INVALID_REQUEST, "Invalid request: 'id' must be a string, a number or null")
    if "method" in message and not isinstance(message["method"], str):
        return _error(ident, INVALID_REQUEST, "Invalid request: 'method' must be a string")
    if "method" not in message and "id" not in message:
        return _error(None, INVALID_REQUEST, "Invalid request: a message needs a 'method' (a request or a "
                                             "notification) or an 'id' (a response)")
    if "params" in message and not isinstance(message["params"], (dict, list, type(None))):
        return _error(ident, INVALID_REQUEST, "Invalid request: 'params' must be an object")
    return None


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
