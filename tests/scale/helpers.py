"""Agent sessions for the engine tests: scripts for ScriptedModel, tasks in their own folders.

Everything here pickles (``functools.partial`` of ``ScriptedModel``), so the same tasks run
in this process, in worker processes and on Ray.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from pathlib import Path
from typing import Callable

from nbtoolsched import ScriptedModel
from nbtoolsched.scale import AgentTask, Policy
from nbtoolsched.scale._policy import SettingsSource


def use(name: str, **input: object) -> dict:
    return {"type": "tool_use", "name": name, "input": input}


# Read + Grep + ls in parallel, then a Write (asks), then rm (denied by the policy).
WORK = [
    [use("Read", file_path="README.md"), use("Grep", pattern="line", path="."), use("Bash", command="ls")],
    [use("Write", file_path="notes.txt", content="seen\n")],
    [use("Bash", command="rm -rf build")],
    "done",
]
POLICY = Policy(name="work", deny=("Bash(rm:*)",))


def seed(workdir: Path) -> None:
    (workdir / "README.md").write_text("# demo\nline two\n")


def work_task(folder: Path, n: int, script: list | None = None, policy: Policy = POLICY) -> AgentTask:
    return AgentTask(functools.partial(ScriptedModel, script or WORK), "tidy up", policy, workdir=str(folder / f"s{n}"),
                     setup=seed, name=f"s{n}")


def broken_task(folder: Path) -> AgentTask:
    """A session whose model cannot even be made: reported as failed, the others go on."""
    return AgentTask(functools.partial(ScriptedModel, 42), "tidy up", POLICY, workdir=str(folder / "broken"), name="broken")


# The sleepers report their shell's and its parent's pids as $$ and $PPID, which are host
# pids only outside the OS sandbox (its PID namespace numbers its own): their settings turn
# the writing sandbox off, as a team's settings.json may (the sandbox's own cleanup of what
# a command leaves is tested in tests/sandbox).
UNSANDBOXED = SettingsSource("userSettings", "sleepers.json", {"sandbox": {"enabled": False}})


def sleeper_task(folder: Path, n: int) -> AgentTask:
    """A session whose Bash call runs a minute: it writes its shell's and its parent's pids first."""
    script = [[use("Bash", command="echo $$ $PPID > pids.txt; sleep 60")], "done"]
    return AgentTask(functools.partial(ScriptedModel, script), "wait", Policy(mode="bypassPermissions", settings=(UNSANDBOXED,)),
                     workdir=str(folder / f"sleep{n}"), name=f"sleep{n}")


def stalling_policy(folder: Path) -> Policy:
    """A policy whose PreToolUse hook, while ``folder/stall`` exists, writes its own pid and
    its parent's (the worker process replaying the session) to ``folder/hooks/`` and waits:
    a worker caught mid-session, for a test to kill. Without the file it says nothing, so
    the replays decide as under no hook at all."""
    (folder / "hooks").mkdir(parents=True, exist_ok=True)
    command = (f"if [ -e {folder}/stall ]; then echo $$ $PPID > {folder}/hooks/$$.pids; "
               f"while [ -e {folder}/stall ]; do sleep 0.05; done; fi")
    hooks = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]}}
    return Policy(name="stalling", deny=("Bash(rm:*)",), settings=(SettingsSource("userSettings", "stall.json", hooks),))


def stalled(folder: Path) -> list[tuple[int, int]]:
    """(hook, worker) pids of the hooks waiting on ``folder/stall``."""
    found = []
    for path in sorted((folder / "hooks").glob("*.pids")):
        text = path.read_text().split()
        if len(text) == 2:
            found.append((int(text[0]), int(text[1])))
    return found


def kill_stalled_worker(folder: Path, killed: list[int], before: Callable[[int], object] = lambda pid: None) -> None:
    """Wait (up to 120 s) for a hook of ``stalling_policy(folder)`` to wait, then SIGKILL the
    worker replaying that session and the hook, note the worker in ``killed``, and let
    the other sessions go on (``folder/stall`` removed). ``before(worker)`` runs first,
    while the worker is still alive. Meant for a thread beside the run."""
    deadline = time.monotonic() + 120
    while not stalled(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    hook, worker = stalled(folder)[0]
    before(worker)
    os.kill(worker, signal.SIGKILL)  # a worker process, mid-session
    os.killpg(hook, signal.SIGKILL)
    killed.append(worker)
    (folder / "stall").unlink()


def pids_of(folder: Path) -> list[int]:
    return [int(p) for f in sorted(folder.glob("sleep*/pids.txt")) for p in f.read_text().split()]


def alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped by its parent, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"
