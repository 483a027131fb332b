"""MCP servers that hang, crash or never start: error results in time, never a hung scheduler."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import AsyncIterator

import pytest
import pytest_asyncio

import nbtoolsched as nts
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.tools.mcp._manager import McpManager, connect_mcp_servers

pytestmark = [pytest.mark.timeout(90), pytest.mark.asyncio(loop_scope="module")]

SERVER = str(Path(__file__).with_name("flaky_server.py"))
CALL_TIMEOUT = 3.0


def server_pids(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            pids.append(int(entry))
    return pids


def flaky_config(*names: str) -> dict:
    return {"mcpServers": {name: {"command": sys.executable, "args": [SERVER, name]} for name in names}}


def call(id: str, tool: str, server: str = "flaky", **args: object) -> dict:
    return {"type": "tool_use", "id": id, "name": f"mcp__{server}__{tool}", "input": args}


def scheduler(manager: McpManager, tmp_path: Path) -> nts.Scheduler:
    registry = ToolRegistry()
    manager.register(registry)
    return nts.Scheduler(registry, cwd=tmp_path)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def steady() -> AsyncIterator[McpManager]:
    """A server shared by the tests that leave it alive (starting one costs seconds)."""
    async with connect_mcp_servers(flaky_config("flaky"), call_timeout=CALL_TIMEOUT) as manager:
        yield manager


async def test_a_hanging_call_times_out_while_its_siblings_finish(steady: McpManager, tmp_path: Path) -> None:
    sched = scheduler(steady, tmp_path)
    blocks = [call("h", "hang"), call("e", "echo", text="still here", times=2)]
    assert len(sched.partition(blocks)) == 1  # both readOnlyHint: they run together
    started = time.monotonic()
    hung, echoed = await sched.run(blocks)
    assert time.monotonic() - started < CALL_TIMEOUT + 20
    assert hung.is_error and "did not answer within 3 seconds" in hung.text
    assert not echoed.is_error and echoed.text == "still here still here"
    [again] = await sched.run([call("e2", "echo", text="again")])  # the server itself is fine
    assert again.text == "again"


async def test_a_crash_mid_call_gives_errors_and_later_calls_fail_fast(tmp_path: Path) -> None:
    async with connect_mcp_servers(flaky_config("flaky"), call_timeout=30) as manager:
        sched = scheduler(manager, tmp_path)
        started = time.monotonic()
        crashed, after = await sched.run([call("c", "crash"), call("a", "echo", text="x")])
        assert time.monotonic() - started < 25, "a dead server must not cost the full call timeout"
        assert crashed.is_error and "connection is closed" in crashed.text
        assert after.is_error and "not connected" in after.text
        assert manager.servers["flaky"].state == "failed"


async def test_server_errors_come_back_as_error_results(steady: McpManager, tmp_path: Path) -> None:
    [failed] = await scheduler(steady, tmp_path).run([call("f", "fail", message="kaputt")])
    assert failed.is_error and "fail" in failed.text


async def test_closing_the_manager_stops_every_server_process(tmp_path: Path) -> None:
    marker = f"{SERVER} closing-{os.getpid()}"
    config = {"mcpServers": {"closing": {"command": sys.executable, "args": [SERVER, f"closing-{os.getpid()}"]}}}
    manager = await connect_mcp_servers(config, call_timeout=CALL_TIMEOUT).start()
    try:
        assert server_pids(marker), "the server process should be running"
        sched = scheduler(manager, tmp_path)
        hung = asyncio.ensure_future(sched.run([call("h", "hang", server="closing")]))
        await asyncio.sleep(0.5)  # the hang is in flight while we close
    finally:
        await manager.aclose()
    [result] = await asyncio.wait_for(hung, 20)
    assert result.is_error
    deadline = time.monotonic() + 15
    while server_pids(marker):
        assert time.monotonic() < deadline, "the server process outlived the manager"
        await asyncio.sleep(0.1)


async def test_servers_that_cannot_start_are_reported_and_the_rest_work(tmp_path: Path) -> None:
    config = flaky_config("good")
    config["mcpServers"]["missing"] = {"command": str(tmp_path / "no-such-binary")}
    config["mcpServers"]["silent"] = {
        "command": sys.executable, "args": ["-c", "import time; time.sleep(60)  # silent-server"], "startup_timeout": 3,
    }
    started = time.monotonic()
    async with McpManager(config, call_timeout=CALL_TIMEOUT) as manager:
        assert time.monotonic() - started < 30
        assert set(manager.errors) == {"missing", "silent"}
        assert "no-such-binary" in manager.errors["missing"]
        assert "within 3 seconds" in manager.errors["silent"]
        assert {t.name for t in manager.tools} >= {"mcp__good__echo", "mcp__good__hang"}
        assert not server_pids("silent-server"), "a server that never started must be stopped"
        [result] = await scheduler(manager, tmp_path).run([call("e", "echo", server="good", text="ok")])
        assert result.text == "ok"
