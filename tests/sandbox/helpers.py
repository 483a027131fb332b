"""Running one command in the sandbox, as the Bash tool does, and looking at what it did."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from nbtoolsched.sandbox import LiteralPath, SandboxPolicy, Wrapped, availability, wrap
from nbtoolsched.sandbox._policy import PathSet

from .conftest import as_nobody


@dataclass
class Ran:
    code: int
    out: str
    err: str
    wrapped: Wrapped

    @property
    def text(self) -> str:
        return self.out + self.err


def run_in_sandbox(policy: SandboxPolicy, command: str, cwd: Path, *, nobody: bool = False,
                   env: dict[str, str] | None = None, timeout: float = 60) -> Ran:
    """``command`` under ``policy`` through sandbox.wrap(), as root or (``nobody``) as an
    unprivileged user: bubblewrap itself is started by nobody then."""
    with wrap(policy, command, str(cwd), dict(env if env is not None else os.environ), availability()) as wrapped:
        argv = as_nobody(wrapped.argv) if nobody else wrapped.argv
        done = subprocess.run(argv, cwd=cwd, env=wrapped.env, pass_fds=wrapped.pass_fds, capture_output=True,
                              timeout=timeout, start_new_session=True)
        wrapped.started()
    return Ran(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"), wrapped)


def write_policy(root: Path, *, deny_read: tuple[PathSet, ...] = (), tmp: Path | None = None) -> SandboxPolicy:
    return SandboxPolicy("write", (str(root),), deny_read=deny_read, tmp_dir=str(tmp) if tmp else None)


def literal(*paths: Path) -> tuple[PathSet, ...]:
    return tuple(LiteralPath(str(p)) for p in paths)


def manifest(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under ``root``: kind, mode, size, mtime and a digest of the bytes (or the link)."""
    found: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                body: object = os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                body = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                body = None
            found[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_size,
                                                   info.st_mtime_ns, body)
    return found
