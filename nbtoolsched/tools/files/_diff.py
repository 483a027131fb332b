"""A small unified diff for an edit's result: enough to confirm, never a wall of text."""

from __future__ import annotations

import difflib

__all__ = ["diff_snippet"]


def diff_snippet(before: str, after: str, label: str, max_lines: int = 40) -> str:
    lines = list(difflib.unified_diff(
        before.splitlines(), after.splitlines(), f"a/{label}", f"b/{label}", n=2, lineterm=""
    ))
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines] + [f"... ({hidden} more diff lines not shown)"]
    return "\n".join(lines)
