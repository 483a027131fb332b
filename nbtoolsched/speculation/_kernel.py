"""A speculation's kernel overlay: one copy-on-write tree for every tool, and accept/reject.

Bash runs inside the overlay (mounted for the command: ``sandbox/_overlay.py``) under the
writing sandbox: no network, nothing writable but the overlay and its temp dir. The file
tools (Read, Write, Edit, NotebookEdit) get paths resolved through the upper folder as
overlayfs resolves them (an upper entry first; a whiteout hides the real file; an opaque
folder hides the real folder's contents; otherwise the real file), and a write is copied
up first (parent folders made in the upper folder with the real ones' modes, the file
copied with its mode and times). Glob and Grep run ripgrep inside the mounted overlay.

Why paths, and not the helper's ``/proc/<pid>/root`` view for the file tools: a tool that
resolves links (``os.path.realpath``, as an atomic write does) turns that magic path
back into the real one, and writes the real file (tried: it did). And overlayfs leaves
changes to its layers while mounted undefined: between commands nothing is mounted, so
the tools may write the upper folder.

When the speculation starts, the real folder's entries are recorded (kind, mode, size,
times, inode: ``stat_manifest``); accept checks every path it changes against that
record, then applies the upper folder one entry at a time, never following a link in
the real tree.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import uuid
from dataclasses import dataclass
from typing import Iterable

from ..sandbox._overlay import KernelOverlay, StatEntry, UpperEntry, lstat_or_none as _lstat, now_entry, stat_manifest, upper_entries
from ._safefs import UnsafePath
from ..shell import safety_concern
from ._overlay import Conflict, FileChange, OverlayConflict, PathOutsideCwd, chosen_paths, is_inside, unified_diff

__all__ = ["KernelView", "CACHE_NAMES"]

# Folders a test or build run leaves (shown among the changes and applied like any other:
# after accept the tree is what running the turn for real would have left).
CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".cache", ".benchmarks"})
_MAX_LINKS = 40
_MAX_DIFF_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Planned:
    """One entry of the upper folder and what it does to the real one."""

    entry: UpperEntry
    change: FileChange | None  # None: nothing to show (a folder copied up unchanged)


class KernelView:
    """The overlay as the speculation's gate and accept/reject use it (the same surface as
    the path-rewriting ``Overlay``, so the two are interchangeable)."""

    kind = "kernel"

    def __init__(self, cwd: str, *, workdir: str | None = None, root: str | None = None) -> None:
        """Record the real folder and check that overlayfs mounts here (blocking: run it in
        a thread). ``workdir``: the speculation's own folder (outside cwd), else a new one
        under ``root``. ``OverlayUnavailable`` when the kernel refuses."""
        self.cwd = os.path.realpath(cwd)
        if workdir is None:
            base = os.path.realpath(root) if root is not None else tempfile.gettempdir()
            os.makedirs(base, mode=0o700, exist_ok=True)
            workdir = tempfile.mkdtemp(prefix="nbtoolsched-speculation-", dir=base)
        if is_inside(os.path.realpath(workdir), self.cwd):
            raise ValueError(f"the overlay must live outside cwd, but {workdir} is inside {self.cwd}")
        self.workdir = workdir
        self.manifest, self.manifest_complete = stat_manifest(self.cwd)
        self.mount = KernelOverlay.check(self.cwd, os.path.join(self.workdir, "overlay"))
        self.tree = self.mount.upper  # what a tool's paths may point into, besides the real tree

    # -- paths ---------------------------------------------------------------------------------
    def _lookup(self, rel: str) -> tuple[str | None, bool]:
        return self.mount.lookup(rel)

    def resolve(self, path: str, *, allow_root: bool = False) -> str:
        """``path`` as a link-free path relative to cwd, each link read in the merged tree
        (one the speculation made counts); ``PathOutsideCwd`` when it leaves cwd."""
        if not isinstance(path, str) or not path.strip() or "\0" in path:
            raise PathOutsideCwd(repr(path), "is not a usable path")
        text = os.path.expanduser(path)
        if text == self.tree or text.startswith(self.tree + os.sep):
            text = self.cwd + text[len(self.tree):]
        # Walked as the kernel walks it: a link is followed before a `..` after it is applied.
        if os.path.isabs(text):
            if not is_inside(os.path.normpath(text), self.cwd) or not (text == self.cwd or text.startswith(self.cwd + os.sep)):
                raise PathOutsideCwd(path, f"is outside the working directory {self.cwd}")
            text = text[len(self.cwd):]
        parts = [p for p in text.split(os.sep) if p not in ("", ".")]
        done: list[str] = []
        links = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                if not done:
                    raise PathOutsideCwd(path, "climbs out of the working directory")
                done.pop()
                continue
            where, _ = self._lookup(os.path.join(*done, part))
            try:
                target = os.readlink(where) if where is not None else None
            except OSError:
                target = None
            if target is None:
                done.append(part)
                continue
            links += 1
            if links > _MAX_LINKS:
                raise PathOutsideCwd(path, "has too many symlinks")
            if os.path.isabs(target):
                if not is_inside(os.path.normpath(target), self.cwd):
                    raise PathOutsideCwd(path, f"resolves through a symlink to {target}, outside the working directory")
                done = []
                target = os.path.relpath(os.path.normpath(target), self.cwd)
            parts = [p for p in target.split(os.sep) if p not in ("", ".")] + parts
        rel = os.path.join(*done) if done else os.curdir
        if rel == os.curdir and not allow_root:
            raise PathOutsideCwd(path, "names the working directory itself, not a file in it")
        return rel

    def real_path(self, rel: str) -> str:
        return os.path.join(self.cwd, rel)

    def overlay_path(self, rel: str) -> str:
        return os.path.join(self.mount.upper, rel)

    def read_target(self, rel: str) -> str:
        """Where a read of ``rel`` goes: its upper copy, else the real file (a path that is
        gone in the overlay reads as the upper path, which does not exist)."""
        where, _ = self._lookup(rel)
        return where if where is not None else self.overlay_path(rel)

    def prepare_write(self, rel: str) -> str:
        """The upper path to write ``rel`` to, copied up first as overlayfs would."""
        where, upper = self._lookup(rel)
        if upper:
            return where or self.overlay_path(rel)
        if where is not None:
            info = os.lstat(where)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafePath(rel, "is not a regular file, so the overlay cannot take a write to it")
        parent = os.path.dirname(rel)
        if parent:
            self._copy_up_folders(parent)
        target = self.overlay_path(rel)
        if where is not None and not os.path.lexists(target):
            shutil.copy2(where, target, follow_symlinks=False)
        return target

    def _copy_up_folders(self, rel: str) -> None:
        parts = rel.split(os.sep)
        for index in range(1, len(parts) + 1):
            sub = os.path.join(*parts[:index])
            upper = self.overlay_path(sub)
            here = _lstat(upper)
            if here is not None:
                if stat.S_ISCHR(here.st_mode) and here.st_rdev == 0:
                    os.unlink(upper)  # a folder deleted in the overlay, made again: opaque, as overlayfs does
                    os.mkdir(upper, 0o755)
                    _set_opaque(upper, self.mount.root)
                elif not stat.S_ISDIR(here.st_mode):
                    raise UnsafePath(rel, f"{sub} is not a folder in the overlay")
                continue
            lower = _lstat(self.real_path(sub))
            if lower is not None and not stat.S_ISDIR(lower.st_mode):
                raise UnsafePath(rel, f"{sub} is not a folder")
            os.mkdir(upper, stat.S_IMODE(lower.st_mode) if lower is not None else 0o755)
            if lower is not None:
                os.chmod(upper, stat.S_IMODE(lower.st_mode))

    def is_written(self, rel: str) -> bool:
        return self._lookup(rel)[1]

    def to_real(self, text: str) -> str:
        """Upper-folder paths in a piece of text, shown as the real paths they stand for."""
        return text.replace(self.tree + os.sep, self.cwd + os.sep).replace(self.tree, self.cwd)

    @property
    def exists(self) -> bool:
        return os.path.isdir(self.workdir)

    # -- what changed --------------------------------------------------------------------------
    def changes(self) -> list[FileChange]:
        """Every created, modified, deleted, replaced, mode-changed and symlinked path."""
        return [p.change for p in self._plan() if p.change is not None]

    def _plan(self) -> list[_Planned]:
        return [_Planned(entry, self._change(entry)) for entry in upper_entries(self.mount.upper, root=self.mount.root)]

    def _change(self, entry: UpperEntry) -> FileChange | None:
        rel, real = entry.rel, self.manifest.get(entry.rel)
        lower = os.path.join(self.cwd, rel)
        if entry.kind == "whiteout":
            if real is None:
                return None  # made and removed again by the speculation
            what = "folder" if real.kind == "dir" else real.kind
            old = _read(lower) if real.kind == "file" else None
            diff, binary = unified_diff(rel, old, None) if old is not None else (f"{what} deleted\n", real.kind != "file")
            return FileChange(rel, "deleted", diff, binary, detail=f"{what} deleted")
        upper = os.path.join(self.mount.upper, rel)
        if entry.kind == "opaque_dir":
            return FileChange(rel, "replaced" if real is not None else "created", "",
                              detail="folder replaced: what was in it is gone" if real is not None else "folder created")
        if entry.kind == "dir":
            if real is None:
                return FileChange(rel, "created", "", detail="folder created")
            if real.kind != "dir":
                return FileChange(rel, "replaced", "", detail=f"{real.kind} replaced by a folder")
            if real.mode != entry.mode:
                return FileChange(rel, "mode_changed", "", detail=f"mode {real.mode:04o} → {entry.mode:04o}")
            return None
        if entry.kind == "symlink":
            was = f" (was a {real.kind})" if real is not None else ""
            return FileChange(rel, "symlink", "", detail=f"symlink to {entry.target}{was}")
        if entry.kind == "other":
            return FileChange(rel, "created", "", binary=True, detail="a special file (not applied)")
        new = _read(upper)
        special = _special_bits(entry.mode)
        if real is None:
            diff, binary = unified_diff(rel, None, new)
            return FileChange(rel, "created", diff, binary, detail="; ".join(filter(None, (_cache_note(rel), special))))
        if real.kind != "file":
            diff, binary = unified_diff(rel, None, new)
            return FileChange(rel, "replaced", diff, binary, detail=f"{real.kind} replaced by a file")
        old = _read(lower)
        if _same_bytes(lower, upper):
            if real.mode != entry.mode:
                return FileChange(rel, "mode_changed", "", detail="; ".join(filter(None, (f"mode {real.mode:04o} → {entry.mode:04o}", special))))
            return None  # copied up (a touch, an open for writing) and left the same
        diff, binary = unified_diff(rel, old, new)
        mode = f"mode {real.mode:04o} → {entry.mode:04o}" if real.mode != entry.mode else ""
        return FileChange(rel, "modified", diff, binary, detail="; ".join(filter(None, (_cache_note(rel), mode, special))))

    def protected(self, paths: Iterable[str] | None = None) -> list[str]:
        """Changed paths in a place programs run from (.git/hooks, .claude/, .vscode/...),
        of those an accept of ``paths`` would apply (all by default)."""
        chosen = self._needed(self._plan(), paths)
        return [c.path for c in self.changes() if c.path in chosen and safety_concern([self.real_path(c.path)])]

    def _needed(self, plan: list[_Planned], paths: Iterable[str] | None) -> set[str]:
        """The changed paths an accept of ``paths`` applies: those, and every folder above
        one of them that the real tree lacks (created, or a file there before), since a
        file cannot land without its folder. A folder that exists stays as it is (its mode
        change or its replacement is applied only when chosen itself)."""
        changed = {p.change.path: p for p in plan if p.change is not None}
        chosen = chosen_paths([p.change for p in plan if p.change is not None], paths)
        if paths is None:
            return chosen
        for rel in list(chosen):
            parent = os.path.dirname(rel)
            while parent:
                real = self.manifest.get(parent)
                if parent in changed and (real is None or real.kind != "dir"):
                    chosen.add(parent)
                parent = os.path.dirname(parent)
        return chosen

    def conflicts(self, paths: Iterable[str] | None = None) -> list[Conflict]:
        """Paths the real tree no longer holds as it did when the speculation started (of
        those an accept of ``paths`` would touch; all by default)."""
        out: list[Conflict] = []
        plan = self._plan()
        chosen = self._needed(plan, paths)
        for planned in plan:
            if planned.change is None or planned.change.path not in chosen:
                continue
            for rel in self._touched(planned.entry):
                problem = self._conflict(rel)
                if problem:
                    out.append(Conflict(rel, problem))
        return out

    def _touched(self, entry: UpperEntry) -> list[str]:
        """The real paths applying ``entry`` changes: itself, and, when it removes a real
        folder (a deletion, an opaque folder, a file or link in its place), everything that
        was in it and everything that is in it now."""
        paths = [entry.rel]
        if entry.kind != "dir" and (self.manifest.get(entry.rel) or _NO).kind == "dir":
            prefix = entry.rel + os.sep
            paths += [rel for rel in self.manifest if rel.startswith(prefix)]
            paths += [rel for rel in _listing(self.cwd, entry.rel) if rel not in self.manifest]
        return paths

    def _conflict(self, rel: str) -> str | None:
        was, now = self.manifest.get(rel), now_entry(self.cwd, rel)
        if was is None:
            if now is None:
                return None
            if not self.manifest_complete:
                return "the tree was too large to record in full when the speculation started, so its state then is not known"
            return f"it did not exist when the speculation started, and now it is a {now.kind}"
        if now is None:
            return "it was deleted on disk while the speculation ran"
        if now.kind != was.kind:
            return f"it was a {was.kind} when the speculation started and is now a {now.kind}"
        if now.kind == "dir":
            return None if now.mode == was.mode else f"its mode changed on disk from {was.mode:04o} to {now.mode:04o}"
        if (now.size, now.mtime_ns, now.ino) == (was.size, was.mtime_ns, was.ino) and now.mode != was.mode:
            return f"its mode changed on disk from {was.mode:04o} to {now.mode:04o}"
        if (now.size, now.mtime_ns, now.ctime_ns, now.ino, now.mode) != (was.size, was.mtime_ns, was.ctime_ns, was.ino, was.mode):
            return "it changed on disk while the speculation ran"
        return None

    # -- accept / reject ----------------------------------------------------------------------
    def apply(self, *, allow_protected: bool = False, max_bytes: int | None = None,
              paths: Iterable[str] | None = None) -> list[FileChange]:
        """Check, then apply the upper folder to the real tree, all or nothing; returns the
        changes applied.

        ``paths`` applies only those changes (and the folders above them that the real tree
        lacks: ``_needed``); a change left out is neither checked nor applied.

        Raises ``OverlayConflict`` (nothing applied) when a path changed on disk since the
        start, when the overlay holds more than ``max_bytes`` (a sparse file is written out
        in full), or when a change lands in a place programs run from and ``allow_protected``
        is not given (the sandbox kept commands out of the existing ones; a new
        ``.vscode/tasks.json`` would run later). Every file and link is first written beside
        its target under a temporary name; only then do the renames and removals run, and a
        failure undoes the ones made. Set-user-ID, set-group-ID and sticky bits are not carried
        over (``changes()`` names them)."""
        plan = self._plan()
        chosen = self._needed(plan, paths)
        changes = [p.change for p in plan if p.change is not None and p.change.path in chosen]
        conflicts = self.conflicts(chosen)
        if max_bytes is not None:
            held = self.mount.upper_size(max_bytes)
            if held > max_bytes:
                conflicts.append(Conflict(".", f"the overlay holds more than {max_bytes} bytes, its size budget"))
        if not allow_protected:
            conflicts += [Conflict(p, "it is a place programs run from (pass allow_protected=True after reading it)")
                          for p in self.protected(chosen)]
        if conflicts:
            raise OverlayConflict(conflicts)
        # An unchanged folder is walked through (its mode set to what it already is).
        entries = [p.entry for p in plan if (p.change is not None and p.change.path in chosen)
                   or (p.change is None and p.entry.kind == "dir")]
        staged = _Staging(self.cwd, self.mount.upper)
        try:
            for entry in entries:
                staged.prepare(entry)
        except OSError as err:
            staged.abandon()
            raise OverlayConflict([Conflict(_name_of(err), f"it could not be prepared ({err.strerror or err}); nothing was applied")]) from None
        try:
            staged.commit()
        except OSError as err:
            stuck = staged.roll_back()
            raise OverlayConflict([Conflict(_name_of(err), f"it could not be applied ({err.strerror or err})")], applied=stuck) from None
        return changes

    def discard(self) -> None:
        """Unmount and delete the overlay: the real tree was never written."""
        self.mount.discard()
        shutil.rmtree(self.workdir, ignore_errors=True)


_NO = StatEntry("missing", 0, 0, 0, 0, 0)


def _set_opaque(path: str, root: bool) -> None:
    os.setxattr(path, "trusted.overlay.opaque" if root else "user.overlay.opaque", b"y")


def _cache_note(rel: str) -> str:
    return "a cache" if any(part in CACHE_NAMES for part in rel.split(os.sep)) else ""


def _listing(root: str, rel: str) -> list[str]:
    """Every path now under ``root/rel`` (relative to root), never through a link."""
    found: list[str] = []
    pending = [rel]
    while pending and len(found) < 100_000:
        folder = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(root, folder)))
        except OSError:
            continue
        for entry in entries:
            sub = os.path.join(folder, entry.name)
            found.append(sub)
            if entry.is_dir(follow_symlinks=False):
                pending.append(sub)
    return found


def _same_bytes(a: str, b: str) -> bool:
    """Do two regular files hold the same bytes (compared in full, not just the diff's cut)?"""
    try:
        if os.stat(a).st_size != os.stat(b).st_size:
            return False
        with open(a, "rb") as first, open(b, "rb") as second:
            while True:
                one, two = first.read(1 << 20), second.read(1 << 20)
                if one != two:
                    return False
                if not one:
                    return True
    except OSError:
        return False


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_DIFF_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= _MAX_DIFF_BYTES else data[:_MAX_DIFF_BYTES]


_SPECIAL = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX


def _special_bits(mode: int) -> str:
    found = [name for bit, name in ((stat.S_ISUID, "set-user-ID"), (stat.S_ISGID, "set-group-ID"), (stat.S_ISVTX, "sticky"))
             if mode & bit]
    return f"{', '.join(found)} bit not applied" if found else ""


def _name_of(err: OSError) -> str:
    return str(getattr(err, "filename", "") or "?")


class _Staging:
    """Accept in two steps: write every file and link into one staging folder at the top of
    the tree (the same file system, so a rename moves it into place), then, entry by entry,
    set aside what is replaced and rename the new one in; a failure puts back what was set
    aside. Never through a link: each parent is opened component by component with O_NOFOLLOW."""

    def __init__(self, root: str, upper: str) -> None:
        self.root, self.upper = root, upper
        self.stage = f".nbts-stage-{uuid.uuid4().hex[:12]}"
        self.staged: dict[str, str] = {}  # rel -> its name in the staging folder
        self.steps: list[tuple[str, UpperEntry]] = []  # ("remove"|"dir"|"place", entry), parents first
        self.done: list[tuple[str, str, str | None]] = []  # (what, rel, the name set aside) for the undo
        self._stage_fd: int | None = None

    def _stage_dir(self) -> int:
        if self._stage_fd is None:
            root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.mkdir(self.stage, 0o700, dir_fd=root)
                self._stage_fd = os.open(self.stage, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root)
            finally:
                os.close(root)
        return self._stage_fd

    def prepare(self, entry: UpperEntry) -> None:
        if entry.kind in ("dir", "opaque_dir"):
            self.steps.append(("dir", entry))
            return
        if entry.kind == "whiteout":
            self.steps.append(("remove", entry))
            return
        if entry.kind not in ("file", "symlink"):
            return  # a special file: not applied (changes() says so)
        fd, temp = self._stage_dir(), uuid.uuid4().hex
        if entry.kind == "symlink":
            os.symlink(entry.target, temp, dir_fd=fd)
        else:
            source = os.path.join(self.upper, entry.rel)
            with open(source, "rb") as src:
                out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
                with os.fdopen(out, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            os.chmod(temp, entry.mode & ~_SPECIAL & 0o7777, dir_fd=fd)
            info = os.stat(source)
            os.utime(temp, ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=fd)
        self.staged[entry.rel] = temp
        self.steps.append(("place", entry))

    def _parent(self, rel: str) -> int:
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for part in [p for p in rel.split(os.sep) if p]:
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            finally:
                os.close(fd)
            fd = child
        return fd

    def commit(self) -> None:
        for step, entry in self.steps:
            parent_rel, name = os.path.split(entry.rel)
            fd = self._parent(parent_rel)
            try:
                current = _lstat_at(fd, name)
                if step == "remove":
                    self._set_aside(fd, name, entry.rel, current)
                elif step == "dir":
                    if current is not None and (not stat.S_ISDIR(current.st_mode) or entry.kind == "opaque_dir"):
                        self._set_aside(fd, name, entry.rel, current)
                        current = None
                    if current is None:
                        os.mkdir(name, 0o700, dir_fd=fd)
                        self.done.append(("made", entry.rel, None))
                    os.chmod(name, entry.mode & 0o777, dir_fd=fd)
                else:
                    if current is not None:
                        self._set_aside(fd, name, entry.rel, current)
                    os.rename(self.staged[entry.rel], name, src_dir_fd=self._stage_dir(), dst_dir_fd=fd)
                    self.done.append(("placed", entry.rel, None))
            finally:
                os.close(fd)
        self._finish()

    def _set_aside(self, fd: int, name: str, rel: str, current: os.stat_result | None) -> None:
        """Move ``name`` into the staging folder, where the undo finds it again."""
        if current is None:
            return
        aside = uuid.uuid4().hex
        os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=self._stage_dir())
        self.done.append(("removed", rel, aside))

    def _finish(self) -> None:
        """Everything is in place: drop the staging folder (what was set aside, and leftovers)."""
        if self._stage_fd is None:
            return
        os.close(self._stage_fd)
        self._stage_fd = None
        root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove_at(root, self.stage, _lstat_at(root, self.stage))
        except OSError:
            pass
        finally:
            os.close(root)

    def roll_back(self) -> list[str]:
        """Undo what commit made, newest first; the paths that could not be put back."""
        stuck: list[str] = []
        for what, rel, aside in reversed(self.done):
            parent_rel, name = os.path.split(rel)
            try:
                fd = self._parent(parent_rel)
            except OSError:
                stuck.append(rel)
                continue
            try:
                if what in ("made", "placed"):
                    _remove_at(fd, name, _lstat_at(fd, name))
                elif what == "removed" and aside is not None:
                    os.rename(aside, name, src_dir_fd=self._stage_dir(), dst_dir_fd=fd)
            except OSError:
                stuck.append(rel)
            finally:
                os.close(fd)
        self._finish()
        return sorted(stuck)

    def abandon(self) -> None:
        """Nothing was applied: drop the staging folder."""
        self._finish()


def _lstat_at(fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _remove_at(fd: int, name: str, current: os.stat_result | None) -> None:
    if current is None:
        return
    if not stat.S_ISDIR(current.st_mode):
        os.unlink(name, dir_fd=fd)
        return
    child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        for inner in os.listdir(child):
            _remove_at(child, inner, _lstat_at(child, inner))
    finally:
        os.close(child)
    os.rmdir(name, dir_fd=fd)
