"""Search results never show a file the permission rules protect from reading.

Grep and Glob read or list everything under the folder they search; the permission
step only saw that folder. The session's permission context (``Permissions``) says
which found paths a Read deny or ask rule covers, and both search engines' results are
filtered the same way, after the search, so ripgrep and the Python engine still agree.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable

from ..._tool._base import Tool
from ..._tool._context import ToolContext

__all__ = ["protected_filter", "drop_protected"]


def protected_filter(tool: Tool, target: str, ctx: ToolContext) -> Callable[[str], bool] | None:
    """A test for absolute paths the search must leave out, or None when nothing is protected.

    A permission context without ``read_protection`` (no rules, or a gate of its own)
    protects nothing here; its own decide() is all it asked for.
    """
    ask = getattr(ctx.permission_context, "read_protection", None)
    return ask(tool, target, ctx.cwd) if callable(ask) else None


def drop_protected(root: str, rel_paths: Iterable[str], hidden: Callable[[str], bool] | None) -> list[str]:
    """``rel_paths`` (relative to ``root``) without the protected ones, order kept."""
    if hidden is None:
        return list(rel_paths)
    return [rel for rel in rel_paths if not hidden(os.path.join(root, rel))]
