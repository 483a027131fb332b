"""Path rules for Read/Edit in gitignore style: the patterns, compiled and matched.

A path is checked as given (normalised, so ``..`` is folded away) and with symlinks
resolved (as the kernel does: before ``..`` is folded). Deny and ask rules match when
any form matches; allow rules and "inside the working directories" need every form to
agree, so a symlink in the project pointing at ``/etc`` does not sneak out, and a
symlink into a denied folder is caught.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from ..shell import is_inside


__all__ = [
    "PathPattern",
    "compile_path_pattern",
    "pattern_may_match_within",
    "validate_path_pattern",
]


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A compiled rule pattern: a root folder and a regex over paths relative to it."""

    root: str
    regex: re.Pattern[str]
    source: str

    def matches(self, path: str) -> bool:
        rel = os.path.relpath(path, self.root) if path != self.root else "."
        if rel == ".." or rel.startswith(".." + os.sep):
            return False  # outside this rule's root: the rule says nothing about it
        rel = "" if rel == "." else rel.replace(os.sep, "/")
        return self.regex.fullmatch(rel) is not None


def validate_path_pattern(pattern: str) -> str | None:
    """A reason the pattern is unusable, or None."""
    if not pattern.strip():
        return "an empty path pattern"
    if "\x00" in pattern:
        return "a NUL byte in a path pattern"
    if pattern.count("[") != pattern.count("]"):
        return "an unbalanced [ ] in a path pattern"
    try:
        _glob_to_regex(_split_root(pattern, "/", "/", "/")[1], anchored=True)
    except re.error as err:
        return f"the path pattern does not compile ({err})"
    return None


@functools.lru_cache(maxsize=4096)
def compile_path_pattern(pattern: str, settings_root: str, cwd: str, home: str | None = None) -> PathPattern:
    """Resolve the pattern's root (``//`` abs, ``~/`` home, ``/`` settings dir, else cwd)."""
    root, rel, anchored = _split_root(pattern, settings_root, cwd, home or os.path.expanduser("~"))
    return PathPattern(os.path.normpath(root), _glob_to_regex(rel, anchored), pattern)


def pattern_may_match_within(pattern: str, settings_root: str, cwd: str, home: str | None, folder: str) -> bool:
    """Could the pattern match ``folder`` or anything that may ever lie inside it?

    Decided from the pattern alone (what is on disk now does not matter), erring towards
    yes: a pattern that floats (no slash: ``.env``, ``*.pem``) matches at any depth, so it
    may match inside any folder under its root; an anchored one may when the folder's
    path agrees with the pattern's leading segments.
    """
    root, rel, anchored = _split_root(pattern, settings_root, cwd, home or os.path.expanduser("~"))
    root, folder = os.path.normpath(root), os.path.normpath(folder)
    if is_inside(root, folder):
        return True  # everything the pattern can match lies inside the folder
    if not is_inside(folder, root):
        return False  # the pattern matches only under its root
    if not anchored:
        return True
    wanted = rel.split("/") if rel else []
    for i, part in enumerate(os.path.relpath(folder, root).split(os.sep)):
        if i >= len(wanted) or "**" in wanted[i]:
            return True  # an ancestor matched (its contents match too), or any depth follows
        if _glob_to_regex(wanted[i], anchored=True).fullmatch(part) is None:
            return False
    return True  # the folder is a prefix of what the pattern names


def _split_root(pattern: str, settings_root: str, cwd: str, home: str) -> tuple[str, str, bool]:
    if pattern.startswith("//"):
        root, rel, anchored = "/", pattern[2:], True
    elif pattern == "~" or pattern.startswith("~/"):
        root, rel, anchored = home, pattern[2:], True
    elif pattern.startswith("/"):
        root, rel, anchored = settings_root, pattern[1:], True
    elif pattern == "." or pattern.startswith("./"):
        root, rel, anchored = cwd, pattern[2:], True
    else:
        root, rel, anchored = cwd, pattern, False
    # gitignore: a slash at the start or in the middle anchors the pattern to its root, so
    # "secrets/**" names ./secrets only (decided before the trailing "/**" goes).
    anchored = anchored or "/" in rel.rstrip("/")
    # A trailing "/**" means "the folder and everything in it", which is what the folder
    # pattern alone already means here (descendants of a match match).
    while rel.endswith("/**"):
        rel = rel[:-3]
    if rel in ("**", "*") and not anchored:
        rel, anchored = "", True
    rel = rel.rstrip("/")
    return root, rel, anchored or "/" in rel


def _glob_to_regex(rel: str, anchored: bool) -> re.Pattern[str]:
    if rel in ("", "**"):
        return re.compile(r".*", re.DOTALL)
    out: list[str] = []
    i, n = 0, len(rel)
    while i < n:
        c = rel[i]
        if rel.startswith("**/", i) and (i == 0 or rel[i - 1] == "/"):
            out.append(r"(?:.*/)?")
            i += 3
        elif rel.startswith("**", i) and i + 2 == n and (i == 0 or rel[i - 1] == "/"):
            out.append(r".*")
            i += 2
        elif c == "*":
            out.append(r"[^/]*")
            i += 1
        elif c == "?":
            out.append(r"[^/]")
            i += 1
        elif c == "[":
            end = rel.find("]", i + 1)
            body = rel[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(rel[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else r"(?:.*/)?"
    # Descendants of a matching folder match too (gitignore ignores a folder's contents).
    return re.compile(prefix + body + r"(?:/.*)?", re.DOTALL)
