"""Connecting MCP servers over stdio and calling their tools safely.

Each server lives in its own task, which owns the SDK's transport and session (their
anyio scopes must be entered and left by one task), so a manager can be opened and
closed from any task. A call that outlives its timeout, or a server that dies
mid-call, yields an error result for that call; the scheduler never hangs on it.
Closing the manager stops every server process.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypedDict, Unpack

from ..._registry import ToolRegistry
from ..._tasks import TaskOwner
from ..._tool._base import ToolOutput
from ._config import McpServerConfig, parse_mcp_config
from ._tool import McpTool, content_blocks

if TYPE_CHECKING:  # the SDK is imported when a server starts: `import nbtoolsched` stays quick without MCP
    from mcp import ClientSession

__all__ = ["McpServerConnection", "McpManager", "connect_mcp_servers", "DEFAULT_CALL_TIMEOUT", "DEFAULT_STARTUP_TIMEOUT"]

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_STARTUP_TIMEOUT = 30.0
CLOSE_TIMEOUT = 10.0
STDERR_TAIL = 2000


class McpServerConnection:
    """One running server: its tools, its state, and ``call_tool``."""

    def __init__(
        self, name: str, config: McpServerConfig, *, call_timeout: float = DEFAULT_CALL_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, cwd: str | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.call_timeout = config.timeout or call_timeout
        self.startup_timeout = config.startup_timeout or startup_timeout
        self.cwd = config.cwd or cwd
        self.state = "pending"  # pending -> connected -> (failed | closed)
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.skipped: dict[str, str] = {}  # tool name -> why it could not be offered
        self._session: ClientSession | None = None
        self._tasks = TaskOwner()  # the connection's task: started by start, ended by close
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[dict[str, Any]]] | None = None
        self._stop = asyncio.Event()
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8")

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the process, initialize, list tools; on failure ``state == "failed"`` with ``error`` set."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = self._tasks.start(self._run(), name=f"mcp-server-{self.name}")
        try:
            listed = await asyncio.wait_for(asyncio.shield(self._ready), self.startup_timeout)
        except asyncio.TimeoutError:
            self._fail(f"did not finish starting within {self.startup_timeout:g} seconds")
            await self.close()
            return
        except Exception as err:
            self._fail(f"could not start: {_describe(err)}")
            await self.close()
            return
        self.tools = self._make_tools(listed)
        self.state = "connected"

    def _make_tools(self, listed: list[dict[str, Any]]) -> list[McpTool]:
        """One Tool per listed tool; a tool whose schema cannot be used is skipped and noted."""
        tools: list[McpTool] = []
        for info in listed:
            try:
                tools.append(McpTool(self, info))
            except Exception as err:
                self.skipped[str(info.get("name"))] = _describe(err)
        return tools

    async def _run(self) -> None:
        assert self._ready is not None
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.config.command, args=self.config.args, env=self.config.env, cwd=self.cwd)
        try:
            async with stdio_client(params, errlog=self._errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await _list_tools(session)
                    self._session = session
                    if not self._ready.done():
                        self._ready.set_result(listed)
                    await self._stop.wait()
        except asyncio.CancelledError:
            self._settle(RuntimeError("startup was cancelled"))
            raise
        except Exception as err:
            if not self._settle(err):
                self._fail(f"the connection ended: {_describe(err)}")
        finally:
            self._session = None

    def _settle(self, err: Exception) -> bool:
        """Report ``err`` to a waiting ``start``; False when start already finished."""
        ready = self._ready
        if ready is None or ready.done():
            return False
        ready.set_exception(err)
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "unretrieved"
        return True

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then terminates the process tree).

        A server still starting is cancelled at once; a connected one gets a bounded
        chance to shut down cleanly first.
        """
        self._stop.set()
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
        self._errlog.close()

    # -- calling -------------------------------------------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], *, progress: Callable[[Any], None] | None = None) -> ToolOutput:
        session = self._session
        if session is None or self.state != "connected":
            return _error(f"MCP server {self.name!r} is not connected ({self.error or self.state}); {tool} was not called.")
        try:
            result = await asyncio.wait_for(
                session.call_tool(tool, arguments, progress_callback=_progress_callback(progress)), self.call_timeout
            )
        except asyncio.TimeoutError:
            return _error(
                f"MCP tool {tool} on server {self.name!r} did not answer within {self.call_timeout:g} seconds; "
                "the call was abandoned (the server may still be working on it)."
            )
        except Exception as err:
            return _error(self._failure_text(tool, err))
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return ToolOutput(data, content=content_blocks(data), is_error=bool(data.get("isError")))

    def _failure_text(self, tool: str, err: BaseException) -> str:
        text = f"MCP tool {tool} on server {self.name!r} failed: {_describe(err)}"
        if "closed" in str(err).lower():
            self._fail("the connection closed (the server process probably exited)")
            text += ". The server's connection is closed, so its tools cannot be used until it is restarted."
        tail = self.stderr_tail()
        return f"{text}\nServer stderr (last lines):\n{tail}" if tail else text

    def _fail(self, why: str) -> None:
        self.state = "failed"
        self.error = why

    def stderr_tail(self, limit: int = STDERR_TAIL) -> str:
        """The end of what the server wrote to stderr (useful when it crashed)."""
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
    except TypeError:  # mcp 1.x
        return await session.list_tools(cursor=cursor)  # type: ignore[call-arg]


def _progress_callback(progress: Callable[[Any], None] | None) -> Any:
    if progress is None:
        return None

    async def report(value: float, total: float | None, message: str | None = None) -> None:
        progress({"progress": value, "total": total, "message": message})

    return report


def _describe(err: BaseException) -> str:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _error(text: str) -> ToolOutput:
    return ToolOutput({"error": text}, content=text, is_error=True)
