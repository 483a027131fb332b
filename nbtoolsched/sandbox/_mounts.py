"""The file system a sandboxed command sees, as bubblewrap mount options.

Order matters, each later mount covering the earlier ones: the whole tree read-only;
the writable folders; inside them, the places programs run from, read-only again;
then the masks over what Read deny rules protect (``/dev/null`` over a file, an empty
read-only tmpfs over a folder), and what ``allowRead`` gives back inside a mask.

Everything here is blocking file-system work (walks with budgets): callers run it off
the event loop. Patterns are expanded now, when the command is wrapped: a file the
command itself creates later is not masked, and the plan says when a budget ran out.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..shell._config_places import GIT_RUN_PLACES, RISKY_DIRS, RISKY_FILES, XDG_RISKY
from ._policy import PathSet, SandboxPolicy

__all__ = ["MountPlan", "plan_mounts", "release", "PROTECT_DEPTH", "MAX_WALK", "SKIP_DESCENT"]

PROTECT_DEPTH = 3  # how deep under a writable folder protected places are looked for (Claude Code: 3)
MAX_WALK = 20_000  # entries one command's walks may visit (protected places and each mask search)
# Folders not descended into when looking for protected places (masks search them all):
# caches and installed packages, where nothing is run from a config folder.
SKIP_DESCENT = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache", "site-packages", ".cache", "target"})
# Missing places made as empty read-only folders for the command's lifetime (removed
# after): a command could otherwise create them, and what it put there would run later.
PLACEHOLDER_DIRS = (".claude",)
GIT_PLACEHOLDER_DIRS = ("hooks",)
# Files inside a git directory that must not appear: a ``commondir`` there sends git to
# another repository's config. No placeholder is possible (git refuses any such file),
# so one that appears during the command is removed after it, and the result says so.
GIT_MUST_NOT_APPEAR = ("commondir",)


@dataclass
class MountPlan:
    """The mount options for one command, and what to undo or report afterwards."""

    args: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)  # paths kept read-only inside writable folders
    masked: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)  # made for this command; release() removes them
    watch_absent: list[str] = field(default_factory=list)  # must still be absent after the command
    incomplete: list[str] = field(default_factory=list)  # what a budget cut short (masks may miss paths)
    scratch: str | None = None  # a read-only sandbox's private temp dir (a mount point, removed after)

    @property
    def masks_complete(self) -> bool:
        return not self.incomplete


def plan_mounts(policy: SandboxPolicy, cwd: str) -> MountPlan:
    """The file system of one command under ``policy`` (blocking; see the module doc)."""
    plan = MountPlan(args=["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
    writable = _existing_dirs(policy.writable) if policy.kind == "write" else []
    binds = list(writable)
    if policy.kind == "write" and policy.tmp_dir:
        os.makedirs(policy.tmp_dir, exist_ok=True)
        binds.append(os.path.realpath(policy.tmp_dir))  # ours: nothing in it is protected
    for folder in _outermost(binds):
        plan.args += ["--bind", folder, folder]
    if binds:
        budget = _Budget(MAX_WALK)
        read_only = set(_protected_places(_outermost(writable), plan, budget))
        for item in policy.deny_write:
            read_only.update(_expand(item, budget, plan))
        kept = sorted({os.path.realpath(p) for p in read_only if os.path.lexists(os.path.realpath(p))})
        kept = [p for p in kept if any(_inside(p, w) for w in binds)]
        # Pin every folder between a writable root and a protected place (a bind onto
        # itself makes it a mount point, which cannot be renamed): else `mv .git g` moves
        # the protected files aside and a new .git/hooks takes their place.
        for folder in _pins(kept, binds):
            plan.args += ["--bind", folder, folder]
        for real in kept:
            plan.args += ["--ro-bind", real, real]
            plan.protected.append(real)
        if budget.spent:
            plan.incomplete.append(f"looking for protected places stopped after {MAX_WALK} entries")
    else:
        plan.scratch = tempfile.mkdtemp(prefix="nbtoolsched-sandbox-tmp-")
        plan.args += ["--tmpfs", plan.scratch]
    _add_masks(policy, [cwd, *binds], plan)
    plan.args += ["--chdir", cwd]
    return plan


def masks_complete(policy: SandboxPolicy, cwd: str) -> bool:
    """Would the masks of ``policy`` cover every path its deny_read sets match now (no
    search cut short by a budget)? Blocking; makes nothing on the host."""
    plan = MountPlan()
    budget = _Budget(MAX_WALK)
    found: set[str] = set()
    for item in policy.deny_read:
        found.update(os.path.realpath(p) for p in _expand(item, budget, plan) if os.path.lexists(p))
    _hard_links(found, [cwd, *policy.writable], plan)
    return plan.masks_complete


def _pins(protected: list[str], roots: list[str]) -> list[str]:
    """The folders strictly between each protected path and the writable root holding it,
    outermost first."""
    pins: set[str] = set()
    for path in protected:
        root = max((r for r in roots if _inside(path, r)), key=len)
        folder = os.path.dirname(path)
        while folder != root and _inside(folder, root):
            pins.add(folder)
            folder = os.path.dirname(folder)
    return sorted(pins, key=lambda p: (p.count("/"), p))


def release(plan: MountPlan) -> list[str]:
    """Undo what the plan made on the host; the notes for the result (what was removed)."""
    notes: list[str] = []
    for path in plan.watch_absent:
        if os.path.lexists(path):
            try:
                os.unlink(path)
                notes.append(f"the command created {path}, which would send git to another repository's config; "
                             "the sandbox removed it")
            except OSError as err:
                notes.append(f"the command created {path}, which would send git to another repository's config, "
                             f"and it could not be removed ({err.strerror}): delete it before running git here")
    _PLACEHOLDERS.release(plan.placeholders)
    plan.placeholders = []
    if plan.scratch:
        try:
            os.rmdir(plan.scratch)
        except OSError:
            pass
        plan.scratch = None
    return notes


# -- protected places --------------------------------------------------------------------------

def _protected_places(roots: list[str], plan: MountPlan, budget: "_Budget") -> Iterator[str]:
    for root in roots:
        for placeholder in PLACEHOLDER_DIRS:
            path = os.path.join(root, placeholder)
            if not os.path.lexists(path) and _PLACEHOLDERS.acquire(path):
                plan.placeholders.append(path)
        yield from _walk_protected(root, 0, plan, budget)


def _walk_protected(folder: str, depth: int, plan: MountPlan, budget: "_Budget") -> Iterator[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not budget.take():
            return
        name = entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if name == ".git":
            yield from _git_places(entry.path, plan, budget)
        elif name in RISKY_DIRS or name in RISKY_FILES:
            yield entry.path
        elif name == ".config" and is_dir:
            yield from (os.path.join(entry.path, sub) for sub in XDG_RISKY if os.path.lexists(os.path.join(entry.path, sub)))
        elif is_dir and depth + 1 < PROTECT_DEPTH and name not in SKIP_DESCENT:
            yield from _walk_protected(entry.path, depth + 1, plan, budget)


def _git_places(dot_git: str, plan: MountPlan, budget: "_Budget") -> Iterator[str]:
    """A ``.git`` folder's run places, or a ``.git`` file (a worktree or submodule) and the
    places of the git directory it points to (and of that one's common directory)."""
    if os.path.isfile(dot_git) and not os.path.islink(dot_git):
        yield dot_git  # the pointer itself: repointed, git would read another config
        target = _pointer(dot_git, "gitdir:")
        if target is not None:
            yield from _gitdir_places(target, plan, budget, missing_ok=False)
        return
    yield from _gitdir_places(dot_git, plan, budget, missing_ok=True)


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def _hooks_paths(gitdir: str) -> Iterator[str]:
    """Folders ``core.hooksPath`` names in the repository's or the user's config (read as
    text: any such line counts), relative ones taken from the work tree."""
    work_tree = os.path.dirname(os.path.realpath(gitdir))
    home = os.path.expanduser("~")
    for config in (os.path.join(gitdir, "config"), os.path.join(home, ".gitconfig"),
                   os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "git", "config")):
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                text = handle.read(1 << 20)
        except OSError:
            continue
        for value in _HOOKS_PATH.findall(text):
            value = value.strip().strip('"')
            if value:
                yield os.path.join(work_tree, os.path.expanduser(value))


def _gitdir_places(gitdir: str, plan: MountPlan, budget: "_Budget", *, missing_ok: bool) -> Iterator[str]:
    if not os.path.isdir(gitdir):
        return
    yield from (path for path in _hooks_paths(gitdir) if os.path.lexists(path))
    for place in GIT_RUN_PLACES:
        path = os.path.join(gitdir, place)
        if os.path.lexists(path):
            yield path
        elif missing_ok and place in GIT_PLACEHOLDER_DIRS and _PLACEHOLDERS.acquire(path):
            plan.placeholders.append(path)
            yield path
    for name in ("commondir", "gitdir"):
        path = os.path.join(gitdir, name)
        if os.path.lexists(path):
            yield path
        elif name in GIT_MUST_NOT_APPEAR:
            plan.watch_absent.append(path)
    common = _pointer(os.path.join(gitdir, "commondir"), "", base=gitdir)
    if common is not None and os.path.realpath(common) != os.path.realpath(gitdir):
        for place in GIT_RUN_PLACES:
            if os.path.lexists(os.path.join(common, place)):
                yield os.path.join(common, place)
    for nested in ("modules", "worktrees"):
        yield from _nested_gitdirs(os.path.join(gitdir, nested), plan, budget, 0)


def _nested_gitdirs(folder: str, plan: MountPlan, budget: "_Budget", depth: int) -> Iterator[str]:
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
            yield from _nested_gitdirs(os.path.join(entry.path, "modules"), plan, budget, 0)
        elif depth < 4:
            yield from _nested_gitdirs(entry.path, plan, budget, depth + 1)


def _pointer(path: str, prefix: str, base: str | None = None) -> str | None:
    """The folder a git pointer file names (``gitdir: x`` or a bare ``commondir``), resolved."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096).strip()
    except OSError:
        return None
    if prefix:
        if not text.startswith(prefix):
            return None
        text = text[len(prefix):].strip()
    if not text:
        return None
    return os.path.realpath(os.path.join(base or os.path.dirname(path), text))


# -- masks ---------------------------------------------------------------------------------------

def _add_masks(policy: SandboxPolicy, link_roots: list[str], plan: MountPlan) -> None:
    budget = _Budget(MAX_WALK)
    found: set[str] = set()
    for item in policy.deny_read:
        found.update(os.path.realpath(p) for p in _expand(item, budget, plan) if os.path.lexists(p))
    allowed = [a for a in policy.allow_read]
    found = {p for p in found if not any(a.matches(p) for a in allowed)}
    found.update(_hard_links(found, link_roots, plan))
    masked: list[str] = []
    for path in sorted(found, key=lambda p: (p.count("/"), p)):
        if any(_inside(path, m) for m in masked):
            continue  # already under a masked folder
        masked.append(path)
    for path in masked:
        if os.path.isdir(path):
            plan.args += ["--tmpfs", path]
            for back in _given_back(path, allowed, budget, plan):
                plan.args += ["--ro-bind", back, back]
            plan.args += ["--remount-ro", path]
        else:
            plan.args += ["--ro-bind", "/dev/null", path]
    plan.masked = masked


def _given_back(folder: str, allowed: list[PathSet], budget: "_Budget", plan: MountPlan) -> list[str]:
    """What allowRead gives back inside a masked folder: bound again from the host."""
    back: list[str] = []
    for item in allowed:
        if not item.may_match_within(folder):
            continue
        for path in _search(folder, item, budget, plan):
            if os.path.lexists(path) and not any(_inside(path, b) for b in back):
                back.append(os.path.realpath(path))
    return back


def _expand(item: PathSet, budget: "_Budget", plan: MountPlan) -> list[str]:
    literal = item.literal
    if literal is not None:
        return [literal]
    found: list[str] = []
    for root in item.search_roots():
        found.extend(_search(root, item, budget, plan))
    return found


def _search(root: str, item: PathSet, budget: "_Budget", plan: MountPlan) -> list[str]:
    """Paths under ``root`` (itself included) that ``item`` matches; a matching folder is
    not searched further (masking it covers what is inside)."""
    if not os.path.lexists(root):
        return []
    if item.matches(root):
        return [root]
    found: list[str] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not budget.take():
                plan.incomplete.append(f"{item.text}: the search under {root} stopped after {MAX_WALK} entries, "
                                       "so paths it protects there may be readable")
                return found
            if item.matches(entry.path):
                found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False) and item.may_match_within(entry.path):
                pending.append(entry.path)
    return found


def _hard_links(masked: set[str], roots: Iterable[str], plan: MountPlan) -> set[str]:
    """Other names of masked files: a hard link reads the same bytes under a name no rule names."""
    wanted: dict[tuple[int, int], str] = {}
    for path in masked:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            wanted[(info.st_dev, info.st_ino)] = path
    if not wanted:
        return set()
    found: set[str] = set()
    budget = _Budget(MAX_WALK)
    for root in _outermost(_existing_dirs(roots)):
        pending = [root]
        while pending:
            folder = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if not budget.take():
                    plan.incomplete.append(f"the search for other hard links to {', '.join(sorted(wanted.values()))} "
                                           f"stopped after {MAX_WALK} entries")
                    return found
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if info.st_nlink > 1 and (info.st_dev, info.st_ino) in wanted and entry.path not in masked:
                        found.add(entry.path)
    return found


# -- helpers -------------------------------------------------------------------------------------

class _Budget:
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


def _existing_dirs(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in out:
            out.append(real)
    return out


def _outermost(folders: list[str]) -> list[str]:
    """Folders not inside another of the list (binding those covers the rest)."""
    ordered = sorted(set(folders), key=len)
    kept: list[str] = []
    for folder in ordered:
        if not any(_inside(folder, k) for k in kept):
            kept.append(folder)
    return kept


def _inside(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")
