"""Stopping what a command left behind must work however many processes it left."""

from __future__ import annotations

import os
import resource
import signal
import subprocess

import pytest

import nbtoolsched as nts

from ..conftest import run_one

pytestmark = pytest.mark.heavy  # starts and stops over a thousand processes

COUNT = 1100  # more pidfds than select() can take (FD_SETSIZE is 1024)


class Allow:
    async def __call__(self, request: object) -> nts.ApprovalAnswer:
        return nts.ApprovalAnswer.allow()


@pytest.fixture
def many_fds():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = COUNT + 512
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"needs {want} file descriptors, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _kill_leftovers(marker: str) -> None:
    found = subprocess.run(["pgrep", "-f", f"^sleep {marker}$"], capture_output=True, text=True).stdout.split()
    for pid in found:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


async def test_many_processes_left_behind_do_not_crash_the_call(project, many_fds):
    # _Target.alive() polls each process's pidfd with select.select(), which raises
    # "filedescriptor out of range in select()" for a descriptor above 1023: the call's
    # output is lost, the first stop pass dies before its SIGKILL, and the result is a
    # crash message. (A poll() or a per-fd os.waitid would not care.)
    perms = nts.Permissions(mode="default", cwd=project, approver=Allow())
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)
    marker = "3071"
    command = f"for i in $(seq {COUNT}); do setsid sleep {marker} & done; echo all started"
    try:
        result = await run_one(sched, "Bash", command=command)
    finally:
        _kill_leftovers(marker)
    assert "out of range" not in result.text
    assert "all started" in result.text
