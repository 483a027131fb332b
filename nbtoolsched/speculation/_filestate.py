"""The forked run's file-state cache: sees what the session read, records on its own.

An Edit refuses a file it has not read. The speculation starts knowing what the main
session read (so an Edit after an earlier Read works), but what it reads itself stays
in its own layer until accept merges it back.
"""

from __future__ import annotations

import os

from .._tool._filestate import FileState, FileStateCache

__all__ = ["LayeredFileState"]


class LayeredFileState(FileStateCache):
    def __init__(self, base: FileStateCache) -> None:
        super().__init__()
        self.base = base
        self._forgotten: set[str] = set()
        self._own: dict[str, None] = {}  # insertion-ordered set of paths recorded here

    def record(self, path: str, *, partial: bool = False) -> FileState:
        state = super().record(path, partial=partial)
        self._own[state.path] = None
        self._forgotten.discard(state.path)
        return state

    def get(self, path: str) -> FileState | None:
        own = super().get(path)
        if own is not None:
            return own
        key = os.path.abspath(path)
        return None if key in self._forgotten else self.base.get(key)

    def forget(self, path: str) -> None:
        super().forget(path)
        self._forgotten.add(os.path.abspath(path))

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def own_states(self) -> list[FileState]:
        """What the speculation itself recorded, oldest first."""
        own = [FileStateCache.get(self, path) for path in self._own]
        return [state for state in own if state is not None]
