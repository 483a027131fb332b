"""The SDK transport a server's config names: a child process over stdio, Streamable HTTP, or HTTP+SSE.

``open_transport`` yields the (read, write) stream pair a ``ClientSession`` runs on. It
must be entered and left by one task (the SDK's anyio scopes live inside it). The HTTP
transports send the entry's headers on every request, through a client whose ``send``
an ``HttpGuard`` checks before the SDK sees the answer:

* an HTTP error (or an answer that is not MCP, or none) to a JSON-RPC request becomes a
  JSON-RPC error for that request, saying the status: the SDK would end the whole
  connection on it (mcp 1.x, Streamable HTTP), or stop sending (HTTP+SSE, where the
  error is handed to the session instead), or wait for an answer that never comes;
* a body is read at most up to a limit (``HANDSHAKE_LIMIT`` for the handshake and the
  listing, ``CALL_LIMIT`` for a ``tools/call``); so is one event of an event stream;
* a body cut short against its Content-Length fails its request at once.

Only the statuses of the requests that matter are remembered for the startup error: the
POSTs, and the event stream of HTTP+SSE, not Streamable HTTP's optional GET stream (a
405 there is normal). The httpx and mcp loggers get a filter that redacts the secrets of
every open connection (``secrets()`` of its config) from their records.
Works with the mcp SDK 1.x (httpx) and 2.x (httpx2): both build their client with the
same ``httpx`` API.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import sys
from contextlib import aclosing, asynccontextmanager
from typing import Any, AsyncIterator, Callable, TextIO

from ._config import McpHttpServerConfig, McpServerConfig, McpStdioServerConfig

__all__ = [
    "HttpGuard", "open_transport", "answered", "status_phrase", "redact", "HANDSHAKE_LIMIT", "CALL_LIMIT", "TooLarge",
    "NotMcpResponse",
]

MiB = 1024 * 1024
HANDSHAKE_LIMIT = 4 * MiB  # one answer to initialize, tools/list or another request that is no call
CALL_LIMIT = 32 * MiB  # one answer to a tools/call: what the scheduler's models take as one block
SMALL_LIMIT = 64 * 1024  # a body nobody reads: an error page, an "Accepted"
_HINTS = {
    401: "the server wants credentials: check the entry's headers (OAuth sign-in is not supported)",
    403: "the server refused these credentials: check the entry's headers",
}
_JSON, _SSE = "application/json", "text/event-stream"
_MCP_CONTENT = (_JSON, _SSE)  # what an MCP endpoint answers 200 with
_DECODED = ("content-length", "content-encoding", "transfer-encoding")  # not true of a body read and decoded
_LOGGERS = ("httpx", "httpx2", "httpcore", "mcp")
_SECRETS: dict[int, tuple[str, ...]] = {}  # an open connection's guard -> its secrets


class NotMcpResponse(Exception):
    """A 200 answer that is neither JSON nor an event stream: whatever answers, it is not MCP."""


class TooLarge(Exception):
    """An answer, or one event of a stream, larger than its limit."""


def status_phrase(code: int, reason: str = "", *, method: str | None = None) -> str:
    """``HTTP 401 Unauthorized (hint)``: an HTTP status as the error messages say it."""
    text = f"HTTP {code} {reason}".strip()
    hint = _HINTS.get(code)
    if code == 404:
        hint = "nothing answers MCP at this path: check the url" if method in (None, "initialize") else (
            "the server no longer knows this session (it may have restarted)"
        )
    return f"{text} ({hint})" if hint else text


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each secret (longest first) replaced by ``***``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _size(limit: int) -> str:
    return f"{limit // MiB} MB" if limit >= MiB else f"{limit // 1024} KB"


class HttpGuard:
    """One remote server's HTTP: the client the SDK uses, and what went wrong on it."""

    def __init__(self, kind: str = "http", secrets: tuple[str, ...] = ()) -> None:
        self.kind = kind  # "http" (Streamable HTTP) or "sse"
        self.secrets = secrets
        self.error: str | None = None  # the last failure of a request that matters: "the server answered ..."
        self.phrases: set[str] = set()  # the JSON-RPC error messages the guard made up
        self.broken: str | None = None  # why the guard ended an event stream
        self.call_limit = CALL_LIMIT  # read when the guard is made (a test may lower the limits)
        self.handshake_limit = HANDSHAKE_LIMIT
        self.stream_limit = self.handshake_limit  # one event on the HTTP+SSE stream: call_limit once connected
        self.inject: Callable[[Any], None] | None = None  # hands the session a message (HTTP+SSE)
        # called when the HTTP+SSE event stream ends by itself or is refused: the session is dead (the
        # SDK may not say so: mcp 1.x, still connecting, blocks handing the error to a session not yet there)
        self.on_lost: Callable[[], None] | None = None

    def client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        """The SDK's HTTP client, with its default timeouts, whose answers this guard checks.

        Its signature is the SDK's client factory's, so the SSE transport can call it too.
        """
        from mcp.shared import _httpx_utils as utils

        http = _http()
        if timeout is None:
            timeout = http.Timeout(utils.MCP_DEFAULT_TIMEOUT, read=utils.MCP_DEFAULT_SSE_READ_TIMEOUT)
        kwargs: dict[str, Any] = {"timeout": timeout, "headers": headers}
        if auth is not None:
            kwargs["auth"] = auth
        return _classes(http)[0](self, **kwargs)

    def _note(self, clause: str, detail: str | None = None) -> str:
        """Remember a failure (``clause``, then the server's own ``detail``) and return its sentence."""
        text = f"{clause}: {detail}" if detail else clause
        self.error = text
        self.phrases.add(text)
        return text

    async def check(self, request: Any, response: Any) -> Any:
        """The answer the SDK gets for ``request``: ``response``, limited, or one made up for a failure."""
        code, method = response.status_code, request.method
        if 300 <= code < 400:
            return response  # the SDK follows a redirect within the origin, or reports it
        if method == "POST":
            message = _message(request)
            if self.kind == "sse":
                return await self._sse_post(request, response, message)
            return await self._http_post(request, response, message)
        kind = _content_type(response)
        if method == "GET" and self.kind == "sse":  # the event stream all answers come on
            if code >= 400:
                self._note(answered(code, response.reason_phrase))
                return response  # the SDK raises for it; the startup error says the status
            if kind != _SSE:
                await response.aclose()
                raise NotMcpResponse(self._note(_not_mcp(code, kind)))
            return _events(response, lambda: self.stream_limit, self._stream_too_large)
        if method == "GET" and code < 300 and kind == _SSE:  # Streamable HTTP's optional stream: the SDK retries it
            return _events(response, lambda: self.call_limit, _get_too_large)
        return _limited(response, self.handshake_limit)  # a DELETE, an error on the optional GET

    def _stream_too_large(self, limit: int) -> bytes:
        self.broken = f"the server sent an event larger than {_size(limit)} on its event stream, which was refused"
        if self.on_lost is not None:
            self.on_lost()
        raise TooLarge(self.broken)

    async def _http_post(self, request: Any, response: Any, message: dict[str, Any]) -> Any:
        rpc_id, rpc = message.get("id"), message.get("method")
        code, kind = response.status_code, _content_type(response)
        if rpc_id is None or not isinstance(rpc, str):  # a notification, or our answer to the server
            if code >= 400:
                self._note(answered(code, response.reason_phrase))
                await response.aclose()
                return _made(request, 202)  # nothing waits for an answer: the SDK must not fail on it
            return _limited(response, SMALL_LIMIT)
        limit = self.call_limit if rpc == "tools/call" else self.handshake_limit
        if code >= 400:
            return self._failed(request, rpc_id, answered(code, response.reason_phrase, rpc), await _error_message(response))
        if code == 202:
            await response.aclose()
            return self._failed(request, rpc_id, "the server answered HTTP 202 Accepted, with no answer to the request")
        if kind == _JSON:
            try:
                body = await _read(response, limit)
            except TooLarge:
                return self._failed(request, rpc_id, _too_large(rpc, limit))
            except _http().RequestError as err:
                why = redact(f"{type(err).__name__}: {err}" if str(err) else type(err).__name__, self.secrets)
                return self._failed(request, rpc_id, f"the server's answer to {rpc} broke off before its end ({why})")
            return _made(request, code, body, response)
        if kind == _SSE:
            def too_large(limit: int) -> bytes:
                return b"event: message\ndata: " + _error_json(rpc_id, self._note(_too_large(rpc, limit))) + b"\n\n"

            return _events(response, lambda: limit, too_large)
        await response.aclose()
        return self._failed(request, rpc_id, _not_mcp(code, kind))

    async def _sse_post(self, request: Any, response: Any, message: dict[str, Any]) -> Any:
        """HTTP+SSE: a POST's answer comes on the event stream; its own body says nothing."""
        code, rpc_id, rpc = response.status_code, message.get("id"), message.get("method")
        if code < 400:
            try:
                body = await _read(response, SMALL_LIMIT)
            except (TooLarge, _http().RequestError):
                body = b""  # the SDK does not read it
            return _made(request, code, body, response)
        text = self._note(answered(code, response.reason_phrase, rpc), await _error_message(response))
        if rpc_id is not None and isinstance(rpc, str) and self.inject is not None:
            self.inject(_session_message(_error_json(rpc_id, text)))  # raising would stop the SDK's sending
        return _made(request, 202)

    def _failed(self, request: Any, rpc_id: Any, clause: str, detail: str | None = None) -> Any:
        """A made-up answer to the request: a JSON-RPC error saying ``clause`` (and the server's own ``detail``)."""
        return _made(request, 200, _error_json(rpc_id, self._note(clause, detail)), headers={"content-type": _JSON})


def answered(code: int, reason: str = "", method: Any = None) -> str:
    """``the server answered HTTP 401 Unauthorized (hint)``."""
    return f"the server answered {status_phrase(code, reason, method=method if isinstance(method, str) else None)}"


def _get_too_large(limit: int) -> bytes:
    """Streamable HTTP's optional GET stream sent an oversized event: that stream ends (the SDK retries it)."""
    raise TooLarge(f"an event larger than {_size(limit)} on the optional GET stream")


def _not_mcp(code: int, kind: str) -> str:
    return f"the server answered HTTP {code} with content type {kind or '(none)'}, which is not MCP"


def _too_large(rpc: str, limit: int) -> str:
    return f"the server's answer to {rpc} was larger than {_size(limit)} and was refused"


def _error_json(rpc_id: Any, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32603, "message": text}}).encode()


def _session_message(raw: bytes) -> Any:
    """A JSON-RPC message as the SDK's session reads it off its stream."""
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    adapter = getattr(types, "jsonrpc_message_adapter", None)  # mcp 2.x
    message = adapter.validate_json(raw) if adapter is not None else types.JSONRPCMessage.model_validate_json(raw)
    return SessionMessage(message)


def _message(request: Any) -> dict[str, Any]:
    """The JSON-RPC message a POST carries ({} if it is not one)."""
    try:
        message = json.loads(request.content)
    except Exception:
        return {}
    return message if isinstance(message, dict) else {}


def _content_type(response: Any) -> str:
    return str(response.headers.get("content-type", "")).partition(";")[0].strip().lower()


async def _read(response: Any, limit: int) -> bytes:
    """The decoded body, at most ``limit`` bytes (``TooLarge`` beyond); the response is closed."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with aclosing(response.aiter_bytes()) as body:
            async for chunk in body:
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"larger than {_size(limit)}")
                chunks.append(chunk)
    finally:
        await response.aclose()
    return b"".join(chunks)


async def _error_message(response: Any) -> str | None:
    """The message of a JSON-RPC error in an error answer's JSON body (a spec-correct server may send one)."""
    if _content_type(response) != _JSON:
        await response.aclose()
        return None
    try:
        error = json.loads(await _read(response, SMALL_LIMIT)).get("error") or {}
        message = error.get("message")
    except Exception:
        return None
    return message if isinstance(message, str) and message else None


def _made(request: Any, code: int, body: bytes = b"", like: Any = None, headers: dict[str, str] | None = None) -> Any:
    """A response the SDK reads as the server's: ``body``, with the headers of ``like`` (a session id...)."""
    http = _http()
    if like is not None:
        kept = [(k, v) for k, v in like.headers.multi_items() if k.lower() not in _DECODED]
        return http.Response(code, headers=kept, content=body, request=request, extensions=like.extensions)
    return http.Response(code, headers=headers, content=body, request=request)


def _limited(response: Any, limit: int) -> Any:
    """``response`` whose body raises ``TooLarge`` past ``limit`` bytes."""
    return _stream_response(response, _classes(_http())[1](response, limit))


def _events(response: Any, limit: Callable[[], int], too_large: Callable[[int], bytes]) -> Any:
    """``response``, an event stream handed on one whole event at a time, each at most ``limit()`` bytes.

    Past the limit ``too_large(limit)`` gives the last bytes of the stream (or raises).
    """
    return _stream_response(response, _classes(_http())[2](response, limit, too_large))


def _stream_response(response: Any, stream: Any) -> Any:
    kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DECODED]
    return _http().Response(
        response.status_code, headers=kept, stream=stream, request=response.request, extensions=response.extensions
    )


def _http() -> Any:
    """The httpx module the SDK uses: httpx (mcp 1.x) or httpx2 (mcp 2.x)."""
    from mcp.shared import _httpx_utils as utils

    return getattr(utils, "httpx2", None) or utils.httpx


_BOUNDARY = (b"\n\n", b"\n\r", b"\r\r")  # an empty line ends an event: two line ends in a row, CR, LF or CRLF


@functools.cache
def _classes(http: Any) -> tuple[Any, Any, Any]:
    """The client and the two body streams, built on the SDK's httpx module."""

    class GuardedClient(http.AsyncClient):
        def __init__(self, guard: HttpGuard, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._guard = guard

        async def send(self, request: Any, **kwargs: Any) -> Any:
            return await self._guard.check(request, await super().send(request, **kwargs))

    class Body(http.AsyncByteStream):
        """The decoded body of ``response``; an iterator object, not a generator, so nothing is left to finalize."""

        def __init__(self, response: Any) -> None:
            self._response = response
            self._chunks: Any = None

        def __aiter__(self) -> Any:
            self._chunks = self._response.aiter_bytes()
            return self

        async def _next_chunk(self) -> bytes | None:
            try:
                return bytes(await self._chunks.__anext__())
            except StopAsyncIteration:
                return None

        async def aclose(self) -> None:
            chunks, self._chunks = self._chunks, None
            if chunks is not None:
                await chunks.aclose()
            await self._response.aclose()

    class LimitedBody(Body):
        def __init__(self, response: Any, limit: int) -> None:
            super().__init__(response)
            self._limit, self._seen = limit, 0

        async def __anext__(self) -> bytes:
            chunk = await self._next_chunk()
            if chunk is None:
                raise StopAsyncIteration
            self._seen += len(chunk)
            if self._seen > self._limit:
                await self.aclose()
                raise TooLarge(f"an answer larger than {_size(self._limit)}")
            return chunk

    class EventStream(Body):
        def __init__(self, response: Any, limit: Callable[[], int], too_large: Callable[[int], bytes]) -> None:
            super().__init__(response)
            self._limit, self._too_large = limit, too_large
            self._pending: list[bytes] = []  # the event being received
            self._size, self._last, self._done = 0, b"", False

        async def __anext__(self) -> bytes:
            while not self._done:
                chunk = await self._next_chunk()
                if chunk is None:
                    self._done = True
                    if self._size:
                        return b"".join(self._pending)  # an unfinished last event: the SDK decides
                    break
                ready = self._take(chunk)
                limit = self._limit()
                if self._size > limit:
                    self._done, self._pending = True, []
                    await self.aclose()
                    tail = self._too_large(limit)  # or it raises
                    if ready or tail:
                        return ready + tail
                elif ready:
                    return ready
            raise StopAsyncIteration

        def _take(self, chunk: bytes) -> bytes:
            """Keep ``chunk``; the whole events now received, if any."""
            if not chunk:
                return b""
            seen, last = self._last + chunk, self._last
            self._last = chunk[-1:]
            end = max(seen.rfind(b) for b in _BOUNDARY)
            if end < 0:
                self._pending.append(chunk)
                self._size += len(chunk)
                return b""
            end += 2 - len(last)  # where the empty line ends, in chunk
            if end < len(chunk) and chunk[end - 1:end] == b"\r" and chunk[end:end + 1] == b"\n":
                end += 1  # the CRLF of that empty line
            ready = b"".join((*self._pending, chunk[:end]))
            self._pending, self._size = [chunk[end:]], len(chunk) - end
            return ready

    return GuardedClient, LimitedBody, EventStream


class _Redacting(logging.Filter):
    """Redacts the secrets of every open remote connection from a log record (message and traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = tuple(s for group in list(_SECRETS.values()) for s in group)
        if not secrets:
            return True
        text = record.getMessage()
        if any(s in text for s in secrets):
            record.msg, record.args = redact(text, tuple(sorted(secrets, key=len, reverse=True))), ()
        if record.exc_info:
            trace = logging.Formatter().formatException(record.exc_info)
            if any(s in trace for s in secrets):
                record.exc_text, record.exc_info = redact(trace, tuple(sorted(secrets, key=len, reverse=True))), None
        return True


_FILTER = _Redacting()


def _watch_logs() -> None:
    """Put the filter on the httpx and mcp loggers (a logger's filter sees only its own records, so on each)."""
    for name in _LOGGERS:
        logging.getLogger(name)
    for name in list(logging.root.manager.loggerDict):
        if name.split(".", 1)[0] in _LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
    sdk = logging.getLogger("mcp")
    if not sdk.handlers:  # the SDK logs errors with tracebacks: to the application's handlers, never bare stderr
        sdk.addHandler(logging.NullHandler())


@functools.cache
def _event_size_keyword() -> dict[str, Any]:
    """mcp 2.x limits an event of Streamable HTTP to 1 MB itself; the guard's limits apply instead."""
    from mcp.client.streamable_http import streamable_http_client

    return {"max_sse_event_size": None} if "max_sse_event_size" in inspect.signature(streamable_http_client).parameters else {}


@asynccontextmanager
async def open_transport(
    config: McpServerConfig, *, cwd: str | None, errlog: TextIO | None, guard: HttpGuard
) -> AsyncIterator[tuple[Any, Any]]:
    """The stream pair of the server's transport, open while the block runs."""
    if isinstance(config, McpStdioServerConfig):
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=config.command, args=config.args, env=config.env, cwd=config.cwd or cwd)
        async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
            yield read, write
        return
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    _SECRETS[id(guard)] = guard.secrets
    _watch_logs()
    try:
        if isinstance(config, McpHttpServerConfig):
            async with guard.client(headers=config.headers) as client:
                async with streamable_http_client(config.url, http_client=client, **_event_size_keyword()) as streams:
                    yield streams[0], streams[1]  # mcp 1.x adds a third item, the session id getter
        else:
            async with sse_client(config.url, headers=config.headers, httpx_client_factory=guard.client) as (read, write):
                async with _with_injection(read, guard) as merged:
                    yield merged, write
    finally:
        _SECRETS.pop(id(guard), None)


@asynccontextmanager
async def _with_injection(read: Any, guard: HttpGuard) -> AsyncIterator[Any]:
    """The SDK's read stream, into which ``guard.inject`` can put messages of its own (HTTP+SSE)."""
    import anyio

    closed = (anyio.BrokenResourceError, anyio.ClosedResourceError)
    send, receive = anyio.create_memory_object_stream[Any](16)

    async def pump() -> None:
        try:
            async with send:  # when the SDK's stream ends, so does this one
                async for item in read:
                    await send.send(item)
        except closed:
            return  # the session stopped reading
        if guard.on_lost is not None:
            guard.on_lost()  # the event stream ended (the server went away): the session is dead

    async def send_later(item: Any) -> None:
        try:
            await send.send(item)
        except closed:
            pass

    async with anyio.create_task_group() as tg:
        def inject(item: Any) -> None:
            try:
                send.send_nowait(item)
            except anyio.WouldBlock:
                tg.start_soon(send_later, item)
            except closed:
                pass

        tg.start_soon(pump)
        guard.inject = inject
        try:
            yield receive
        finally:
            guard.inject = None
            tg.cancel_scope.cancel()
