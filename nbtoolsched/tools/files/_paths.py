"""Paths as the file tools take them in and show them back."""

from __future__ import annotations

import difflib
import os

from ..._tool._context import ToolContext

__all__ = ["resolve", "display", "similar_names", "missing_path_message", "backfill_path"]


def resolve(ctx: ToolContext, raw: str) -> str:
    """The model's path made absolute against the session's cwd."""
    return ctx.resolve_path(raw)


def display(path: str, cwd: str) -> str:
    """Relative to cwd when inside it (shorter for the model), absolute otherwise."""
    rel = os.path.relpath(path, cwd)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def similar_names(path: str, limit: int = 3) -> list[str]:
    """Close matches for a missing path among its directory's entries (one listdir)."""
    folder, name = os.path.split(path)
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    stem = os.path.splitext(name)[0]
    same_stem = [e for e in entries if os.path.splitext(e)[0] == stem and e != name]
    close = difflib.get_close_matches(name, entries, n=limit, cutoff=0.6)
    return list(dict.fromkeys(same_stem + close))[:limit]


def missing_path_message(path: str, cwd: str, what: str = "File") -> str:
    message = f"{what} does not exist: {path}."
    suggestions = [os.path.join(os.path.dirname(path), s) for s in similar_names(path)]
    if suggestions:
        message += " Did you mean " + " or ".join(display(s, cwd) for s in suggestions) + "?"
    elif not os.path.isdir(os.path.dirname(path)):
        message += f" Its directory does not exist either. The current working directory is {cwd}."
    else:
        message += f" The current working directory is {cwd}."
    return message


def backfill_path(observable: dict[str, object], key: str, ctx: ToolContext) -> None:
    """Hooks and permission rules see an absolute path, whatever the model wrote."""
    value = observable.get(key)
    if isinstance(value, str) and value:
        observable[key] = resolve(ctx, value)
