"""An optional seccomp filter for sandboxed commands, where libseccomp's Python bindings are present.

What it blocks (each call fails with EPERM), as the peers do:
- ``ptrace``, ``process_vm_readv``, ``process_vm_writev``: no reading or steering another
  process's memory (the sandbox's own helpers, the network bridge among them);
- ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``: a second system-call
  interface that filters do not see into;
- ``keyctl``, ``add_key``, ``request_key``: the kernel keyrings, which the agent's session
  shares with its commands (as Docker's default profile does);
- ``socket(AF_UNIX, ...)``, unless the policy allows Unix sockets: the sandbox sees the
  host's files read-only, but connecting to a socket file (a Docker daemon, an SSH agent,
  the session bus) needs no write, so a new Unix socket is refused. ``socketpair`` stays
  allowed (asyncio and many runtimes use it for their own wake-ups).

What it does not cover: Unix-socket descriptors a command inherits; abstract sockets are
out of reach anyway (the sandbox has its own network namespace). Without the bindings
(``pip install pyseccomp``) there is no filter, and ``availability()`` says so.
"""

from __future__ import annotations

import errno
import functools
import os
import socket
import tempfile

__all__ = ["filter_fd", "BLOCKED_CALLS"]

BLOCKED_CALLS = ("ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register",
                 "keyctl", "add_key", "request_key")


@functools.lru_cache(maxsize=4)
def _program(block_unix: bool) -> bytes:
    import pyseccomp as sc

    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in BLOCKED_CALLS:
        flt.add_rule(sc.ERRNO(errno.EPERM), name)
    if block_unix:
        flt.add_rule(sc.ERRNO(errno.EPERM), "socket", sc.Arg(0, sc.EQ, socket.AF_UNIX))
    with tempfile.TemporaryFile() as handle:
        flt.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def filter_fd(block_unix: bool) -> int:
    """A new descriptor holding the compiled filter (for ``bwrap --seccomp FD``), at offset 0.
    The caller closes it once bubblewrap has started."""
    program = _program(block_unix)
    fd = os.memfd_create("nbtoolsched-seccomp", 0) if hasattr(os, "memfd_create") else _temp_fd()
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _temp_fd() -> int:
    fd, path = tempfile.mkstemp(prefix="nbtoolsched-seccomp-")
    os.unlink(path)
    return fd
