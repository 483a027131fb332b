"""ScriptServer: a scripted model served over HTTP in both protocols, for the real SDK clients.

``ScriptServer(turns)`` listens on 127.0.0.1 in a thread of its own and answers each
request with the next turn of the script, streamed the way a real server streams it:
``POST /v1/messages`` as Anthropic's Messages API events, ``POST /v1/chat/completions``
as OpenAI's Chat Completions chunks (a tool call's id and name first, its arguments in
pieces, ``finish_reason`` and a usage chunk at the end). So ``AnthropicModel`` and
``OpenAIModel`` run through their real SDKs, over real HTTP, with no key and no network:

    with ScriptServer([Turn([tool_use("Read", file_path="notes.md")]), "Done."]) as server:
        model = OpenAIModel("scripted", base_url=server.openai_url)

The turns are ``ScriptedModel``'s (their delays pace the stream). What each request
sent is kept in ``requests``. For benchmarks that measure what follows, two clocks per
tool_use id (``time.perf_counter()`` when the bytes were written): ``argument_ends``, the
last byte of the call's arguments, and ``complete_at``, the bytes that tell a client the
call is complete (Anthropic: its ``content_block_stop``, right after; Chat Completions has
no such event: the next call's first chunk, or the chunk with ``finish_reason``). The server plays one turn per request in the
order they come, whatever the protocol, and answers 404 to any other path.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, AsyncIterator, Sequence

from .._sync import run_sync
from ._scripted import ScriptedModel, TurnLike

__all__ = ["ScriptServer"]

_TO_FINISH = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length", "refusal": "content_filter"}
_MAX_BODY = 64 * 1024 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}


class ScriptServer:
    """Serves a script of turns to Anthropic and OpenAI clients on 127.0.0.1 (see the module)."""

    def __init__(self, turns: Sequence[TurnLike], *, model: str = "scripted") -> None:
        self._model = ScriptedModel(list(turns), name=model)
        self.model = model
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "json"} per request, in order
        self.argument_ends: dict[str, float] = {}
        self.complete_at: dict[str, float] = {}
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # -- where to point a client --------------------------------------------------------------------
    @property
    def anthropic_url(self) -> str:
        """``base_url`` for ``AnthropicModel`` (the SDK adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """``base_url`` for ``OpenAIModel`` (the SDK adds ``/chat/completions``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifetime ---------------------------------------------------------------------------------
    def start(self) -> "ScriptServer":
        if self._thread is not None:
            raise RuntimeError("this ScriptServer was already started")
        self._thread = threading.Thread(target=self._serve, name="nbtoolsched-script-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None or not self.port:
            raise RuntimeError(f"the script server could not start: {self._error!r}")
        return self

    def close(self) -> None:
        if self._loop is not None and self._stopped is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join(10)

    def __enter__(self) -> "ScriptServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        try:
            run_sync(self._main())  # this thread has no loop: one of its own
        except BaseException as err:  # said by start(); a thread must not die silently
            self._error = err
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stopped.wait()

    # -- one request ------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):  # keep-alive: the SDKs reuse connections
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        request = lines[0].split(" ")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
        length = headers.get("content-length", "0") or "0"
        if len(request) != 3 or not length.isdigit():
            await self._refuse(writer, f"a malformed request (line {lines[0][:80]!r}, Content-Length {length[:20]!r})")
            return False
        if int(length) > _MAX_BODY:
            await self._reply(writer, 413, {"error": {"type": "request_too_large", "message": "body too large"}})
            return False
        method, path, _ = request
        body = await reader.readexactly(int(length))
        try:
            sent = json.loads(body or b"{}")
        except ValueError:
            await self._refuse(writer, "the body is not JSON")
            return True
        if not isinstance(sent, dict) or not isinstance(sent.get("messages", []), list):
            await self._refuse(writer, "the body must be a JSON object whose messages are a list")
            return True
        self.requests.append({"path": path, "headers": headers, "json": sent})
        route = path.split("?", 1)[0]
        if method != "POST" or route not in ("/v1/messages", "/v1/chat/completions"):
            await self._reply(writer, 404, {"error": {"type": "not_found_error", "message": f"no route {method} {path}"}})
            return True
        if not sent.get("stream"):
            await self._refuse(writer, "this server only streams")
            return True
        events = self._model.stream(sent.get("messages") or [], tools=sent.get("tools"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Connection: close\r\n\r\n")
        if route == "/v1/messages":
            await self._anthropic(writer, events)
        else:
            await self._openai(writer, events)
        return False  # the stream's end is the connection's end

    async def _refuse(self, writer: asyncio.StreamWriter, message: str) -> None:
        await self._reply(writer, 400, {"error": {"type": "invalid_request_error", "message": message}})

    async def _reply(self, writer: asyncio.StreamWriter, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        await writer.drain()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> float:
        writer.write(data)
        await writer.drain()
        return time.perf_counter()

    async def _anthropic(self, writer: asyncio.StreamWriter, events: AsyncIterator[dict[str, Any]]) -> None:
        ids: dict[int, str] = {}
        async for event in events:
            written = await self._send(writer, f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self._note(event, ids, written)

    async def _openai(self, writer: asyncio.StreamWriter, events: AsyncIterator[dict[str, Any]]) -> None:
        ids: dict[int, str] = {}
        calls: dict[int, int] = {}  # content block index -> tool call index
        head: dict[str, Any] = {"object": "chat.completion.chunk", "created": int(time.time()), "model": self.model}
        usage: dict[str, Any] = {}
        async for event in events:
            kind = event["type"]
            delta: dict[str, Any] | None = None
            finish = None
            if kind == "message_start":
                head["id"] = "chatcmpl-" + event["message"]["id"]
                delta = {"role": "assistant", "content": ""}
            elif kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
                block = event["content_block"]
                calls[event["index"]] = len(calls)
                delta = {"tool_calls": [{"index": calls[event["index"]], "id": block["id"], "type": "function",
                                         "function": {"name": block["name"], "arguments": ""}}]}
            elif kind == "content_block_delta" and event["delta"]["type"] == "text_delta":
                delta = {"content": event["delta"]["text"]}
            elif kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
                delta = {"tool_calls": [{"index": calls[event["index"]],
                                         "function": {"arguments": event["delta"]["partial_json"]}}]}
            elif kind == "message_delta":
                finish = _TO_FINISH.get(event["delta"].get("stop_reason") or "", "stop")
                usage = event.get("usage") or {}
                delta = {}
            written = 0.0
            if delta is not None:
                chunk = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                written = await self._send(writer, f"data: {json.dumps(chunk)}\n\n".encode())
            starts_call = kind == "content_block_start" and event["content_block"]["type"] == "tool_use"
            if starts_call or finish:
                for open_id in [i for i in ids.values() if i not in self.complete_at]:
                    self.complete_at[open_id] = written  # a later call started, or the choice finished
            self._note(event, ids, written)
        tokens = int(usage.get("output_tokens") or 0)
        final = {**head, "choices": [], "usage": {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens}}
        await self._send(writer, f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())

    def _note(self, event: dict[str, Any], ids: dict[int, str], written: float) -> None:
        """Keep when each call's last argument byte went out (and, for Anthropic, its stop)."""
        kind, index = event["type"], event.get("index", -1)
        if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
            ids[index] = event["content_block"]["id"]
            self.argument_ends[ids[index]] = written
        elif kind == "content_block_delta" and index in ids:
            self.argument_ends[ids[index]] = written
        elif kind == "content_block_stop" and index in ids and written:
            self.complete_at[ids[index]] = written
