"""MCP servers over Streamable HTTP and HTTP+SSE: real servers (remote_server.py) in subprocesses.

Each server listens on 127.0.0.1 on a free port; the tests connect through
``connect_mcp_servers`` as a user's ``.mcp.json`` would, and run calls through the
Scheduler. A server that is down, silent, answers an HTTP error or is not MCP at all is
reported by name and URL while the others work; a slow call times out; a server that
dies mid-call gives error results, never a hang; closing leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import logging
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
from nbtoolsched.tools.mcp import _transport
from nbtoolsched.tools.mcp._manager import McpManager, connect_mcp_servers

pytestmark = pytest.mark.timeout(60)

SERVER = str(Path(__file__).with_name("remote_server.py"))
PATHS = {"http": "/mcp", "sse": "/sse"}  # where each transport's endpoint is
READY_WITHIN = 15.0
SECRET = "sk-test-SECRET-4711"


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
        assert set(tools) == {f"mcp__remote__{name}" for name in ("echo", "header", "slow", "die", "big", "http_error")}
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


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_an_http_error_on_one_call_fails_that_call_at_once_without_the_urls_secret(
    kind: str, servers: dict[str, Served], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 (an HTML page) on one tools/call: that call says so at once; the server stays connected.

    The url's query and the headers hold a secret: it is in no result, no error and no log record
    (httpx logs every request's url at INFO).
    """
    monkeypatch.setenv("NTS_TEST_MCP_SECRET", SECRET)
    caplog.set_level(logging.DEBUG)
    url = servers[kind].url() + "?key=${NTS_TEST_MCP_SECRET}"
    config = {"remote": remote(kind, url, headers={"Authorization": "Bearer ${NTS_TEST_MCP_SECRET}"})}
    async with connect_mcp_servers(config, call_timeout=10) as manager:
        assert manager.errors == {}
        sched = scheduler(manager, tmp_path)
        started = time.monotonic()
        [failed] = await sched.run([call("x", "http_error", status=500)])
        assert time.monotonic() - started < 3, "the status is known at once: the call must not wait for its timeout"
        assert failed.is_error
        assert failed.text == "MCP tool http_error on server 'remote' failed: the server answered HTTP 500 Internal Server Error."
        server = manager.servers["remote"]
        assert (server.state, server.error) == ("connected", None)
        [bad_gateway, after] = await sched.run([call("y", "http_error", status=502), call("e", "echo", text="still here")])
        assert "the server answered HTTP 502 Bad Gateway" in bad_gateway.text
        assert not after.is_error and after.text == "still here"
        assert server.config.where == f"at {servers[kind].url()}?..."
    said = [failed.text, bad_gateway.text, caplog.text, *(r.getMessage() for r in caplog.records)]
    assert not [text for text in said if SECRET in text]
    assert any("HTTP Request: POST" in r.getMessage() for r in caplog.records), "httpx logged its requests (redacted)"


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_httpx_and_the_sdk_log_the_url_with_its_secrets_redacted(
    kind: str, servers: dict[str, Served], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NTS_TEST_MCP_SECRET", SECRET)
    caplog.set_level(logging.DEBUG)
    config = {"remote": remote(kind, servers[kind].url() + "?key=${NTS_TEST_MCP_SECRET}")}
    async with connect_mcp_servers(config, call_timeout=10) as manager:
        assert manager.errors == {}
        assert (await manager.servers["remote"].call_tool("echo", {"text": "hi"})).content[0].text == "hi"
    requests = "\n".join(r.getMessage() for r in caplog.records if r.name in ("httpx", "httpx2") and r.levelno == logging.INFO)
    first = "GET" if kind == "sse" else "POST"  # HTTP+SSE posts to the endpoint its stream names, without the query
    assert f"HTTP Request: {first} {servers[kind].url()}?key=*** " in requests, requests
    assert not [r.getMessage() for r in caplog.records if SECRET in r.getMessage()]
    assert SECRET not in caplog.text  # tracebacks too


async def test_a_json_rpc_error_from_tools_list_is_the_startup_error_not_the_get_streams_405(serve: type[Served]) -> None:
    served = serve("http-list-error")  # its optional GET stream answers 405, as the spec allows
    async with connect_mcp_servers({"listless": remote("http", served.url())}, startup_timeout=8) as manager:
        error = manager.errors["listless"]
    assert error.startswith(f"MCP server 'listless' at {served.url()} could not start: "), error
    assert "tool registry database is down" in error and "405" not in error, error


@pytest.mark.parametrize(
    ("kind", "mode", "said"),
    [
        ("http", "endless-json", "could not start: the server's answer to initialize was larger than 4 MB and was refused."),
        ("http", "endless-events", "could not start: the server's answer to initialize was larger than 4 MB and was refused."),
        ("sse", "sse-endless", "could not start: the server sent an event larger than 4 MB on its event stream, which was refused."),
    ],
)
async def test_an_answer_that_never_ends_fails_startup_at_once(kind: str, mode: str, said: str, serve: type[Served]) -> None:
    endless = serve(mode)
    url = endless.url("sse" if kind == "sse" else "http")
    started = time.monotonic()
    async with connect_mcp_servers({"endless": remote(kind, url)}, startup_timeout=8) as manager:
        assert time.monotonic() - started < 5, "reading stops at the limit, long before the startup timeout"
        assert manager.errors == {"endless": f"MCP server 'endless' at {url} {said}"}


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_a_call_result_over_the_limit_is_refused(
    kind: str, serve: type[Served], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streamable HTTP fails that call only; on HTTP+SSE the oversized event ends the stream, so the connection."""
    monkeypatch.setattr(_transport, "CALL_LIMIT", 1 << 20)  # 1 MB instead of 32: the same code, quicker
    served = serve(kind)
    async with connect_mcp_servers({"remote": remote(kind, served.url())}, call_timeout=10) as manager:
        sched = scheduler(manager, tmp_path)
        [fits] = await sched.run([call("f", "big", size=300_000)])
        assert not fits.is_error, fits.text
        started = time.monotonic()
        [refused] = await sched.run([call("r", "big", size=1_500_000)])
        assert time.monotonic() - started < 3
        assert refused.is_error and "larger than 1 MB" in refused.text, refused.text
        server = manager.servers["remote"]
        if kind == "http":
            assert refused.text == "MCP tool big on server 'remote' failed: the server's answer to tools/call was larger than 1 MB and was refused."
            assert server.state == "connected"
            [after] = await sched.run([call("e", "echo", text="after")])
            assert after.text == "after"
        else:
            assert server.state == "failed"
            assert server.error == (
                f"MCP server 'remote' at {served.url()} lost its connection: "
                "the server sent an event larger than 1 MB on its event stream, which was refused."
            )


async def test_a_body_cut_short_fails_startup_at_once_and_stderr_stays_clean(serve: type[Served]) -> None:
    """Run in a child process: the SDK's own error log must not reach stderr when nobody set up logging."""
    served = serve("truncated")
    script = (
        "import asyncio, sys, time\n"
        "from nbtoolsched.tools import connect_mcp_servers\n"
        "async def main():\n"
        "    started = time.monotonic()\n"
        "    async with connect_mcp_servers({'cut': {'type': 'http', 'url': sys.argv[1]}}, startup_timeout=8) as m:\n"
        "        print(round(time.monotonic() - started, 1), m.errors['cut'])\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script, served.url()], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    took, _, error = done.stdout.strip().partition(" ")
    assert float(took) < 5, "a body shorter than its Content-Length is known at once"
    assert error.startswith(
        f"MCP server 'cut' at {served.url()} could not start: the server's answer to initialize broke off before its end ("
    ), error
    assert done.stderr == ""


async def test_closing_a_manager_while_a_server_starts_leaves_it_closed_not_failed(serve: type[Served]) -> None:
    silent = serve("silent")
    for connected_first in (False, True):
        sockets = socket_fds()
        manager = connect_mcp_servers({"s": remote("http", silent.url())}, startup_timeout=8)
        starting = asyncio.ensure_future(manager.start())
        deadline = time.monotonic() + 5
        while connected_first and not socket_fds() - sockets:  # the server has the request and never answers
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await manager.aclose()
        await asyncio.wait_for(starting, 5)
        assert time.monotonic() - started < 3, "start() returns when the manager closes, not at its startup timeout"
        assert (manager.servers["s"].state, manager.servers["s"].error, manager.errors) == ("closed", None, {})


async def test_errors_show_the_url_as_written_never_what_its_variables_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTS_TEST_MCP_SECRET", SECRET)
    down = free_port()  # nothing listens there
    written = f"http://127.0.0.1:{down}/k/${{NTS_TEST_MCP_SECRET}}/mcp"
    async with connect_mcp_servers({"zap": remote("http", written)}, startup_timeout=8) as manager:
        error = manager.errors["zap"]
    assert error.startswith(f"MCP server 'zap' at {written} could not start: ConnectError"), error
    assert SECRET not in error


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
