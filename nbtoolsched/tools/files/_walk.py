"""The pure-Python file walk that filters like ``rg --hidden --no-require-git``.

What ripgrep's ``ignore`` crate decides for each entry, in its order:
1. ``--glob`` overrides: the last matching glob wins (``!glob`` excludes, others
   include, and an include beats every ignore file); when some include globs exist, a
   file that matches none is excluded (directories are still entered).
2. ignore files, nearest directory first: ``.rgignore``, then ``.ignore``, then
   ``.gitignore`` (not past a directory holding ``.git``), then ``.git/info/exclude``;
   inside one file the last matching line wins, and ``!line`` re-includes.
3. the file type filter, for files only.
Hidden files are searched; VCS directories are excluded by override globs; symlinks
are not followed (ripgrep's default).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from ._globs import GlobRule, glob_regex, parse_rule
from ._types import type_globs

__all__ = ["VCS_DIRS", "WalkFilter", "walk_files"]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
# Ignore-file kinds from highest to lowest precedence.
_KINDS = (".rgignore", ".ignore", ".gitignore", "exclude")

IGNORE, INCLUDE = True, False  # what a decision means; None = no opinion


@dataclass(slots=True)
class _IgnoreFile:
    base: str
    rules: list[GlobRule]

    def decide(self, abs_path: str, is_dir: bool) -> bool | None:
        rel = os.path.relpath(abs_path, self.base).replace(os.sep, "/")
        for rule in reversed(self.rules):
            if rule.matches(rel, is_dir):
                return IGNORE if not rule.negated else INCLUDE
        return None


@dataclass(slots=True)
class _DirNode:
    """The ignore files of one directory, linked to its parent's."""

    parent: "_DirNode | None"
    files: dict[str, _IgnoreFile] = field(default_factory=dict)
    has_git: bool = False

    @classmethod
    def load(cls, path: str, parent: "_DirNode | None") -> "_DirNode":
        node = cls(parent)
        for kind in _KINDS[:3]:
            rules = _read_rules(os.path.join(path, kind))
            if rules:
                node.files[kind] = _IgnoreFile(path, rules)
        if os.path.isdir(os.path.join(path, ".git")):
            node.has_git = True
            rules = _read_rules(os.path.join(path, ".git", "info", "exclude"))
            if rules:
                node.files["exclude"] = _IgnoreFile(path, rules)
        return node

    def decide(self, abs_path: str, is_dir: bool) -> bool | None:
        for kind in _KINDS:
            node: _DirNode | None = self
            while node is not None:
                found = node.files.get(kind)
                if found is not None:
                    verdict = found.decide(abs_path, is_dir)
                    if verdict is not None:
                        return verdict
                if kind in (".gitignore", "exclude") and node.has_git:
                    break  # git's own files stop at the repository root
                node = node.parent
        return None


def _read_rules(path: str) -> list[GlobRule]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [rule for rule in map(parse_rule, lines) if rule is not None]


class WalkFilter:
    """Override globs and file types, checked against paths relative to the search root."""

    def __init__(self, globs: Sequence[str] = (), types: Sequence[str] = ()) -> None:
        self.overrides = [rule for rule in map(parse_rule, globs) if rule is not None]
        self.has_includes = any(not rule.negated for rule in self.overrides)
        self.type_regexes = [glob_regex(g) for name in types for g in type_globs(name)]

    def override(self, rel: str, is_dir: bool) -> bool | None:
        for rule in reversed(self.overrides):
            if rule.matches(rel, is_dir):
                return INCLUDE if not rule.negated else IGNORE
        if self.has_includes and not is_dir:
            return IGNORE
        return None

    def type_allows(self, name: str) -> bool:
        return not self.type_regexes or any(rx.fullmatch(name) for rx in self.type_regexes)


def _ancestors_node(root: str) -> _DirNode:
    """The ignore files of ``root`` and every directory above it."""
    chain: list[str] = []
    path = root
    while True:
        chain.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    node: _DirNode | None = None
    for directory in reversed(chain):
        node = _DirNode.load(directory, node)
    assert node is not None
    return node


def walk_files(root: str, filt: WalkFilter, should_stop: Callable[[], bool] = lambda: False) -> Iterator[str]:
    """Root-relative '/'-separated paths of the files ripgrep would search under ``root``."""
    stack: list[tuple[str, str, _DirNode]] = [(root, "", _ancestors_node(root))]
    while stack:
        if should_stop():
            return
        directory, prefix, node = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + entry.name
            if not _kept(rel, entry, is_dir, filt, node):
                continue
            if is_dir:
                stack.append((entry.path, rel + "/", _DirNode.load(entry.path, node)))
            elif entry.is_file(follow_symlinks=False):  # no FIFOs, sockets or devices
                yield rel


def _kept(rel: str, entry: os.DirEntry[str], is_dir: bool, filt: WalkFilter, node: _DirNode) -> bool:
    verdict = filt.override(rel, is_dir)
    if verdict is not None:
        return verdict is INCLUDE
    if node.decide(entry.path, is_dir) is IGNORE:
        return False
    return is_dir or filt.type_allows(entry.name)
