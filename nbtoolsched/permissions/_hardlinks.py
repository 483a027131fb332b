"""Other names of a protected file: a hard link reads the same bytes under a name no rule names.

The in-process file tools (Read, Grep, Glob) open files by path in the agent's own process,
outside any sandbox, so a Read deny rule on ``.env`` must also hold for ``notes.txt`` when
both names are one file. Only a file with more than one name (``st_nlink > 1``) costs
anything: the paths the Read rules protect are then listed (patterns searched within the
sandbox's budget) and compared by inode.
"""

from __future__ import annotations

import os
import stat
from typing import Callable, Iterable

from ..sandbox._mounts import expand
from ._rules import PermissionRule
from ._sandbox import RulePaths

__all__ = ["linked_rule", "inode_guard"]


def _inodes(rules: Iterable[PermissionRule], cwd: str, home: str, working_dirs: tuple[str, ...]) -> dict[tuple[int, int], PermissionRule]:
    found: dict[tuple[int, int], PermissionRule] = {}
    for rule in rules:
        content = rule.value.content
        if content is None:
            continue
        paths, _ = expand([RulePaths(content, rule.root or cwd, cwd, home, working_dirs, rule.text)])
        for path in paths:
            try:
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                found.setdefault((info.st_dev, info.st_ino), rule)
    return found


def linked_rule(path: str, rules: list[PermissionRule], cwd: str, home: str,
                working_dirs: tuple[str, ...]) -> PermissionRule | None:
    """The rule that protects another name of the file at ``path`` (followed as the tool
    opens it), or None (also when it has one name only: the common case, one stat)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2 or not rules:
        return None
    return _inodes(rules, cwd, home, working_dirs).get((info.st_dev, info.st_ino))


def inode_guard(rules: list[PermissionRule], cwd: str, home: str, working_dirs: tuple[str, ...]) -> Callable[[str], bool]:
    """For a search: is this found file another name of a protected one? (The protected
    inodes are listed the first time a file with several names is met.)"""
    known: dict[tuple[int, int], PermissionRule] | None = None

    def linked(path: str) -> bool:
        nonlocal known
        try:
            info = os.stat(path)
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
            return False
        if known is None:
            known = _inodes(rules, cwd, home, working_dirs)
        return (info.st_dev, info.st_ino) in known

    return linked
