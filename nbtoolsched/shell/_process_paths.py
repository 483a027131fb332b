"""Paths whose meaning depends on the process that opens them.

``/proc/self/cwd/x`` is the folder of whoever opens it: a shell command, or git reading
its config, resolves it as itself, and a checker in this process would resolve it as
this process. Such a path (or a symlink on the way to one) cannot be judged from here.
"""

from __future__ import annotations

import os

from ._lexical import lexical_paths

__all__ = ["PROCESS_PATHS", "through_process_paths"]

PROCESS_PATHS = frozenset({
    "/proc/self", "/proc/thread-self", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr",
})
_MAX_LINKS = 40


def through_process_paths(path: str) -> bool:
    """Does ``path`` (absolute), or a link on the way, go through one of PROCESS_PATHS?
    Links are followed as the kernel does: each before any ``..`` that comes after it."""
    pending = path.split("/")
    resolved = "/"
    links = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        if candidate in PROCESS_PATHS:
            return True
        if lexical_paths.active:  # a replay: no link is known (_lexical)
            resolved = candidate
            continue
        try:
            target = os.readlink(candidate)
        except OSError:
            resolved = candidate  # not a link (or missing): nothing more to follow
            continue
        links += 1
        if links > _MAX_LINKS:
            return True  # a loop: the opener fails, but do not pretend to know
        if target.startswith("/"):
            resolved = "/"
        pending = target.split("/") + pending
    return False
