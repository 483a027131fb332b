"""Stopping what a command left running works however many processes, and never costs the output.

Real bash, real ``setsid sleep`` processes; each test uses a unique sleep duration as a
tag and kills whatever of it is left by pid at the end.
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

import nbtoolsched as nts
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.tools import _bash_processes as bash_processes
from nbtoolsched.tools._bash import BashTool

from tests.processes import sleeping

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the process tracking reads /proc"),
    pytest.mark.heavy,  # starts and stops more processes than the tracking follows
]


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool's own tracking (markers, pidfds): the path where the OS sandbox cannot
    start. Inside it, its PID namespace stops everything: tests/sandbox."""
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")


def use(command: str) -> dict:
    return {"type": "tool_use", "id": "toolu_procs", "name": "Bash", "input": {"command": command}}


@pytest.fixture
def tag() -> Iterator[str]:
    value = f"{2000 + random.randrange(1000)}.{random.randrange(10**8):08d}"
    yield value
    for pid in sleeping(value):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sched(tmp_path: Path) -> nts.Scheduler:
    return nts.Scheduler(ToolRegistry([BashTool()]), cwd=tmp_path, session_dir=tmp_path / "session")


def start_setsid(tag: str, count: int) -> str:
    return f"for i in $(seq {count}); do setsid sleep {tag} >/dev/null 2>&1 & done; echo all started"


async def test_a_pidfd_above_1023_is_asked_with_poll(tag: str) -> None:
    # select() cannot take a descriptor above 1023 ("filedescriptor out of range").
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"needs 1200 file descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    child = subprocess.Popen(["sleep", tag], env={**os.environ, bash_processes.MARKER_VAR: "m1"})
    fillers = [os.open(os.devnull, os.O_RDONLY) for _ in range(1030)]
    try:
        found = bash_processes.Found(child.pid, "sleep", False)
        target = bash_processes._Target(found, "m1", bash_processes.PROC_ROOT)
        assert target.fd is not None and target.fd > 1023
        assert bash_processes._alive([target], bash_processes.PROC_ROOT) == {child.pid}
        target.signal(signal.SIGKILL)
        child.wait()
        assert bash_processes._alive([target], bash_processes.PROC_ROOT) == set()
        target.close()
    finally:
        for fd in fillers:
            os.close(fd)
        child.kill()
        child.wait()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_beyond_the_followed_limit_processes_are_still_stopped_and_counted(
    sched: nts.Scheduler, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_processes, "MAX_FOLLOWED", 4)
    monkeypatch.setattr(bash_processes, "MAX_PIDFDS", 2)
    settle = f"\nuntil [ $(pgrep -c -f '^sleep {tag}$') -ge 9 ]; do sleep 0.01; done"
    [result] = await sched.run([use(start_setsid(tag, 9) + settle)])
    assert sleeping(tag) == []
    assert result.text.startswith("all started") and not result.is_error
    assert "9 processes the command started were still running and stopped when the command finished" in result.text
    assert "5 of them signalled by pid, beyond the 4 followed one by one" in result.text


async def test_a_failure_while_stopping_keeps_the_output(sched: nts.Scheduler, tag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("filedescriptor out of range in select()")

    monkeypatch.setattr(bash_processes, "find_processes", broken)
    [result] = await sched.run([use(f"echo kept; sleep {tag} >/dev/null 2>&1 &")])
    assert result.text.startswith("kept")
    assert "stopping what the command left running failed (ValueError: filedescriptor out of range" in result.text
    for _ in range(200):  # the process group was killed all the same (init reaps it)
        if not sleeping(tag):
            break
        await asyncio.sleep(0.05)
    assert sleeping(tag) == []
