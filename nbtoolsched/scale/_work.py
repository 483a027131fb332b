"""What a worker runs: one session, or a chunk of them, each with its own time limit.

The same functions run in a thread of this process, in a local worker process and in a
Ray task or actor, so a session gives the same result wherever it runs. A session that
raises is a ``failed`` result with its error, never an exception that takes its chunk
down. ``timeout`` (seconds per session) is enforced twice over: ``asyncio.timeout``
cancels a session at its next await (an agent's tools are stopped as on any cancel);
where the chunk runs on a process's main thread (a worker process, a Ray task) a
``SIGALRM`` one second later interrupts what never awaits (a blocking read, a loop that
never yields). A transcript path that is not a regular file (a FIFO named ``*.jsonl``,
a device) is unreadable at once rather than read forever.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import stat
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence, Union

from ._agents import AgentSummary, AgentTask, run_agent_task
from ._policy import Policy
from ._replay import SessionReplay, areplay_session

__all__ = ["ReplayTask", "SessionResult", "SessionTimeout", "Task", "SessionValue", "run_one", "run_chunk", "describe",
           "label_of", "worker_name"]

Status = Literal["ok", "failed", "cancelled"]
HARD_STOP = 1.0  # seconds after a session's timeout at which SIGALRM interrupts it (main thread only)


@dataclass(frozen=True)
class ReplayTask:
    """Replay one transcript under a policy (see ``replay_session``). A relative ``path``
    (and ``checkout``) is made absolute where the run starts, not where a worker runs it."""

    path: str
    policy: Policy = field(default_factory=Policy)
    include_sidechains: bool = False
    checkout: str | None = None

    @property
    def label(self) -> str:
        return os.path.basename(self.path)


Task = ReplayTask | AgentTask
SessionValue = Union[SessionReplay, AgentSummary]  # what a ReplayTask, an AgentTask gives


@dataclass
class SessionResult:
    """One session's result: its value, or why it has none."""

    index: int
    name: str
    status: Status
    value: SessionValue | None = None  # a ReplayTask's SessionReplay, an AgentTask's AgentSummary
    error: str | None = None
    seconds: float = field(default=0.0, compare=False)
    worker: str = field(default="", compare=False)  # host:pid that ran it
    attempts: int = field(default=1, compare=False)  # more than 1: its worker died and it ran again

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class SessionTimeout(BaseException):
    """Raised by SIGALRM in a session that outlived its time (a BaseException, so no
    ``except Exception`` inside the session swallows it)."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def describe(err: BaseException) -> str:
    """The error and where it was raised (file, line, function), on one line."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(err).__name__}: {err}{where}"


def label_of(task: Any) -> str:
    return str(getattr(task, "label", type(task).__name__))


def _timed_out(timeout: float) -> str:
    return f"timed out after {timeout:g} s (the run's per-session timeout): stopped, and the other sessions went on"


async def _session(task: Task) -> SessionValue:
    if isinstance(task, ReplayTask):
        policy = task.policy or Policy(name="default")
        try:
            mode = os.stat(task.path).st_mode
        except OSError:
            mode = stat.S_IFREG  # missing here: the replay says so
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            return SessionReplay(task.path, policy.name, "unreadable", problems=[f"the file cannot be read: it is {kind}"])
        return await areplay_session(task.path, task.policy, include_sidechains=task.include_sidechains, checkout=task.checkout)
    if isinstance(task, AgentTask):
        return await run_agent_task(task)
    raise TypeError(f"a session task must be a ReplayTask or an AgentTask, got {type(task).__name__}")


async def run_one(index: int, task: Task, timeout: float | None = None) -> SessionResult:
    """Run one session; whatever happens, one result (a cancel of the caller still cancels)."""
    started = time.perf_counter()
    limit = asyncio.timeout(timeout)
    try:
        async with limit:
            value = await _session(task)
    except TimeoutError as err:
        reason = _timed_out(timeout) if timeout is not None and limit.expired() else describe(err)
        return SessionResult(index, label_of(task), "failed", None, reason, time.perf_counter() - started, worker_name())
    except Exception as err:  # noqa: BLE001 - a failing session is reported, and the others go on
        return SessionResult(index, label_of(task), "failed", None, describe(err), time.perf_counter() - started, worker_name())
    return SessionResult(index, label_of(task), "ok", value, None, time.perf_counter() - started, worker_name())


def _alarm(signum: int, frame: Any) -> None:
    raise SessionTimeout()


def run_chunk(chunk: Sequence[tuple[int, Task]], timeout: float | None = None, alarm: bool = False) -> list[SessionResult]:
    """A worker's job: the sessions of a chunk one after another, on one event loop.

    ``alarm``: this is a worker process's main thread, so SIGALRM may interrupt a session
    that is past its timeout and does not await."""
    hard = alarm and timeout is not None and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _alarm) if hard else None
    pending, _ = signal.getitimer(signal.ITIMER_REAL) if hard else (0.0, 0.0)  # someone else's alarm: kept
    began = time.monotonic()
    out: list[SessionResult] = []
    runner = asyncio.Runner()
    try:
        for index, task in chunk:
            started = time.perf_counter()
            try:
                if hard:
                    signal.setitimer(signal.ITIMER_REAL, float(timeout or 0) + HARD_STOP)
                try:
                    out.append(runner.run(run_one(index, task, timeout)))
                finally:
                    if hard:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            except SessionTimeout:
                out.append(SessionResult(index, label_of(task), "failed", None, _timed_out(float(timeout or 0)),
                                         time.perf_counter() - started, worker_name()))
                runner.close()  # the loop may have been interrupted anywhere: a fresh one for the next session
                runner = asyncio.Runner()
    finally:
        runner.close()
        if hard:
            signal.signal(signal.SIGALRM, previous)
            if pending:
                signal.setitimer(signal.ITIMER_REAL, max(0.001, pending - (time.monotonic() - began)))
    return out
