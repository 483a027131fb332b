"""A tiny HTTP server on 127.0.0.1 that replays recorded Messages API responses.

The real ``anthropic`` SDK is pointed at it with ``base_url``; each request pops the
next reply. Streams are written one server-sent event at a time, with a drain between
events, so the client really receives them in pieces.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

import nbtoolsched as nts

SSE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "sse"  # Anthropic's Messages API
OPENAI_DIR = SSE_DIR.parent / "openai"  # Chat Completions, as OpenAI, vLLM, Ollama... stream it


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    event_delay: float = 0.0  # seconds between events of a stream

    @classmethod
    def sse(cls, name: str, event_delay: float = 0.0, folder: Path = SSE_DIR) -> "Reply":
        return cls(200, (folder / name).read_bytes(), event_delay=event_delay)

    @classmethod
    def json(cls, status: int, name: str, folder: Path = SSE_DIR, **headers: str) -> "Reply":
        return cls(status, (folder / name).read_bytes(), "application/json", headers)


class ReplayServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append({"method": method, "path": path, "headers": headers, "json": json.loads(body or b"{}")})
            reply = self.replies.popleft() if self.replies else Reply(500, b'{"error": "no reply queued"}', "application/json")
            await self._send(writer, reply)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        reason = {200: "OK", 401: "Unauthorized", 429: "Too Many Requests", 529: "Overloaded", 500: "Internal Server Error"}.get(reply.status, "Error")
        head = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Type: {reply.content_type}", "Connection: close",
                "request-id: req_replay"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        if reply.content_type != "text/event-stream":
            head.append(f"Content-Length: {len(reply.body)}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        if reply.content_type != "text/event-stream":
            writer.write(reply.body)
            await writer.drain()
            return
        for chunk in reply.body.split(b"\n\n"):
            if chunk.strip():
                writer.write(chunk + b"\n\n")
                await writer.drain()
                await asyncio.sleep(reply.event_delay)


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    server = ReplayServer()
    await server.start()
    try:
        yield server
    finally:
        await server.close()


def weather_tools() -> nts.ToolRegistry:
    """The two tools the recorded sessions call (both protocols' fixtures ask for them)."""

    @nts.tool(read_only=True)
    async def get_weather(location: str, unit: str = "celsius", days: list[int] | None = None) -> str:
        """Weather for a place."""
        return f"64 {unit} in {location}"

    @nts.tool(read_only=True)
    async def read_notes(path: str) -> str:
        """Read a notes file."""
        return f"{path}: bring a jacket"

    return nts.ToolRegistry([get_weather, read_notes])
