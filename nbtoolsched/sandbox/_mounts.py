"""The file system a sandboxed command sees, as bubblewrap mount options.

Order matters, each later mount covering the earlier ones: the whole tree read-only; the
writable folders; the folders on the way to every protected or masked path, pinned (a
bind onto itself: a mount point cannot be renamed, so the protected files cannot be moved
aside with their folder); inside the writable folders, the places programs run from,
read-only again (``_places``); then the masks over what Read deny rules protect
(``/dev/null`` over a file, an empty read-only tmpfs over a folder), and what
``allowRead`` gives back inside a mask.

Everything here is blocking file-system work (walks with budgets): callers run it off
the event loop. Patterns are expanded now, when the command is wrapped: a file the
command itself creates later is not masked, and the plan says when a budget ran out.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ._places import Budget, Watches, find_places, release_placeholders, settle
from ._policy import PathSet, SandboxPolicy

if TYPE_CHECKING:
    from ._overlay import KernelOverlay

__all__ = ["MountPlan", "plan_mounts", "release", "masks_coverage", "expand", "linked_file", "MAX_WALK"]

MAX_WALK = 20_000  # entries one command's walks may visit (protected places, and each mask search)


@dataclass
class MountPlan:
    """The mount options for one command, and what to undo or report afterwards."""

    args: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)  # paths kept read-only inside writable folders
    masked: list[str] = field(default_factory=list)
    watches: Watches = field(default_factory=Watches)  # what to check once it has ended
    incomplete: list[str] = field(default_factory=list)  # what a budget cut short (masks may miss paths)
    partial: list[str] = field(default_factory=list)  # patterns searched only where commands work
    scratch: str | None = None  # a read-only sandbox's private temp dir (a mount point, removed after)
    view: tuple[str, str] | None = None  # (an overlaid folder, its upper folder): see plan_mounts
    quarantine: str | None = None

    @property
    def masks_complete(self) -> bool:
        """Every path the deny sets match under the folders searched is masked."""
        return not self.incomplete

    @property
    def masks_everywhere(self) -> bool:
        """... and no set matches outside what was searched."""
        return not self.incomplete and not self.partial


def plan_mounts(policy: SandboxPolicy, cwd: str, *, overlay: "KernelOverlay | None" = None) -> MountPlan:
    """The file system of one command under ``policy`` (blocking; see the module doc).

    With ``overlay`` (a speculation's, mounted over cwd) the places found in the real
    folder hold inside it too, but nothing is made in the real folder (no placeholders: it
    must not change while mounted), and what must stay absent is looked for in the upper
    folder."""
    plan = MountPlan(args=["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"], quarantine=policy.quarantine_dir)
    plan.view = (overlay.lower, overlay.upper) if overlay is not None else None
    writable = _existing_dirs(policy.writable) if policy.kind == "write" else []
    binds = list(writable)
    if policy.kind == "write" and policy.tmp_dir:
        os.makedirs(policy.tmp_dir, mode=0o700, exist_ok=True)
        binds.append(os.path.realpath(policy.tmp_dir))  # ours: nothing in it is protected
    for folder in _outermost(binds):
        plan.args += ["--bind", folder, folder]
    kept: list[str] = []
    if binds:
        budget = Budget(MAX_WALK)
        read_only = set(find_places(_outermost(writable), plan.watches, budget, make=overlay is None))
        for item in policy.deny_write:
            read_only.update(_expand(item, budget, plan))
        kept = sorted({os.path.realpath(p) for p in read_only if os.path.lexists(os.path.realpath(p))})
        kept = [p for p in kept if any(_inside(p, w) for w in binds)]
        if budget.spent:
            plan.incomplete.append(f"looking for protected places stopped after {MAX_WALK} entries")
    else:
        plan.scratch = tempfile.mkdtemp(prefix="nbtoolsched-sandbox-tmp-")
        plan.args += ["--tmpfs", plan.scratch]
    masks = _masks(policy, [cwd, *binds], plan)
    inside = [p for p in masks if any(_inside(p, w) for w in binds)]
    for folder in _pins([*kept, *inside], binds):
        plan.args += ["--bind", folder, folder]
    for real in kept:
        plan.args += ["--ro-bind", real, real]
        plan.protected.append(real)
    _add_masks(masks, policy.allow_read, plan)
    plan.args += ["--chdir", cwd]
    return plan


def masks_coverage(policy: SandboxPolicy, cwd: str) -> tuple[bool, bool]:
    """(complete, everywhere): would the masks of ``policy`` cover every path its deny
    sets match under the folders searched, and is that all they match? Blocking; makes
    nothing on the host."""
    plan = MountPlan()
    _masks(policy, [cwd, *policy.writable], plan)
    return plan.masks_complete, plan.masks_everywhere


def expand(items: Iterable[PathSet]) -> tuple[list[str], bool]:
    """Every existing path the sets match now (patterns searched within the budget), and
    whether the search was complete. Blocking; makes nothing on the host."""
    plan = MountPlan()
    budget = Budget(MAX_WALK)
    found: list[str] = []
    for item in items:
        found.extend(p for p in _expand(item, budget, plan) if os.path.lexists(p))
    return found, plan.masks_complete


def release(plan: MountPlan) -> list[str]:
    """Undo what the plan made on the host and settle the watches; the notes for the result."""
    notes = settle(plan.watches, plan.quarantine, plan.view)
    release_placeholders(plan.watches)
    if plan.scratch:
        try:
            os.rmdir(plan.scratch)
        except OSError:
            pass
        plan.scratch = None
    return notes


def _pins(paths: list[str], roots: list[str]) -> list[str]:
    """The folders strictly between each path and the writable root holding it, outermost first."""
    pins: set[str] = set()
    for path in paths:
        holders = [r for r in roots if _inside(path, r)]
        if not holders:
            continue
        root = max(holders, key=len)
        folder = os.path.dirname(path)
        while folder != root and _inside(folder, root):
            pins.add(folder)
            folder = os.path.dirname(folder)
    return sorted(pins, key=lambda p: (p.count("/"), p))


# -- masks ---------------------------------------------------------------------------------------

def _masks(policy: SandboxPolicy, link_roots: list[str], plan: MountPlan) -> list[str]:
    """The outermost paths to mask: what the deny sets match (minus allowRead), and other
    hard links to the files among them."""
    budget = Budget(MAX_WALK)
    found: set[str] = set()
    for item in policy.deny_read:
        found.update(os.path.realpath(p) for p in _expand(item, budget, plan) if os.path.lexists(p))
        if getattr(item, "partial", False):
            plan.partial.append(item.text)
    found = {p for p in found if not any(a.matches(p) for a in policy.allow_read)}
    found.update(_hard_links(found, link_roots, plan))
    masked: list[str] = []
    for path in sorted(found, key=lambda p: (p.count("/"), p)):
        if not any(_inside(path, m) for m in masked):  # not already under a masked folder
            masked.append(path)
    return masked


def _add_masks(masked: list[str], allowed: tuple[PathSet, ...], plan: MountPlan) -> None:
    budget = Budget(MAX_WALK)
    for path in masked:
        if os.path.isdir(path):
            plan.args += ["--tmpfs", path]
            for back in _given_back(path, list(allowed), budget, plan):
                plan.args += ["--ro-bind", back, back]
            plan.args += ["--remount-ro", path]
        else:
            plan.args += ["--ro-bind", "/dev/null", path]
    plan.masked = masked


def _given_back(folder: str, allowed: list[PathSet], budget: Budget, plan: MountPlan) -> list[str]:
    """What allowRead gives back inside a masked folder: bound again from the host."""
    back: list[str] = []
    for item in allowed:
        if not item.may_match_within(folder):
            continue
        for path in _search(folder, item, budget, plan):
            if os.path.lexists(path) and not any(_inside(path, b) for b in back):
                back.append(os.path.realpath(path))
    return back


def _expand(item: PathSet, budget: Budget, plan: MountPlan) -> list[str]:
    literal = item.literal
    if literal is not None:
        return [literal]
    found: list[str] = []
    for root in item.search_roots():
        found.extend(_search(root, item, budget, plan))
    return found


def _search(root: str, item: PathSet, budget: Budget, plan: MountPlan) -> list[str]:
    """Paths under ``root`` (itself included) that ``item`` matches; a matching folder is
    not searched further (masking it covers what is inside)."""
    if not os.path.lexists(root):
        return []
    if item.matches(root):
        return [root]
    found: list[str] = []
    try:
        for entry in _walk(root, budget, lambda e: not item.matches(e.path) and item.may_match_within(e.path)):
            if item.matches(entry.path):
                found.append(entry.path)
    except _OutOfBudget:
        plan.incomplete.append(f"{item.text}: the search under {root} stopped after {MAX_WALK} entries, "
                               "so paths it protects there may be readable")
    return found


class _OutOfBudget(Exception):
    pass


def _walk(root: str, budget: Budget, descend: Callable[[os.DirEntry[str]], bool]) -> Iterator[os.DirEntry[str]]:
    """Every entry under ``root`` (folders entered when ``descend`` says so, never through a
    link); ``_OutOfBudget`` once the budget is spent."""
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not budget.take():
                raise _OutOfBudget
            yield entry
            if entry.is_dir(follow_symlinks=False) and descend(entry):
                pending.append(entry.path)


def linked_file(path: str, *, follow: bool = False) -> tuple[int, int] | None:
    """(device, inode) of a regular file that has more than one name, else None."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 else None


def _hard_links(masked: set[str], roots: Iterable[str], plan: MountPlan) -> set[str]:
    """Other names of masked files: a hard link reads the same bytes under a name no rule names."""
    wanted = {key: path for path in masked if (key := linked_file(path)) is not None}
    if not wanted:
        return set()
    found: set[str] = set()
    budget = Budget(MAX_WALK)
    try:
        for root in _outermost(_existing_dirs(roots)):
            for entry in _walk(root, budget, lambda e: True):
                if not entry.is_file(follow_symlinks=False):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_nlink > 1 and (info.st_dev, info.st_ino) in wanted and entry.path not in masked:
                    found.add(entry.path)
    except _OutOfBudget:
        plan.incomplete.append(f"the search for other hard links to {', '.join(sorted(wanted.values()))} "
                               f"stopped after {MAX_WALK} entries")
    return found


# -- helpers -------------------------------------------------------------------------------------

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
