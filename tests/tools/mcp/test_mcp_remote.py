"""MCP servers over Streamable HTTP and HTTP+SSE: real servers (remote_server.py) in subprocesses.

Each server listens on 127.0.0.1 on a free port; the tests connect through
``connect_mcp_servers`` as a user's ``.mcp.json`` would, and run calls through the
Scheduler. A server that is down, silent, answers an HTTP error or is not MCP at all is
reported by name and URL while the others work; a slow call times out; a server that
dies mid-call gives error results, never a hang; closing leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import default_registry
from nbtoolsched.tools.mcp._manager import McpManager, connect_mcp_servers

pytestmark = pytest.mark.timeout(60)

SERVER = str(Path(__file__).with_name("remote_server.py"))
PATHS = {"http": "/mcp", "sse": "/sse"}  # where each transport's endpoint is
READY_WITHIN = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    """One remote_server.py process: ``Served("http")`` serves MCP over Streamable HTTP."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.port = free_port()
        self.log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server never blocks on it
        self.proc = subprocess.Popen([sys.executable, SERVER, mode, str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_WITHIN
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"remote_server.py {mode} exited: {self.log.read().decode()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"remote_server.py {mode} did not listen on {self.port} within {READY_WITHIN:g}s")
                time.sleep(0.05)

    def url(self, kind: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{PATHS.get(kind or self.mode, '/mcp')}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Served]]:
    """The servers the tests share (they stay alive), started once for the module."""
    started: dict[str, Served] = {}
    try:
        for mode in ("http", "sse"):
            started[mode] = Served(mode)
        yield started
    finally:
        for served in started.values():
            served.stop()


@pytest.fixture
def serve() -> Iterator[type[Served]]:
    """Start a server for one test (one that dies, or is not MCP); it is killed afterwards."""
    started: list[Served] = []

    class Started(Served):
        def __init__(self, mode: str) -> None:
            super().__init__(mode)
            started.append(self)

    yield Started
    for served in started:
        served.stop()


def remote(kind: str, url: str, **extra: object) -> dict[str, object]:
    return {"type": kind, "url": url, **extra}


def call(id: str, tool: str, server: str = "remote", **args: object) -> dict[str, object]:
    return {"type": "tool_use", "id": id, "name": f"mcp__{server}__{tool}", "input": args}


def scheduler(manager: McpManager, tmp_path: Path) -> nts.Scheduler:
    return nts.Scheduler(default_registry(include_mcp=manager), cwd=tmp_path)


def socket_fds() -> set[str]:
    """This process's open sockets (their inodes)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


# -- both transports ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_a_remote_server_runs_calls_with_its_expanded_headers(
    kind: str, servers: dict[str, Served], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NTS_TEST_MCP_PORT", str(servers[kind].port))
    monkeypatch.setenv("NTS_TEST_MCP_KEY", f"key-for-{kind}")
    monkeypatch.delenv("NTS_TEST_MCP_UNSET", raising=False)
    config = {"mcpServers": {"remote": remote(
        kind, f"http://127.0.0.1:${{NTS_TEST_MCP_PORT}}{PATHS[kind]}",
        headers={"X-Api-Key": "${NTS_TEST_MCP_KEY}", "X-Team": "${NTS_TEST_MCP_UNSET:-platform}"},
    )}}
    async with connect_mcp_servers(config, call_timeout=10) as manager:
        assert manager.errors == {}
        tools = {tool.name: tool for tool in manager.tools}
        assert set(tools) == {"mcp__remote__echo", "mcp__remote__header", "mcp__remote__slow", "mcp__remote__die"}
        sched = scheduler(manager, tmp_path)
        blocks = [
            call("e", "echo", text=f"over {kind}"),
            call("k", "header", name="x-api-key"),
            call("t", "header", name="x-team"),
            call("s", "slow", seconds=0),
        ]
        assert [len(batch.calls) for batch in sched.partition(blocks)] == [3, 1]  # readOnlyHint: together
        results = await sched.run(blocks)
    assert [r.tool_use_id for r in results] == ["e", "k", "t", "s"]
    assert not any(r.is_error for r in results), [r.text for r in results]
    assert [r.text for r in results] == [f"over {kind}", f"key-for-{kind}", "platform", "slept 0"]


# -- servers that cannot be used ----------------------------------------------------------------


async def test_a_server_that_is_down_fails_alone_and_the_others_work(servers: dict[str, Served], tmp_path: Path) -> None:
    down = free_port()  # nothing listens there
    config = {"mcpServers": {
        "remote": remote("http", servers["http"].url()),
        "down": remote("http", f"http://127.0.0.1:{down}/mcp"),
        "down_sse": remote("sse", f"http://127.0.0.1:{down}/sse"),
    }}
    started = time.monotonic()
    async with connect_mcp_servers(config, call_timeout=10, startup_timeout=8) as manager:
        assert time.monotonic() - started < 5, "a refused connection must not wait for the startup timeout"
        assert set(manager.errors) == {"down", "down_sse"}
        for name, path in (("down", "/mcp"), ("down_sse", "/sse")):
            error = manager.errors[name]
            assert manager.servers[name].state == "failed" and manager.servers[name].tools == []
            assert f"MCP server {name!r} at http://127.0.0.1:{down}{path} could not start: ConnectError" in error, error
        results = await scheduler(manager, tmp_path).run([call("d", "echo", server="down", text="x"), call("e", "echo", text="ok")])
    assert results[0].is_error  # its tools were never offered
    assert not results[1].is_error and results[1].text == "ok"


@pytest.mark.parametrize(
    ("kind", "mode", "path", "said"),
    [
        ("http", "status-500", "/mcp", "could not start: the server answered HTTP 500 Internal Server Error."),
        ("sse", "status-500", "/sse", "could not start: the server answered HTTP 500 Internal Server Error."),
        ("http", "status-401", "/mcp", "the server answered HTTP 401 Unauthorized (the server wants credentials: check the entry's headers"),
        ("http", "http", "/nowhere", "the server answered HTTP 404 Not Found (nothing answers MCP at this path: check the url)"),
        ("http", "garbage", "/mcp", "could not start: the server answered HTTP 200 with content type text/html, which is not MCP."),
        ("sse", "garbage", "/sse", "could not start: the server answered HTTP 200 with content type text/html, which is not MCP."),
    ],
    ids=["http-500", "sse-500", "http-401", "http-404", "http-garbage", "sse-garbage"],
)
async def test_a_server_that_answers_errors_or_not_mcp_is_reported(
    kind: str, mode: str, path: str, said: str, serve: type[Served], servers: dict[str, Served], tmp_path: Path
) -> None:
    broken = servers[mode] if mode in servers else serve(mode)
    url = f"http://127.0.0.1:{broken.port}{path}"
    config = {"broken": remote(kind, url), "remote": remote("sse", servers["sse"].url())}
    started = time.monotonic()
    async with connect_mcp_servers(config, call_timeout=10, startup_timeout=8) as manager:
        assert time.monotonic() - started < 5, "an answer that is not MCP must not wait for the startup timeout"
        assert list(manager.errors) == ["broken"]
        assert manager.errors["broken"].startswith(f"MCP server 'broken' at {url} ")
        assert said in manager.errors["broken"], manager.errors["broken"]
        [result] = await scheduler(manager, tmp_path).run([call("e", "echo", text="still fine")])
    assert result.text == "still fine"


async def test_a_server_that_never_answers_times_out_at_startup(serve: type[Served], servers: dict[str, Served], tmp_path: Path) -> None:
    silent = serve("silent")
    config = {"silent": remote("http", silent.url(), startup_timeout=1), "remote": remote("http", servers["http"].url())}
    started = time.monotonic()
    async with connect_mcp_servers(config, call_timeout=10) as manager:
        assert time.monotonic() - started < 5
        assert manager.errors == {"silent": f"MCP server 'silent' at {silent.url()} did not finish starting within 1 seconds."}
        [result] = await scheduler(manager, tmp_path).run([call("e", "echo", text="ok")])
    assert result.text == "ok"
    assert time.monotonic() - started < 8, "closing a server that never started must not wait for it"


# -- calls that cannot finish -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_a_call_that_outlives_its_timeout_gives_an_error_result(kind: str, servers: dict[str, Served], tmp_path: Path) -> None:
    config = {"remote": remote(kind, servers[kind].url(), timeout=1)}
    async with connect_mcp_servers(config, call_timeout=30) as manager:
        sched = scheduler(manager, tmp_path)
        started = time.monotonic()
        [slow] = await sched.run([call("s", "slow", seconds=30)])
        assert time.monotonic() - started < 4
        assert slow.is_error and "MCP tool slow on server 'remote' did not answer within 1 seconds" in slow.text
        [after] = await sched.run([call("e", "echo", text="after")])  # the server itself is fine
    assert after.text == "after"


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_a_server_that_dies_mid_call_gives_error_results_not_a_hang(kind: str, serve: type[Served], tmp_path: Path) -> None:
    dying = serve(kind)
    async with connect_mcp_servers({"remote": remote(kind, dying.url(), timeout=3)}, call_timeout=30) as manager:
        sched = scheduler(manager, tmp_path)
        started = time.monotonic()
        [died] = await sched.run([call("d", "die")])
        # mcp 2.x answers at once; mcp 1.x loses a Streamable HTTP request whose stream breaks, so its timeout ends it
        assert time.monotonic() - started < 3 + 2
        assert died.is_error, died.text
        assert dying.proc.wait(5) == 3
        started = time.monotonic()
        [after] = await sched.run([call("e", "echo", text="anyone?")])
        assert time.monotonic() - started < 2, "a call to a dead server must not wait for its timeout"
        assert after.is_error, after.text
        assert manager.servers["remote"].state == "failed"
        assert f"MCP server 'remote' at {dying.url()} lost its connection" in (manager.servers["remote"].error or "")
        [later] = await sched.run([call("e2", "echo", text="still?")])
    assert later.is_error and "not connected" in later.text


# -- closing ------------------------------------------------------------------------------------


async def test_closing_ends_every_connection_and_call(servers: dict[str, Served], tmp_path: Path) -> None:
    threads, sockets = set(threading.enumerate()), socket_fds()
    config = {kind: remote(kind, servers[kind].url()) for kind in ("http", "sse")}
    manager = await connect_mcp_servers(config, call_timeout=30).start()
    try:
        assert manager.errors == {}
        assert socket_fds() - sockets, "the connections should be open"
        sched = scheduler(manager, tmp_path)
        running = asyncio.gather(*(sched.run([call(kind, "slow", kind, seconds=30)]) for kind in ("http", "sse")))
        await asyncio.sleep(0.5)  # both calls are in flight while we close
    finally:
        started = time.monotonic()
        await manager.aclose()
    results = [result for [result] in await asyncio.wait_for(running, 5)]
    assert time.monotonic() - started < 5
    assert [r.text for r in results] == [
        f"MCP tool slow on server {kind!r} got no answer: the server was closed while the call was running." for kind in ("http", "sse")
    ]
    assert all(r.is_error for r in results)
    assert {name: (s.state, s.error) for name, s in manager.servers.items()} == {"http": ("closed", None), "sse": ("closed", None)}, [r.text for r in results]
    assert [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("mcp-")] == []
    deadline = time.monotonic() + 5
    while socket_fds() - sockets:
        assert time.monotonic() < deadline, f"sockets left open: {socket_fds() - sockets}"
        await asyncio.sleep(0.05)
    # the loop's own resolver threads (asyncio_N) idle in its executor; nothing else may stay
    assert [t.name for t in set(threading.enumerate()) - threads if not t.name.startswith("asyncio_")] == []
