"""A policy turned into one bubblewrap invocation, and what is left to read or undo after it.

``wrap(policy, command, cwd, env)`` is a blocking context manager (mount planning walks
folders; the network proxy may have to start): enter it off the event loop, spawn
``argv`` with ``env`` and ``pass_fds``, call ``started()``, and leave it once the
command has exited. Leaving reads the wrapper's report and undoes what the plan made.

Inside, a small bash wrapper (the sandbox's process 2; bubblewrap's own init is 1) starts
the network bridge if there is one, runs ``bash -c COMMAND`` in the foreground, then
lists every process still alive in the sandbox's PID namespace on a private pipe, and
exits with the command's status. Its exit ends the namespace: the kernel kills whatever
is left (``setsid``, double forks and cleared environments included), and the result
names what was stopped.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Iterator

from ._mounts import MountPlan, plan_mounts, release
from ._network import ProxyBridge, proxy_for
from ._overlay import KernelOverlay
from ._policy import SandboxPolicy
from ._probe import BWRAP_BASE, Availability
from ._seccomp import filter_fd

__all__ = ["Wrapped", "wrap", "Leftover"]

SHELL = "/bin/bash"
APPLIER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_apply_seccomp.py")
MAX_REPORT = 65_536


@dataclass(frozen=True, slots=True)
class Leftover:
    """A process still running in the sandbox when the command finished (stopped with it)."""

    pid: int  # inside the sandbox's PID namespace
    name: str

    def label(self) -> str:
        return f"{self.name} (pid {self.pid} in the sandbox)"


class _Descriptors:
    """Descriptors opened for one command, each closed exactly once: a number closed
    twice may by then belong to someone else (another command's pipe)."""

    def __init__(self) -> None:
        self.open: list[int] = []

    def add(self, fd: int) -> int:
        self.open.append(fd)
        return fd

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.open.remove(fd)
            try:
                os.close(fd)
            except OSError:
                pass

    def close_all(self) -> None:
        for fd in list(self.open):
            self.close(fd)


@dataclass
class Wrapped:
    """One command, wrapped: what to spawn, and after it, what it left."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    plan: MountPlan
    policy: SandboxPolicy
    seccomp: bool
    leftovers: list[Leftover] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # from undoing the plan (a removed commondir...)
    _report: int = -1
    _close_after_start: list[int] = field(default_factory=list)
    _owned: _Descriptors = field(default_factory=_Descriptors)

    def started(self) -> None:
        """Close the descriptors only the sandbox needs (call once the process exists)."""
        for fd in self._close_after_start:
            self._owned.close(fd)
        self._close_after_start = []

    def _collect(self) -> None:
        data = b""
        try:
            os.set_blocking(self._report, False)
            while len(data) < MAX_REPORT:
                chunk = os.read(self._report, 65_536)
                if not chunk:
                    break
                data += chunk
        except (BlockingIOError, OSError):
            pass
        for line in data.decode("utf-8", "replace").splitlines():
            pid, _, name = line.partition("\t")
            if pid.isdigit():
                self.leftovers.append(Leftover(int(pid), name or "?"))


@contextlib.contextmanager
def wrap(policy: SandboxPolicy, command: str, cwd: str, env: dict[str, str], available: Availability,
         overlay: KernelOverlay | None = None) -> Iterator[Wrapped]:
    """The bubblewrap invocation for ``command`` under ``policy`` (see the module doc);
    with ``overlay``, run inside that kernel overlay's mount namespace."""
    assert available.ok and available.bwrap, "wrap() needs a sandbox that can start"
    plan = plan_mounts(policy, cwd, overlay=overlay)
    fds = _Descriptors()
    wrapped: Wrapped | None = None
    try:
        bridge = proxy_for(policy.network) if policy.network is not None and policy.network.needs_proxy and policy.kind == "write" else None
        read_end, write_end = (fds.add(fd) for fd in os.pipe())
        os.set_inheritable(write_end, True)
        seccomp = policy.seccomp and not available.seccomp
        block_unix = not (policy.network and (policy.network.allow_all_unix_sockets or policy.network.allow_unix_sockets))
        argv = [*(overlay.enter_argv() if overlay is not None else ()), available.bwrap, *BWRAP_BASE, "--unshare-net", *plan.args]
        if bridge is not None:
            argv += bridge.bind_args()
        filter_at: int | None = None
        if seccomp:
            filter_at = fds.add(filter_fd(block_unix))
            os.set_inheritable(filter_at, True)
            if bridge is None:
                argv += ["--seccomp", str(filter_at)]
        argv += ["--", SHELL, "-c", _wrapper(bridge, filter_at if bridge is not None else None), "nbtoolsched-sandbox",
                 command, str(write_end)]
        inner_env = policy.environment(env)
        if policy.kind == "read-only" and plan.scratch:
            inner_env["TMPDIR"] = plan.scratch
        elif policy.tmp_dir:
            inner_env["TMPDIR"] = policy.tmp_dir
        if bridge is not None:
            inner_env.update(bridge.env())
        wrapped = Wrapped(argv, inner_env, tuple(fd for fd in (write_end, filter_at) if fd is not None), plan, policy, seccomp,
                          _report=read_end, _close_after_start=[fd for fd in (write_end, filter_at) if fd is not None],
                          _owned=fds)
        yield wrapped
        wrapped.started()
        wrapped._collect()
    finally:
        fds.close_all()
        notes = release(plan)
        if wrapped is not None:
            wrapped.notes.extend(notes)


def _wrapper(bridge: ProxyBridge | None, filter_at: int | None) -> str:
    """The wrapper script: $1 is the command, $2 the report descriptor."""
    run = f'{SHELL} -c "$1"'
    if filter_at is not None:  # the bridge is up: now filter, then become the command's shell
        run = f'{shlex.quote(sys.executable)} -I -S {shlex.quote(APPLIER)} {filter_at} {SHELL} -c "$1"'
    lines = ["report=$2"]
    if bridge is not None:
        lines.append(bridge.start_script().rstrip("\n"))
        lines.append("bridge=$!")
    else:
        lines.append("bridge=")
    lines += [
        f"{run} {{report}}>&-",  # the command does not inherit the report pipe
        "status=$?",
        "for entry in /proc/[0-9]*; do",
        "  pid=${entry#/proc/}",
        '  case $pid in 1|$$) continue ;; esac',
        '  [ -n "$bridge" ] && [ "$pid" = "$bridge" ] && continue',
        "  state= parent=",
        '  while IFS=$\'\\t\' read -r key value; do',
        '    case $key in State:) state=${value%% *} ;; PPid:) parent=$value; break ;; esac',
        '  done < "$entry/status" 2>/dev/null || continue',
        '  case $state in Z|X|"") continue ;; esac',
        '  [ -n "$bridge" ] && [ "$parent" = "$bridge" ] && continue',
        '  IFS= read -r name < "$entry/comm" 2>/dev/null || name=?',
        '  printf \'%s\\t%s\\n\' "$pid" "$name" >&"$report"',
        "done",
        'exit "$status"',
    ]
    return "\n".join(lines)

