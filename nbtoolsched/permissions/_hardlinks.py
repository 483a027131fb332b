"""Other names of a protected file: a hard link reads the same bytes under a name no rule names.

The in-process file tools (Read, Grep, Glob) open files by path in the agent's own process,
outside any sandbox, so a Read deny rule on ``.env`` must also hold for ``notes.txt`` when
both names are one file. Only a file with more than one name (``st_nlink > 1``) costs
anything: the paths the Read rules protect are then listed (patterns searched within the
sandbox's budget) and compared by inode.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..sandbox._mounts import expand, linked_file
from ..shell import lexical_paths
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
            key = linked_file(path, follow=True)
            if key is not None:
                found.setdefault(key, rule)
    return found


def linked_rule(path: str, rules: list[PermissionRule], cwd: str, home: str,
                working_dirs: tuple[str, ...]) -> PermissionRule | None:
    """The rule that protects another name of the file at ``path`` (followed as the tool
    opens it), or None (also when it has one name only: the common case, one stat; and
    when paths are judged as written, ``lexical_paths``: a replay knows no hard link)."""
    if lexical_paths.active:
        return None
    key = linked_file(path, follow=True)
    if key is None or not rules:
        return None
    return _inodes(rules, cwd, home, working_dirs).get(key)


def inode_guard(rules: list[PermissionRule], cwd: str, home: str, working_dirs: tuple[str, ...]) -> Callable[[str], bool]:
    """For a search: is this found file another name of a protected one? (The protected
    inodes are listed the first time a file with several names is met.)"""
    known: dict[tuple[int, int], PermissionRule] | None = None

    def linked(path: str) -> bool:
        nonlocal known
        key = linked_file(path, follow=True)
        if key is None:
            return False
        if known is None:
            known = _inodes(rules, cwd, home, working_dirs)
        return key in known

    return linked
