"""Connecting MCP servers (stdio, Streamable HTTP, HTTP+SSE) and calling their tools safely.

Each server lives in its own task, which owns the SDK's transport and session (their
anyio scopes must be entered and left by one task), so a manager can be opened and
closed from any task. A server that cannot be reached, answers an HTTP error or does
not speak MCP is ``failed``, with an ``error`` sentence saying which server, where and
what happened; the other servers work. A call that outlives its timeout, or whose
server dies or drops the connection mid-call, yields an error result for that call;
the scheduler never hangs on it. An HTTP error (or an oversized answer) to one call fails
that call only. Closing the manager stops every server process and closes every
connection; closing it while a server is starting leaves that server ``closed``.

No message (``error``, a call's error result) quotes raw exception text that may hold the
url: a remote server is named by ``where`` (its url as written, ``${VAR}`` unexpanded, no
userinfo, query or fragment), an HTTP error by its status, and the config's secrets are
redacted from whatever else is said.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import TYPE_CHECKING, Any, Callable, Mapping, TextIO, TypedDict, Unpack

from ..._registry import ToolRegistry
from ..._tasks import TaskOwner
from ..._tool._base import ToolOutput
from ._config import McpServerConfig, McpStdioServerConfig, parse_mcp_config
from ._tool import McpTool, content_blocks
from ._transport import HttpGuard, NotMcpResponse, TooLarge, answered, open_transport, redact

if TYPE_CHECKING:  # the SDK is imported when a server starts: `import nbtoolsched` stays quick without MCP
    from mcp import ClientSession

__all__ = ["McpServerConnection", "McpManager", "connect_mcp_servers", "DEFAULT_CALL_TIMEOUT", "DEFAULT_STARTUP_TIMEOUT"]

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_STARTUP_TIMEOUT = 30.0
CLOSE_TIMEOUT = 10.0
STDERR_TAIL = 2000


class McpServerConnection:
    """One server, over the transport its config names: its tools, its state, and ``call_tool``."""

    def __init__(
        self, name: str, config: McpServerConfig, *, call_timeout: float = DEFAULT_CALL_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, cwd: str | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.call_timeout = config.timeout or call_timeout
        self.startup_timeout = config.startup_timeout or startup_timeout
        self.cwd = cwd  # where a stdio server starts unless its entry names a cwd
        self.state = "pending"  # pending -> connected -> (failed | closed)
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.skipped: dict[str, str] = {}  # tool name -> why it could not be offered
        self._session: ClientSession | None = None
        self._tasks = TaskOwner()  # the connection's task and its calls' tasks; close ends them
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[dict[str, Any]]] | None = None
        self._stop = asyncio.Event()  # close() was called
        self._wake = asyncio.Event()  # the connection's task should look: closed, or its event stream ended
        self._secrets = config.secrets()
        self._guard = HttpGuard(config.type, self._secrets)
        self._guard.on_lost = self._lost
        self._errlog: TextIO | None = (
            tempfile.TemporaryFile(mode="w+", encoding="utf-8") if isinstance(config, McpStdioServerConfig) else None
        )

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, initialize, list tools; on failure ``state == "failed"`` with ``error`` set."""
        if self._stop.is_set():  # closed before it started
            return
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = self._tasks.start(self._run(), name=f"mcp-server-{self.name}")
        try:
            listed = await asyncio.wait_for(asyncio.shield(self._ready), self.startup_timeout)
        except asyncio.TimeoutError:
            if not self._stop.is_set():  # closed while starting is no failure: close() says "closed"
                self._fail(f"did not finish starting within {self.startup_timeout:g} seconds")
            await self.close()
            return
        except Exception as err:
            if not self._stop.is_set():
                self._fail(f"could not start: {self._why(err)}")
            await self.close()
            return
        if self._stop.is_set():
            return
        self.tools = self._make_tools(listed)
        self._guard.stream_limit = self._guard.call_limit  # from now on an event may carry a call's result
        self.state = "connected"

    def _make_tools(self, listed: list[dict[str, Any]]) -> list[McpTool]:
        """One Tool per listed tool; a tool whose schema cannot be used is skipped and noted."""
        tools: list[McpTool] = []
        for info in listed:
            try:
                tools.append(McpTool(self, info))
            except Exception as err:
                self.skipped[str(info.get("name"))] = self._describe(err)
        return tools

    async def _run(self) -> None:
        assert self._ready is not None
        from mcp import ClientSession

        try:
            async with open_transport(self.config, cwd=self.cwd, errlog=self._errlog, guard=self._guard) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await _list_tools(session)
                    self._session = session
                    if not self._ready.done():
                        self._ready.set_result(listed)
                    await self._wake.wait()
                    if not self._stop.is_set():
                        raise ConnectionLost(self._guard.broken or "the server's event stream ended")
        except asyncio.CancelledError:
            self._settle(RuntimeError("startup was cancelled"))
            raise
        except Exception as err:
            if not self._settle(err) and not self._stop.is_set():  # an error while closing is no failure
                self._fail(f"lost its connection: {self._describe(err)}")
        finally:
            self._session = None

    def _lost(self) -> None:
        """The guard found the session dead: a start() waiting fails at once, else the connection's task ends."""
        if not self._settle(ConnectionLost(self._guard.broken or "the server's event stream ended")):
            self._wake.set()

    def _settle(self, err: Exception) -> bool:
        """Report ``err`` to a waiting ``start``; False when start already finished."""
        ready = self._ready
        if ready is None or ready.done():
            return False
        ready.set_exception(err)
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "unretrieved"
        return True

    async def close(self) -> None:
        """Stop the server: a stdio one's process tree ends, a remote one's connection closes.

        A server still starting is cancelled at once; a connected one gets a bounded
        chance to shut down cleanly first.
        """
        self._stop.set()
        self._wake.set()
        self._settle(RuntimeError("closed while starting"))  # a start() waiting returns at once, "closed"
        task, self._task = self._task, None
        if task is not None and not task.done():
            if self._session is None:
                task.cancel()
            done, _ = await asyncio.wait([task], timeout=CLOSE_TIMEOUT)
            if not done:
                task.cancel()
                await asyncio.wait([task], timeout=CLOSE_TIMEOUT)
        self._tasks.cancel()  # bounded above: an SDK that ignores the cancel is not waited for forever
        if self.state != "failed":
            self.state = "closed"
        if self._errlog is not None:
            self._errlog.close()

    # -- calling -------------------------------------------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], *, progress: Callable[[Any], None] | None = None) -> ToolOutput:
        session, connection = self._session, self._task
        if session is None or connection is None or self.state != "connected":
            why = self.error or f"MCP server {self.name!r} {'is still starting' if self.state == 'pending' else 'was closed'}."
            return self._error(f"MCP tool {tool} was not called (its server is not connected): {why}")
        call = self._tasks.start(session.call_tool(tool, arguments, progress_callback=_progress_callback(progress)))
        call.add_done_callback(lambda t: t.cancelled() or t.exception())  # an abandoned call's error is never "unretrieved"
        try:  # the call races its connection: once the connection has ended no answer can come, and
            # an SDK that leaves the request pending then (mcp 1.x does) must not hold the caller
            await asyncio.wait({call, connection}, timeout=self.call_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()  # not awaited, for the same reason; close() ends what is left
        if call.done() and not call.cancelled() and call.exception() is None:
            data = call.result().model_dump(mode="json", by_alias=True, exclude_none=True)
            return ToolOutput(data, content=content_blocks(data), is_error=bool(data.get("isError")))
        if self._stop.is_set():
            return self._error(f"MCP tool {tool} on server {self.name!r} got no answer: the server was closed while the call was running.")
        if call.done() and not call.cancelled():
            return self._error(self._failure_text(tool, call.exception() or RuntimeError("no result")))
        if connection.done() or call.done():  # the connection ended first, or took the call down with it
            return self._error(f"MCP tool {tool} on server {self.name!r} got no answer: {self.error or 'its connection ended.'}")
        return self._error(
            f"MCP tool {tool} on server {self.name!r} did not answer within {self.call_timeout:g} seconds; "
            "the call was abandoned (the server may still be working on it)."
        )

    def _failure_text(self, tool: str, err: BaseException) -> str:
        leaf = _leaf(err)
        if str(leaf) in self._guard.phrases:  # an HTTP error or an oversized answer to this call: the server is fine
            return f"MCP tool {tool} on server {self.name!r} failed: {leaf}."
        text = f"MCP tool {tool} on server {self.name!r} failed: {self._guard.broken or self._describe(leaf)}"
        if "closed" in str(leaf).lower() or type(leaf).__name__ in ("ClosedResourceError", "BrokenResourceError"):
            # the SDK's session has ended (it answers every pending request "Connection closed"): no call can work now
            why = self._guard.broken or f"the SDK's session with the server has ended ({self._describe(leaf)}; the server probably exited)"
            self._fail(f"lost its connection: {why}")
            text = f"MCP tool {tool} on server {self.name!r} failed: {why}. The server's connection is closed, so its tools cannot be used until it is restarted."
        tail = self.stderr_tail()
        return f"{text}\nServer stderr (last lines):\n{tail}" if tail else text

    def _fail(self, why: str) -> None:
        self.state = "failed"
        self.error = redact(f"MCP server {self.name!r} {self.config.where} {why.rstrip('.')}.", self._secrets)

    def _error(self, text: str) -> ToolOutput:
        return _error(redact(text, self._secrets))

    def _why(self, err: BaseException) -> str:
        """What went wrong, in the words that say most.

        The guard's own words when it ended the event stream or made up the error; else the
        server's own JSON-RPC error; else the HTTP status a request that matters got, if any.
        """
        leaf = _leaf(err)
        if self._guard.broken:
            return self._guard.broken
        if str(leaf) in self._guard.phrases:
            return str(leaf)
        if type(leaf).__name__ in ("McpError", "MCPError") and str(leaf) != "Connection closed":
            return self._describe(leaf)
        return self._guard.error or self._describe(leaf)

    def _describe(self, err: BaseException) -> str:
        """An exception in words that never quote the url: an HTTP error by its status, secrets redacted."""
        leaf = _leaf(err)
        response = getattr(leaf, "response", None)
        if type(leaf).__name__ == "HTTPStatusError" and response is not None:  # its text holds the whole url
            code, reason = response.status_code, response.reason_phrase
            if 300 <= code < 400:
                first = str(leaf).partition("\n")[0]  # the SDK names a redirect's location without its query
                text = first if first.startswith("Redirect to ") else f"{answered(code, reason)} (a redirect that is not followed)"
            else:
                text = answered(code, reason)
        elif isinstance(leaf, (TooLarge, NotMcpResponse, ConnectionLost)):
            text = str(leaf)
        else:
            text = _describe(leaf)
        return redact(text, self._secrets)

    def stderr_tail(self, limit: int = STDERR_TAIL) -> str:
        """The end of what a stdio server wrote to stderr (useful when it crashed)."""
        if self._errlog is None:
            return ""
        try:
            fd = self._errlog.fileno()
            size = os.fstat(fd).st_size
            raw = os.pread(fd, limit, max(0, size - limit))
        except (OSError, ValueError):
            return ""
        text = raw.decode("utf-8", errors="replace")
        if size > limit and "\n" in text:
            text = text.split("\n", 1)[1]  # start at a whole line
        return text.strip()

    def __repr__(self) -> str:
        return f"<McpServerConnection {self.name} {self.state} tools={len(self.tools)}>"


class McpManager:
    """All configured servers. ``async with McpManager(config) as mcp: registry.register(...)``.

    A server that fails to start is left out (``errors`` says why); the others work.
    """

    def __init__(
        self, config: Mapping[str, Any] | str | os.PathLike[str], *, call_timeout: float = DEFAULT_CALL_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, cwd: str | None = None,
    ) -> None:
        servers = parse_mcp_config(config)
        self.servers = {
            name: McpServerConnection(name, cfg, call_timeout=call_timeout, startup_timeout=startup_timeout, cwd=cwd)
            for name, cfg in servers.items()
        }

    async def start(self) -> "McpManager":
        await asyncio.gather(*(server.start() for server in self.servers.values()))
        return self

    async def aclose(self) -> None:
        await asyncio.gather(*(server.close() for server in self.servers.values()), return_exceptions=True)

    async def __aenter__(self) -> "McpManager":
        try:
            return await self.start()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    @property
    def tools(self) -> list[McpTool]:
        return [tool for server in self.servers.values() for tool in server.tools]

    @property
    def errors(self) -> dict[str, str]:
        return {name: s.error or s.state for name, s in self.servers.items() if s.state == "failed"}

    @property
    def pending_servers(self) -> list[str]:
        return [name for name, s in self.servers.items() if s.state == "pending"]

    def register(self, registry: ToolRegistry, *, replace: bool = False) -> list[McpTool]:
        """Add every connected tool to a ToolRegistry."""
        for tool in self.tools:
            registry.register(tool, replace=replace)
        return self.tools


class ManagerOptions(TypedDict, total=False):
    """The keywords of ``McpManager`` (``connect_mcp_servers`` passes them on)."""

    call_timeout: float
    startup_timeout: float
    cwd: str | None


def connect_mcp_servers(config: Mapping[str, Any] | str | os.PathLike[str], **options: Unpack[ManagerOptions]) -> McpManager:
    """``async with connect_mcp_servers({"git": {...}}) as mcp:`` starts them; leaving stops them."""
    return McpManager(config, **options)


async def _list_tools(session: ClientSession) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        result = await (session.list_tools() if cursor is None else _list_page(session, cursor))
        tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools)
        cursor = getattr(result, "next_cursor", None) or getattr(result, "nextCursor", None)
        if not cursor:
            return tools


async def _list_page(session: ClientSession, cursor: str) -> Any:
    try:
        from mcp.types import PaginatedRequestParams

        return await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
    except TypeError:  # older mcp 1.x (typed through Any: which versions know the keyword differs)
        list_tools: Any = session.list_tools
        return await list_tools(cursor=cursor)


def _progress_callback(progress: Callable[[Any], None] | None) -> Any:
    if progress is None:
        return None

    async def report(value: float, total: float | None, message: str | None = None) -> None:
        progress({"progress": value, "total": total, "message": message})

    return report


class ConnectionLost(Exception):
    """The connection ended by itself (an HTTP+SSE event stream closed, or was refused for its size)."""


def _leaf(err: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def _describe(err: BaseException) -> str:
    """``Type: text`` of the first real error (not redacted: the connection's ``_describe`` is)."""
    err = _leaf(err)
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _error(text: str) -> ToolOutput:
    return ToolOutput({"error": text}, content=text, is_error=True)
