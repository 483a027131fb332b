"""Path rules for Read/Edit in gitignore style, working directories, and risky files.

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
from typing import Iterable

from ..shell._config_places import safety_concern
from ..shell._process_paths import through_process_paths

__all__ = [
    "PathPattern",
    "compile_path_pattern",
    "pattern_may_match_within",
    "paths_for_check",
    "shell_paths_for_check",
    "links_under",
    "is_inside",
    "inside_working_dirs",
    "safety_concern",
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


def paths_for_check(path: str, cwd: str) -> list[str]:
    """The path made absolute and normalised, then the same with symlinks resolved.

    The resolved forms follow the kernel: a ``..`` after a symlink leaves the link's
    target (``link/../x``), so it is resolved before any ``..`` is folded; the form
    folded first (what ``cd`` does) is kept too.
    """
    joined = os.path.join(cwd, os.path.expanduser(path))
    given = os.path.normpath(joined)
    return list(dict.fromkeys((given, os.path.realpath(joined), os.path.realpath(given))))


def shell_paths_for_check(path: str, cwd: str) -> list[str] | None:
    """paths_for_check for a path a shell command opens; None when the path, or a link
    on the way, goes through /proc/self, /proc/thread-self or /dev/fd, which the command
    resolves in its own process (so what it opens cannot be told from here)."""
    joined = os.path.join(cwd, os.path.expanduser(path))
    return None if through_process_paths(joined) else paths_for_check(path, cwd)


# At most this many entries are listed to find the links under a folder a command reads.
MAX_LINK_WALK = 20_000


def links_under(folder: str, limit: int = MAX_LINK_WALK) -> list[str] | None:
    """The symlinks under ``folder``, and under every folder such a link leads to.

    A command that reads a folder recursively (``grep -R``, ``diff -r``) or through a glob
    (``cat docs/*``) follows them, so a path rule that cannot match anything under the
    folder's own path may still protect what the command reads. Each real folder is
    listed once (links may loop). None when there are more than ``limit`` entries (the
    caller cannot tell, so it fails closed). Folders this process cannot list are
    skipped: the command runs as the same user and cannot list them either.
    """
    links: list[str] = []
    seen: set[str] = set()
    pending = [folder]
    count = 0
    while pending:
        current = os.path.realpath(pending.pop())
        if current in seen:
            continue
        seen.add(current)
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    count += 1
                    if count > limit:
                        return None
                    if entry.is_symlink():
                        links.append(entry.path)
                        if os.path.isdir(entry.path):
                            pending.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        except OSError:
            continue  # not a folder, gone, or not listable
    return links


def is_inside(path: str, folder: str) -> bool:
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder if folder == os.sep else folder + os.sep)


def inside_working_dirs(paths: Iterable[str], dirs: Iterable[str]) -> bool:
    """Every form of the path lies in some working directory (given or resolved form)."""
    forms: list[str] = []
    for folder in dirs:
        norm = os.path.normpath(folder)
        forms.append(norm)
        real = os.path.realpath(norm)
        if real != norm:
            forms.append(real)
    return all(any(is_inside(p, d) for d in forms) for p in paths)
