"""Load a compiled seccomp filter from a descriptor, then become the given program.

Used inside a sandbox whose network bridge must start before the filter (the bridge
opens Unix sockets, which the filter refuses): ``python -I -S _apply_seccomp.py FD
PROGRAM ARGS...``. Only the standard library: it runs before anything else is trusted.
"""

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


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
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit(f"nbtoolsched sandbox: the seccomp filter was refused: {os.strerror(ctypes.get_errno())}")
    os.execv(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
