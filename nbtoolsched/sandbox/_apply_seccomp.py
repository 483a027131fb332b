"""Put the command out of the bridge's reach, load a seccomp filter, then become the command.

Used inside a sandbox whose network bridge must start before the filter (socat opens
Unix sockets, which the filter refuses): ``python -I -S _apply_seccomp.py FD PROGRAM
ARGS...``. So socat, the wrapper and bubblewrap's init run unfiltered beside the command,
which could otherwise write their memory through /proc/PID/mem (no ptrace needed) and
run code there without the filter. A Landlock domain stops that: a process in one may
not ptrace, or open the memory of, a process outside it. The domain restricts nothing
else (it handles only making block devices, which the sandbox refuses anyway). Where
the kernel has no Landlock, the command does not run. Only the standard library: it runs
before anything else is trusted.
"""

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446  # the same on every architecture
LANDLOCK_ACCESS_FS_MAKE_BLOCK = 1 << 11


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def main() -> None:
    fd = int(sys.argv[1])
    program = b""
    while chunk := os.read(fd, 65536):
        program += chunk
    os.close(fd)
    if not program or len(program) % 8:
        sys.exit("nbtoolsched sandbox: the seccomp filter is empty or malformed")
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit(f"nbtoolsched sandbox: no_new_privs refused: {os.strerror(ctypes.get_errno())}")
    attr = ctypes.c_uint64(LANDLOCK_ACCESS_FS_MAKE_BLOCK)
    ruleset = libc.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), 0)
    if ruleset < 0 or libc.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
        sys.exit(f"nbtoolsched sandbox: a Landlock domain cannot be made here ({os.strerror(ctypes.get_errno())}), "
                 "so the command could reach the network bridge: not run")
    os.close(ruleset)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit(f"nbtoolsched sandbox: the seccomp filter was refused: {os.strerror(ctypes.get_errno())}")
    os.execv(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
