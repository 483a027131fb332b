"""Atomic file replacement: readers see the old file or the new one, never half of it."""

from __future__ import annotations

import os
import stat
import tempfile

__all__ = ["atomic_write"]


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it, then ``os.replace``.

    A symlink is written through (its target is replaced, the link stays). An existing
    file keeps its permission bits; a new one gets the umask's default, not mkstemp's 0600.
    """
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
