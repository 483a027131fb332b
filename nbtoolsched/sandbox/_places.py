"""The places programs run from, inside the folders a command may write: found before it
runs (kept read-only), watched after it (what it must not have made is moved aside).

Found, up to PROTECT_DEPTH folders deep: tools' config folders and shells' startup files
(``shell/_config_places``), git's run places in every git directory (hooks, config,
``config.worktree``, ``info/attributes``; a ``core.hooksPath`` folder; files a config
``include.path`` names; submodules' and worktrees' git directories; ``.git`` pointer files
and the directories they name), and virtualenvs (a ``pyvenv.cfg``: a ``.pth`` file in one
runs in every later Python of it, the agent's own included).

What a mount cannot hold, a watch does, once the command has ended (its processes are
gone with its PID namespace, so nothing could have used what it made in between):
- a missing config folder (``.claude``, ``.vscode``, ``.idea``, ``.husky``, ``.git/hooks``, a
  hooksPath folder) is an empty read-only placeholder for the command's lifetime;
- a missing file that must stay absent (``.mcp.json``, ``.gitmodules``, startup files,
  ``.git/commondir``, ``config.worktree``, ``info/attributes``), a new entry in
  ``.git/modules`` or ``.git/worktrees``, and a protected place that is a symlink and was
  replaced, are moved into the quarantine folder (a link is put back), and the result says so.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import threading
import uuid
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..shell import GIT_RUN_PLACES, RISKY_DIRS, RISKY_FILES, XDG_RISKY

__all__ = ["Watches", "find_places", "settle", "release_placeholders", "PROTECT_DEPTH", "SKIP_DESCENT"]

PROTECT_DEPTH = 3  # how deep under a writable folder protected places are looked for (Claude Code: 3)
# Folders not descended into when looking (a virtualenv among them is still found by its
# pyvenv.cfg): caches and installed packages, where nothing is run from a config folder.
SKIP_DESCENT = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache", "site-packages", ".cache", "target"})
PLACEHOLDER_DIRS = tuple(sorted(RISKY_DIRS - {".git"}))  # made read-only when missing, at a writable root
GIT_PLACEHOLDER_DIRS = ("hooks",)
GIT_ABSENT = ("commondir", "config.worktree", "info/attributes")  # git reads them; no placeholder is possible
GIT_NESTED = ("modules", "worktrees")  # new git directories there: their hooks would run
_MAX_CONFIG = 1 << 20
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_INCLUDE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class Watches:
    """What to look at once the command has ended (see the module doc)."""

    absent: list[str] = field(default_factory=list)
    entries: dict[str, frozenset[str]] = field(default_factory=dict)  # folder -> the names it held
    links: dict[str, str] = field(default_factory=dict)  # protected symlink -> its target
    placeholders: list[str] = field(default_factory=list)


class Budget:
    __slots__ = ("left", "spent")

    def __init__(self, size: int) -> None:
        self.left = size
        self.spent = False

    def take(self) -> bool:
        if self.left <= 0:
            self.spent = True
            return False
        self.left -= 1
        return True


def find_places(roots: list[str], watches: Watches, budget: Budget, *, make: bool) -> Iterator[str]:
    """The protected paths under each writable root (``make``: placeholders may be made;
    not in a speculation's overlay, whose real folder must not change while mounted)."""
    for root in roots:
        for name in PLACEHOLDER_DIRS:
            _placeholder(os.path.join(root, name), watches, make)
        for name in RISKY_FILES:
            path = os.path.join(root, name)
            if not os.path.lexists(path):
                watches.absent.append(path)
        yield from _walk(root, 0, watches, budget, make)


def _walk(folder: str, depth: int, watches: Watches, budget: Budget, make: bool) -> Iterator[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not budget.take():
            return
        name, path = entry.name, entry.path
        is_dir = entry.is_dir(follow_symlinks=False)
        if name == ".git":
            yield from _git_places(path, watches, budget, make)
        elif name in RISKY_DIRS or name in RISKY_FILES:
            _note_link(path, watches)
            yield path
        elif name == ".config" and is_dir:
            for sub in XDG_RISKY:
                if os.path.lexists(os.path.join(path, sub)):
                    _note_link(os.path.join(path, sub), watches)
                    yield os.path.join(path, sub)
        elif is_dir and os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            yield path  # a virtualenv: its .pth files and scripts run in every later Python of it
        elif is_dir and depth + 1 < PROTECT_DEPTH and name not in SKIP_DESCENT:
            yield from _walk(path, depth + 1, watches, budget, make)


def _git_places(dot_git: str, watches: Watches, budget: Budget, make: bool) -> Iterator[str]:
    """A ``.git`` folder's run places, or a ``.git`` file (a worktree or submodule) or link
    and the places of the git directory it leads to (and of that one's common directory)."""
    if os.path.islink(dot_git):
        _note_link(dot_git, watches)
        yield from _gitdir_places(os.path.realpath(dot_git), watches, budget, make)
        return
    if os.path.isfile(dot_git):
        yield dot_git  # the pointer itself: repointed, git would read another config
        pointed = _pointer(dot_git, "gitdir:")
        if pointed is not None:
            yield from _gitdir_places(pointed, watches, budget, make=False)
        return
    yield from _gitdir_places(dot_git, watches, budget, make)


def _gitdir_places(gitdir: str, watches: Watches, budget: Budget, make: bool) -> Iterator[str]:
    if not os.path.isdir(gitdir):
        return
    work_tree = os.path.dirname(os.path.realpath(gitdir))
    for folder in _config_values(gitdir, _HOOKS_PATH, work_tree):
        if os.path.lexists(folder):
            yield folder
        elif os.path.isdir(os.path.dirname(folder)):
            _placeholder(folder, watches, make)
            yield folder
    config = os.path.join(gitdir, "config")
    for included in _config_values(gitdir, _INCLUDE_PATH, os.path.dirname(config), user=False):
        if os.path.lexists(included):
            yield included  # a file the config includes is config
    for place in GIT_RUN_PLACES:
        path = os.path.join(gitdir, place)
        if os.path.lexists(path):
            yield path
        elif place in GIT_PLACEHOLDER_DIRS:
            _placeholder(path, watches, make)
            yield path
    for name in ("commondir", "gitdir", *GIT_ABSENT):
        path = os.path.join(gitdir, name)
        if os.path.lexists(path):
            yield path
        elif name in GIT_ABSENT:
            watches.absent.append(path)
    common = _pointer(os.path.join(gitdir, "commondir"), "", base=gitdir)
    if common is not None and os.path.realpath(common) != os.path.realpath(gitdir):
        for place in GIT_RUN_PLACES:
            if os.path.lexists(os.path.join(common, place)):
                yield os.path.join(common, place)
    for nested in GIT_NESTED:
        folder = os.path.join(gitdir, nested)
        try:
            watches.entries[folder] = frozenset(os.listdir(folder))
        except FileNotFoundError:
            watches.absent.append(folder)
        except OSError:
            pass
        yield from _nested_gitdirs(folder, budget, 0)


def _nested_gitdirs(folder: str, budget: Budget, depth: int) -> Iterator[str]:
    """Submodules' and worktrees' git directories (a submodule's name may hold slashes)."""
    try:
        entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        if not budget.take():
            return
        if os.path.exists(os.path.join(entry.path, "HEAD")):
            for name in (*GIT_RUN_PLACES, "commondir", "gitdir"):
                path = os.path.join(entry.path, name)
                if os.path.lexists(path):
                    yield path
            yield from _nested_gitdirs(os.path.join(entry.path, "modules"), budget, 0)
        elif depth < 4:
            yield from _nested_gitdirs(entry.path, budget, depth + 1)


def _config_values(gitdir: str, pattern: re.Pattern[str], base: str, *, user: bool = True) -> Iterator[str]:
    """Paths a pattern's lines name in the repository's config (and the user's), read as
    text (any such line counts), relative ones taken from ``base``."""
    home = os.path.expanduser("~")
    files = [os.path.join(gitdir, "config")]
    if user:
        files += [os.path.join(home, ".gitconfig"),
                  os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "git", "config")]
    for config in files:
        text = read_small(config)
        if text is None:
            continue
        for value in pattern.findall(text):
            value = value.strip().strip('"')
            if value:
                yield os.path.normpath(os.path.join(base, os.path.expanduser(value)))


def read_small(path: str, limit: int = _MAX_CONFIG) -> str | None:
    """A regular file's text, never blocking (a FIFO or a device in its place is skipped)
    and never through a final symlink's special target."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _pointer(path: str, prefix: str, base: str | None = None) -> str | None:
    """The folder a git pointer file names (``gitdir: x`` or a bare ``commondir``), resolved."""
    text = read_small(path, 4096)
    if text is None:
        return None
    text = text.strip()
    if prefix:
        if not text.startswith(prefix):
            return None
        text = text[len(prefix):].strip()
    if not text:
        return None
    return os.path.realpath(os.path.join(base or os.path.dirname(path), text))


def _note_link(path: str, watches: Watches) -> None:
    if os.path.islink(path):
        try:
            watches.links[path] = os.readlink(path)
        except OSError:
            pass


# -- after the command ----------------------------------------------------------------------------

def settle(watches: Watches, quarantine: str | None, view: tuple[str, str] | None = None) -> list[str]:
    """Move aside what the command made where it must not have (see the module doc); the
    notes for the result. ``view``: (folder, upper folder) of a speculation's overlay,
    where what it made lies (and is simply removed)."""
    notes: list[str] = []

    def seen(path: str) -> str:
        if view is not None and (path == view[0] or path.startswith(view[0] + os.sep)):
            return view[1] + path[len(view[0]):]
        return path

    for path, target in watches.links.items():
        here = seen(path)
        if os.path.islink(here) and os.readlink(here) == target:
            continue
        if os.path.lexists(here):
            moved = _move_aside(here, quarantine, view is not None)
            os.symlink(target, here)
            notes.append(f"the command replaced the link {path} (to {target}), a place programs run from; "
                         f"the sandbox put the link back{moved}")
    for path in watches.absent:
        here = seen(path)
        if os.path.lexists(here):
            moved = _move_aside(here, quarantine, view is not None)
            notes.append(f"the command created {path}, a place programs run from, where commands may not write; "
                         f"the sandbox removed it{moved} (an Edit or Write there asks the user)")
    for folder, names in watches.entries.items():
        here = seen(folder)
        try:
            now = set(os.listdir(here))
        except OSError:
            continue
        for name in sorted(now - names):
            moved = _move_aside(os.path.join(here, name), quarantine, view is not None)
            notes.append(f"the command added {os.path.join(folder, name)}, a git directory whose hooks would run "
                         f"later; the sandbox removed it{moved}")
    return notes


def _move_aside(path: str, quarantine: str | None, delete: bool) -> str:
    """Move ``path`` into the quarantine folder (or delete it); the note's tail."""
    try:
        if delete or quarantine is None:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            return ""
        os.makedirs(quarantine, mode=0o700, exist_ok=True)
        target = os.path.join(quarantine, f"{os.path.basename(path)}-{uuid.uuid4().hex[:8]}")
        shutil.move(path, target)
        return f" (kept in {target})"
    except OSError as err:
        return f", but could not ({err.strerror or err}): remove {path} before anything else runs here"


# -- placeholders ---------------------------------------------------------------------------------

class _Placeholders:
    """Empty folders made as mount points for missing protected places, counted across
    the commands running at once in this process and removed after the last one (only
    while still empty: something another program put there meanwhile stays)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def acquire(self, path: str) -> bool:
        with self._lock:
            if path in self._count:
                self._count[path] += 1
                return True
            try:
                os.mkdir(path, 0o755)
            except OSError:
                return False  # a file appeared meanwhile, or the folder cannot take it: nothing of ours
            self._count[path] = 1
            return True

    def release(self, paths: Iterable[str]) -> None:
        with self._lock:
            for path in paths:
                left = self._count.get(path, 0) - 1
                if left > 0:
                    self._count[path] = left
                    continue
                self._count.pop(path, None)
                try:
                    os.rmdir(path)
                except OSError:
                    pass


_PLACEHOLDERS = _Placeholders()


def _placeholder(path: str, watches: Watches, make: bool) -> None:
    if os.path.lexists(path):
        return
    if make and _PLACEHOLDERS.acquire(path):
        watches.placeholders.append(path)
    else:
        watches.absent.append(path)  # in an overlay (or a folder that cannot take it): watched instead


def release_placeholders(watches: Watches) -> None:
    _PLACEHOLDERS.release(watches.placeholders)
    watches.placeholders = []
