"""Read before you write: an edit must act on the file the model last saw.

The file-state cache records what Read showed (and when); a write to a file the model
never read, or that changed on disk since, would clobber work it does not know about.
"""

from __future__ import annotations

from ..._tool._context import ToolContext

__all__ = ["stale_read_error", "remember_write"]

NOT_READ = "The file has not been read yet in this session. Read it with the Read tool first, then retry."
CHANGED = (
    "The file changed on disk after it was last read (the user, a formatter or another process edited it). "
    "Read it again to see the current content, then retry."
)
PARTIAL = (
    "Only part of this file was read (offset/limit), so overwriting it could destroy lines that were never seen. "
    "Read the whole file first, or use Edit to change just the part you know."
)


def stale_read_error(ctx: ToolContext, path: str, *, need_full: bool = False) -> str | None:
    """Why writing ``path`` now is unsafe, or None when the last read is current."""
    state = ctx.file_state.get(path)
    if state is None:
        return NOT_READ
    if ctx.file_state.changed_since_read(path):
        return CHANGED
    if need_full and state.partial:
        return PARTIAL
    return None


def remember_write(ctx: ToolContext, path: str) -> None:
    """After our own write the model knows the whole file: the next edit needs no re-read.

    A file that a host (``ctx.files``) keeps in an unsaved buffer is not on disk to record:
    it is forgotten instead, so the next edit reads it first."""
    try:
        ctx.file_state.record(path, partial=False)
    except FileNotFoundError:
        ctx.file_state.forget(path)
