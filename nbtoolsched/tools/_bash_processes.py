"""Every process a shell command started, found and stopped when its call ends.

The command leads its own process group, and every process it starts inherits a marker
unique to the call in its environment (``MARKER_VAR``). When the call ends (exit,
timeout, abort, cancel) the group is signalled, and so is every process that still
carries the marker, found by reading ``/proc/*/environ``: that catches what left the
group (``setsid``, double-forking daemons). Processes are signalled through pidfds where
the system has them, so a pid reused in the meantime is never hit. Whether they have
exited is asked with poll(), which takes any descriptor (select() stops at 1023). One
call holds at most MAX_PIDFDS pidfds and follows at most MAX_FOLLOWED processes one by
one; beyond that, processes just found by their marker are signalled by pid and
counted, and the result says so.

Measured alternatives: a subreaper helper (``PR_SET_CHILD_SUBREAPER``) catches even a
process that clears its environment, but costs a helper interpreter per command (about
20 ms) and dies with a ``kill $PPID``; a cgroup needs a writable, delegated hierarchy,
which most user sessions and containers lack. The marker costs one pass over /proc
(about 1 ms per 70 processes) and needs nothing.

What this cannot find, and the result does not pretend otherwise: a process that left
the group *and* was started with a cleared or rewritten environment (``setsid env -i
...``); a process of another user (setuid) cannot be signalled. Without /proc (not
Linux) only the group is stopped.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

__all__ = ["MARKER_VAR", "Found", "Stopped", "new_marker", "find_processes", "stop_processes", "stopped_note", "survivors_note"]

MARKER_VAR = "NBTOOLSCHED_CALL_ID"
PROC_ROOT = Path("/proc")
POLL_S = 0.02
MAX_FOLLOWED = 1000  # processes waited for and listed one by one; more are signalled and counted
MAX_PIDFDS = 128  # pidfds one call holds (descriptors are shared with the rest of the program)


def new_marker() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Found:
    pid: int
    name: str
    in_group: bool  # False: it left the command's process group (setsid) and was found by its marker

    def label(self) -> str:
        where = "" if self.in_group else ", had left the command's process group"
        return f"{self.name} (pid {self.pid}{where})"


@dataclass(slots=True)
class Stopped:
    """What was still running when the call ended, and what of it could not be stopped."""

    found: list[Found] = field(default_factory=list)  # followed one by one, besides the shell itself
    survivors: list[tuple[Found, str]] = field(default_factory=list)  # with the reason
    tracked: bool = True  # False without /proc: only the process group could be signalled
    group_was_running: bool = False
    unfollowed: int = 0  # found beyond MAX_FOLLOWED: signalled by pid, counted, not listed
    unfollowed_left: int = 0  # of those, how many a last look still found running
    problem: str = ""  # stopping failed part way (the group was still killed)

    @property
    def stopped(self) -> list[Found]:
        alive = {f.pid for f, _ in self.survivors}
        return [f for f in self.found if f.pid not in alive]


def find_processes(pgid: int, marker: str, proc_root: Path | None = None) -> list[Found] | None:
    """Live processes in group ``pgid`` or carrying ``marker``; None when /proc cannot be read."""
    proc_root = proc_root or PROC_ROOT
    try:
        entries = os.listdir(proc_root)
    except OSError:
        return None
    needle = f"{MARKER_VAR}={marker}".encode()
    me = os.getpid()
    found: list[Found] = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        stat = _stat(proc_root, pid)
        if stat is None:
            continue
        _, group, name = stat
        if group == pgid or _has_marker(proc_root, pid, needle):
            found.append(Found(pid, name, group == pgid))
    return found


def _stat(proc_root: Path, pid: int) -> tuple[str, int, str] | None:
    """(state, process group, name) of a live process; None if it is gone or a zombie."""
    try:
        raw = (proc_root / str(pid) / "stat").read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    name = raw[raw.find("(") + 1 : raw.rfind(")")]
    fields = raw[raw.rfind(")") + 1 :].split()
    if len(fields) < 3 or fields[0] in ("Z", "X", "x"):
        return None
    return fields[0], int(fields[2]), name


def _has_marker(proc_root: Path, pid: int, needle: bytes) -> bool:
    try:
        return needle in (proc_root / str(pid) / "environ").read_bytes()
    except OSError:  # another user's process, or gone
        return False


class _Target:
    """One process outside the group, held by a pidfd (where there are pidfds, up to
    MAX_PIDFDS per call) once we know it is ours; otherwise by its pid."""

    def __init__(self, found: Found, marker: str, proc_root: Path, use_pidfd: bool = True) -> None:
        self.found = found
        self.fd: int | None = None
        self.error = ""
        if use_pidfd and hasattr(os, "pidfd_open"):
            try:
                self.fd = os.pidfd_open(found.pid)
            except OSError:
                self.fd = None  # already gone, no pidfds here, or out of descriptors: fall back to the pid
            # The pidfd pins the process we checked: if the pid was reused before it was
            # opened, the marker is not there and we let go.
            if self.fd is not None and not _has_marker(proc_root, found.pid, f"{MARKER_VAR}={marker}".encode()):
                os.close(self.fd)
                self.fd = None
                self.error = "gone"

    def signal(self, sig: int) -> None:
        if self.error == "gone":
            return
        try:
            if self.fd is not None:
                signal.pidfd_send_signal(self.fd, sig)
            else:
                os.kill(self.found.pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.error = "not permitted to signal it"

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _alive(targets: Iterable[_Target], proc_root: Path) -> set[int]:
    """The pids of ``targets`` still running. A pidfd polls readable once its process has
    exited; poll() (not select(), which cannot take a descriptor above 1023) asks all at once."""
    alive: set[int] = set()
    by_fd: dict[int, _Target] = {}
    for target in targets:
        if target.error == "gone":
            continue
        if target.fd is not None:
            by_fd[target.fd] = target
        elif _stat(proc_root, target.found.pid) is not None:
            alive.add(target.found.pid)
    if by_fd:
        poller = select.poll()
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        exited = {fd for fd, _ in poller.poll(0)}
        alive.update(target.found.pid for fd, target in by_fd.items() if fd not in exited)
    return alive


async def stop_processes(proc: asyncio.subprocess.Process, marker: str, grace: float) -> Stopped:
    """SIGTERM the group and every marked process, SIGKILL what is left after ``grace``.

    Returns at once when nothing is left (the common case: one pass over /proc). Never
    raises for a failure of its own: the command's output matters more, so the group
    is killed and the failure is reported in ``problem``.
    """
    try:
        return await _stop(proc, marker, grace)
    except Exception as err:  # noqa: BLE001 - see above
        _signal_group(proc.pid, signal.SIGKILL)
        return Stopped(tracked=False, problem=f"{type(err).__name__}: {err}")


async def _stop(proc: asyncio.subprocess.Process, marker: str, grace: float) -> Stopped:
    proc_root = PROC_ROOT
    pgid = proc.pid  # start_new_session=True: the leader's pid is the group id
    before = find_processes(pgid, marker, proc_root)
    report = Stopped(tracked=before is not None)
    extra: list[Found] = []  # beyond MAX_FOLLOWED
    if before is not None:
        others = [f for f in before if f.pid != pgid]
        report.found, extra = others[:MAX_FOLLOWED], others[MAX_FOLLOWED:]
        report.unfollowed = len(extra)
        if not before and proc.returncode is not None:
            return report
    targets: dict[int, _Target] = {}

    def follow(found: Found) -> None:
        targets[found.pid] = _Target(found, marker, proc_root, use_pidfd=len(targets) < MAX_PIDFDS)

    for f in report.found:
        if not f.in_group:
            follow(f)
    try:
        report.group_was_running = _signal_group(pgid, signal.SIGTERM)
        for target in targets.values():
            target.signal(signal.SIGTERM)
        _signal_pids(extra, signal.SIGTERM)
        await _wait_gone(proc, report, targets, grace, proc_root)
        # Stragglers, and whatever started meanwhile (a trap, a respawning loop).
        known = {f.pid for f in report.found}
        extra = []
        for late in find_processes(pgid, marker, proc_root) or []:
            if late.pid == pgid or late.pid in known:
                continue
            if len(report.found) < MAX_FOLLOWED:
                report.found.append(late)
                if not late.in_group:
                    follow(late)
            else:
                extra.append(late)
        report.unfollowed = max(report.unfollowed, len(extra))
        _signal_group(pgid, signal.SIGKILL)
        for target in targets.values():
            target.signal(signal.SIGKILL)
        _signal_pids(extra, signal.SIGKILL)
        await _wait_gone(proc, report, targets, 1.0, proc_root)
        alive = _alive(targets.values(), proc_root)
        for f in report.found:
            maybe = targets.get(f.pid)
            if maybe is not None and f.pid in alive:
                report.survivors.append((f, maybe.error or "still running after SIGKILL"))
            elif maybe is None and _stat(proc_root, f.pid) is not None:
                report.survivors.append((f, "still running after SIGKILL"))
        if report.unfollowed:
            followed = {f.pid for f in report.found}
            left = find_processes(pgid, marker, proc_root) or []
            report.unfollowed_left = sum(1 for f in left if f.pid != pgid and f.pid not in followed)
    finally:
        for target in targets.values():
            target.close()
    return report


def _signal_pids(found: Iterable[Found], sig: int) -> None:
    """Signal processes found moments ago by their marker, by pid (beyond what is followed)."""
    for f in found:
        if f.in_group:
            continue  # the group signal reaches it
        try:
            os.kill(f.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


async def _wait_gone(proc: asyncio.subprocess.Process, report: Stopped, targets: dict[int, _Target], limit: float, proc_root: Path) -> None:
    """Until the leader is reaped and every process followed is gone, or ``limit`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not (proc.returncode is not None and not _any_alive(proc.pid, report, targets, proc_root)):
        if loop.time() >= deadline:
            return
        await asyncio.sleep(POLL_S)


def _any_alive(pgid: int, report: Stopped, targets: dict[int, _Target], proc_root: Path) -> bool:
    if not report.tracked:  # no /proc: all we can ask is whether the group still exists
        return report.group_was_running and _signal_group(pgid, 0)
    if _alive(targets.values(), proc_root):
        return True
    return any(_stat(proc_root, f.pid) is not None for f in report.found if f.pid not in targets)


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal the group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stopped_note(report: Stopped, when: str) -> str | None:
    """What was still running and was stopped ``when`` (e.g. "when the command finished")."""
    stopped = report.stopped
    if stopped:
        count = len(stopped) + report.unfollowed
        what = "process the command started was" if count == 1 else "processes the command started were"
        listed = _list(stopped, more=report.unfollowed)
        if report.unfollowed:
            listed += f" ({report.unfollowed} of them signalled by pid, beyond the {MAX_FOLLOWED} followed one by one)"
        return f"{count} {what} still running and stopped {when}: {listed}"
    if not report.tracked and report.group_was_running:
        return (f"processes the command left in its process group were stopped {when}; "
                "on this system processes that left the group cannot be found")
    return None


def survivors_note(report: Stopped) -> str | None:
    """What could not be stopped, and why."""
    parts: list[str] = []
    if report.survivors:
        noun = "process" if len(report.survivors) == 1 else "processes"
        listed = ", ".join(f"{f.label()}: {why}" for f, why in report.survivors[:5])
        parts.append(f"{len(report.survivors)} {noun} it started could not be stopped and may still be running: {listed}")
    if report.unfollowed_left:
        parts.append(f"{report.unfollowed_left} more of the {report.unfollowed} processes beyond the {MAX_FOLLOWED} "
                     "followed one by one were still running after SIGKILL")
    if report.problem:
        parts.append(f"stopping what the command left running failed ({report.problem}); its process group was "
                     "killed, but processes that left the group may still be running")
    return "; ".join(parts) or None


def _list(found: list[Found], limit: int = 5, more: int = 0) -> str:
    text = ", ".join(f.label() for f in found[:limit])
    rest = max(0, len(found) - limit) + more
    return text + (f" and {rest} more" if rest else "")
