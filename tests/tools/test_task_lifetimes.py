"""A shell command's helper tasks (pipe readers, the race of exit against abort) end with
the command: cancelled, aborted or finished, nothing is left on the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import BashTool


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool's own process handling: the path where the OS sandbox cannot start."""
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")


@pytest.fixture
def sched(tmp_path: Path) -> nts.Scheduler:
    return nts.Scheduler(nts.ToolRegistry([BashTool()]), cwd=tmp_path, session_dir=tmp_path / "session")


def use(command: str) -> dict[str, object]:
    return {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": command}}


async def test_a_command_cancelled_while_it_prints_leaves_no_task(sched: nts.Scheduler) -> None:
    before = asyncio.all_tasks()
    first_line = asyncio.Event()

    async def consume() -> None:
        async for event in sched.stream([use("echo started; sleep 30")]):
            if getattr(event, "data", None) == {"stream": "stdout", "line": "started"}:
                first_line.set()

    consumer = asyncio.ensure_future(consume())
    await asyncio.wait_for(first_line.wait(), 20)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert asyncio.all_tasks() == before


async def test_an_aborted_command_leaves_no_task(sched: nts.Scheduler) -> None:
    before = asyncio.all_tasks()
    abort = nts.AbortSignal()
    run = asyncio.ensure_future(sched.run([use("echo started; sleep 30")], abort=abort))
    await asyncio.sleep(0.5)
    abort.abort(nts.USER_ABORT)
    [result] = await asyncio.wait_for(run, 20)
    assert result.is_error
    assert asyncio.all_tasks() == before


async def test_output_held_open_by_a_background_process_leaves_no_reader(sched: nts.Scheduler) -> None:
    """The readers that were given up on (a background child kept the pipe) have ended."""
    before = asyncio.all_tasks()
    [result] = await sched.run([use("(sleep 30 &); echo done")])
    assert "done" in result.text
    assert asyncio.all_tasks() == before
