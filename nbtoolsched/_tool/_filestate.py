"""What the agent has read, so an edit can refuse a file it never saw or that changed."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["FileState", "FileStateCache"]


@dataclass(frozen=True, slots=True)
class FileState:
    path: str
    mtime_ns: int
    size: int
    partial: bool = False  # only a slice (offset/limit) was read


class FileStateCache:
    """Keyed by absolute path. Shared by all calls of a session, mutated in place."""

    def __init__(self) -> None:
        self._states: dict[str, FileState] = {}

    def record(self, path: str, *, partial: bool = False) -> FileState:
        stat = os.stat(path)
        state = FileState(os.path.abspath(path), stat.st_mtime_ns, stat.st_size, partial)
        self._states[state.path] = state
        return state

    def get(self, path: str) -> FileState | None:
        return self._states.get(os.path.abspath(path))

    def forget(self, path: str) -> None:
        self._states.pop(os.path.abspath(path), None)

    def changed_since_read(self, path: str) -> bool:
        """True when the file on disk is not what was last read (or was never read)."""
        state = self.get(path)
        if state is None:
            return True
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return True
        return stat.st_mtime_ns != state.mtime_ns or stat.st_size != state.size

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and os.path.abspath(path) in self._states

    def __len__(self) -> int:
        return len(self._states)
