"""Paths judged as they are written: for a replay, whose file system is not this machine's.

A transcript replay asks what a policy would have decided on the machine the session ran
on, which is gone. Resolving the session's paths through the replaying machine's file
system would make the answer depend on that machine: a folder that is a symlink here, a
hard link, a git repository that happens to sit at the same path, whether bubblewrap is
installed. Inside ``with lexical_paths():`` (a context variable, so it holds for the
code that runs in that context, the threads it hands work to included, and nowhere
else) every check of this package treats the file system as the transcript shows it:

* paths are made absolute against the session's cwd and normalised, never resolved
  (no symlinks, no hard links: a path means what it says);
* a name a command gives a tool that descends into folders may be a folder;
* no git repository is known (its config cannot be read, so it has none that runs code);
* the OS sandbox is what the settings say, as if it could start (its masks are not
  taken to cover any read, since what they would cover cannot be listed).

Outside such a block nothing changes: the checks consult the real file system.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from typing import Any, Iterator

__all__ = ["lexical_paths"]

_ON: ContextVar[bool] = ContextVar("nbtoolsched_lexical_paths", default=False)
_CACHES: list[dict[Any, Any]] = []


class _LexicalPaths:
    """``with lexical_paths(): ...`` judges paths as written; ``lexical_paths.active`` says
    whether the current context does; ``lexical_paths.realpath(p)`` is ``os.path.realpath``
    outside such a block and the normalised absolute path inside it."""

    @contextlib.contextmanager
    def __call__(self, on: bool = True) -> Iterator[None]:
        token = _ON.set(on)
        try:
            yield
        finally:
            _ON.reset(token)

    @property
    def active(self) -> bool:
        return _ON.get()

    def realpath(self, path: str) -> str:
        return os.path.normpath(os.path.abspath(path)) if _ON.get() else os.path.realpath(path)

    def cache(self) -> dict[Any, Any]:
        """A dict for what, judged as written, depends on the text alone (so it may be kept
        across decisions); ``forget()`` empties every one (a benchmark's cold start)."""
        made: dict[Any, Any] = {}
        _CACHES.append(made)
        return made

    def forget(self) -> None:
        for made in _CACHES:
            made.clear()

    def __repr__(self) -> str:
        return f"lexical_paths(active={_ON.get()})"


lexical_paths = _LexicalPaths()
