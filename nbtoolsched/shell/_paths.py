"""Where a path leads: made absolute and normalised, and with symlinks resolved as the
kernel does; the links under a folder; whether paths lie in the working directories.

Facts about the file system a command line works on, with no rule in them: the
permissions layer matches its path rules against these forms."""

from __future__ import annotations

import os
from typing import Iterable

from ._lexical import lexical_paths
from ._process_paths import through_process_paths

__all__ = ["MAX_LINK_WALK", "inside_working_dirs", "is_inside", "links_under", "paths_for_check", "shell_paths_for_check"]


def paths_for_check(path: str, cwd: str) -> list[str]:
    """The path made absolute and normalised, then the same with symlinks resolved.

    The resolved forms follow the kernel: a ``..`` after a symlink leaves the link's
    target (``link/../x``), so it is resolved before any ``..`` is folded; the form
    folded first (what ``cd`` does) is kept too.
    """
    joined = os.path.join(cwd, os.path.expanduser(path))
    given = os.path.normpath(joined)
    if lexical_paths.active:  # a replay: the path as written (_lexical)
        return [given]
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
    skipped: the command runs as the same user and cannot list them either. Judging paths
    as written (``lexical_paths``), no folder holds a link.
    """
    if lexical_paths.active:
        return []
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
        real = lexical_paths.realpath(norm)
        if real != norm:
            forms.append(real)
    return all(any(is_inside(p, d) for d in forms) for p in paths)
