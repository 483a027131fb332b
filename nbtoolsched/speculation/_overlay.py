"""A copy-on-write overlay of the working directory.

The overlay is a private directory that mirrors paths relative to cwd. The first write
to a file copies the real file into the overlay (remembering what it held), and every
write then lands there; a read of a written file reads the overlay copy, a read of an
untouched file reads the real tree. Nothing under cwd changes until ``apply``, which
refuses, naming them, files that changed on disk since the overlay copied them.
"""

from __future__ import annotations

from .._errors import NbtoolschedError

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

from ._safefs import Snapshot, StagedChange, UnsafePath, read_entry, stage_delete, stage_write

__all__ = ["Overlay", "FileChange", "Conflict", "OverlayConflict", "PathOutsideCwd", "is_inside", "chosen_paths"]

# created, modified, deleted; with the kernel overlay also: a folder or file replaced by
# something else, only the mode changed, a symlink made.
ChangeKind = Literal["created", "modified", "deleted", "replaced", "mode_changed", "symlink"]


class PathOutsideCwd(UnsafePath):
    """A path that is, or resolves to, somewhere outside the working directory."""


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str  # relative to cwd
    kind: ChangeKind
    diff: str
    binary: bool = False
    detail: str = ""  # a line for what a diff cannot show (a folder, a mode, a link target)


@dataclass(frozen=True, slots=True)
class Conflict:
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class OverlayConflict(NbtoolschedError):
    """Accept was refused: the real tree changed under these files.

    Nothing was written, unless ``applied`` names files: those were copied back and
    could not be put back as they were (the file system refused the undo too).
    """

    def __init__(self, conflicts: list[Conflict], applied: Sequence[str] = ()) -> None:
        self.conflicts = conflicts
        self.applied = list(applied)
        names = "; ".join(str(c) for c in conflicts)
        message = f"refusing to copy the speculation back, these files changed on disk meanwhile: {names}"
        if self.applied:
            message += f". These were already copied back and could not be undone: {', '.join(self.applied)}"
        super().__init__(message)


def is_inside(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it (both already absolute and normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def chosen_paths(changes: Sequence[FileChange], paths: Iterable[str] | None) -> set[str]:
    """The changed paths an accept applies: all of them (``paths=None``), or those named.

    ``ValueError`` names any path that is not one of the changes (a typo must not quietly
    apply less than the user chose)."""
    known = {c.path for c in changes}
    if paths is None:
        return known
    if isinstance(paths, str):
        raise TypeError("paths must be a list of paths, not one string")
    wanted = {os.path.normpath(p) for p in paths}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"not among the speculation's changes: {', '.join(unknown)} "
                         f"(the changes are: {', '.join(sorted(known)) or 'none'})")
    return wanted


class Overlay:
    def __init__(self, cwd: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> None:
        self.cwd = os.path.realpath(os.fspath(cwd))
        if not os.path.isdir(self.cwd):
            raise ValueError(f"cwd {self.cwd} is not a directory")
        base = os.path.realpath(os.fspath(root)) if root is not None else tempfile.gettempdir()
        if is_inside(base, self.cwd):
            raise ValueError(f"the overlay must live outside cwd, but {base} is inside {self.cwd}")
        os.makedirs(base, mode=0o700, exist_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="nbtoolsched-speculation-", dir=base)
        self.tree = os.path.join(self.workdir, "tree")
        os.mkdir(self.tree, 0o700)
        self._origins: dict[str, Snapshot] = {}  # rel -> the real entry when first written

    # -- paths ---------------------------------------------------------------------------
    def resolve(self, path: str, *, allow_root: bool = False) -> str:
        """``path`` (relative to cwd or absolute) as a symlink-free path relative to cwd.

        Raises ``PathOutsideCwd`` for ``..`` escapes, absolute paths elsewhere, and
        symlinks (as the file or any directory above it) that resolve outside cwd.
        """
        if not isinstance(path, str) or not path.strip() or "\0" in path:
            raise PathOutsideCwd(repr(path), "is not a usable path")
        absolute = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        if not is_inside(absolute, self.cwd):
            raise PathOutsideCwd(path, f"is outside the working directory {self.cwd}")
        real = os.path.realpath(absolute)
        if not is_inside(real, self.cwd):
            raise PathOutsideCwd(path, f"resolves through a symlink to {real}, outside the working directory")
        rel = os.path.relpath(real, self.cwd)
        if rel == os.curdir and not allow_root:
            raise PathOutsideCwd(path, "names the working directory itself, not a file in it")
        return rel

    def real_path(self, rel: str) -> str:
        return os.path.join(self.cwd, rel)

    def overlay_path(self, rel: str) -> str:
        return os.path.join(self.tree, rel)

    def is_written(self, rel: str) -> bool:
        return rel in self._origins

    @property
    def written(self) -> list[str]:
        return sorted(self._origins)

    def read_target(self, rel: str) -> str:
        """Where a read of ``rel`` goes: the overlay copy once written, else the real file."""
        return self.overlay_path(rel) if rel in self._origins else self.real_path(rel)

    def to_real(self, text: str) -> str:
        """Overlay paths in a piece of text, shown as the real paths they stand for."""
        return text.replace(self.tree + os.sep, self.cwd + os.sep)

    # -- copy on write -------------------------------------------------------------------
    def prepare_write(self, rel: str) -> str:
        """The overlay path to write ``rel`` to; the first time, copy the real file there."""
        if rel in self._origins:
            return self.overlay_path(rel)
        if any(_nested(rel, other) for other in self._origins):
            raise UnsafePath(rel, "a file with the name of one of its directories was written already")
        origin, data = read_entry(self.cwd, rel)
        if origin.kind not in ("file", "missing"):
            raise UnsafePath(rel, f"is {origin.describe()}, not a regular file")
        target = self.overlay_path(rel)
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        if origin.kind == "file":
            assert data is not None
            with open(target, "xb") as handle:
                handle.write(data)
            os.chmod(target, origin.mode)
            os.utime(target, ns=(origin.mtime_ns, origin.mtime_ns))
        self._origins[rel] = origin
        return target

    def origin(self, rel: str) -> Snapshot:
        return self._origins[rel]

    # -- what changed ----------------------------------------------------------------------
    def changes(self) -> list[FileChange]:
        """Created, modified and deleted files, with unified diffs against the real tree."""
        out = []
        for rel in sorted(self._origins):
            change = self._change(rel)
            if change is not None:
                out.append(change)
        return out

    def _change(self, rel: str) -> FileChange | None:
        origin = self._origins[rel]
        mine, new = read_entry(self.tree, rel)
        if mine.kind not in ("file", "missing"):
            return FileChange(rel, "modified", f"overlay entry is {mine.describe()}, not a file", binary=True)
        if origin.kind == "missing" and mine.kind == "missing":
            return None
        if mine.kind == "file" and origin.kind == "file" and mine.same_content(origin):
            return None
        kind: ChangeKind = "created" if origin.kind == "missing" else "deleted" if mine.kind == "missing" else "modified"
        real, old = read_entry(self.cwd, rel)
        diff, binary = unified_diff(rel, old if real.kind == "file" else None, new)
        return FileChange(rel, kind, diff, binary)

    def conflicts(self, paths: Iterable[str] | None = None) -> list[Conflict]:
        """Files whose real copy no longer holds what the overlay started from (of the
        changes named by ``paths``; all of them by default)."""
        changes = self.changes()
        chosen = chosen_paths(changes, paths)
        out = []
        for change in changes:
            if change.path not in chosen:
                continue
            problem = self._conflict(change.path)
            if problem:
                out.append(Conflict(change.path, problem))
        return out

    def _conflict(self, rel: str) -> str | None:
        mine = read_entry(self.tree, rel)[0]
        if mine.kind not in ("file", "missing"):
            return f"the overlay holds {mine.describe()}, not a file"
        origin, now = self._origins[rel], read_entry(self.cwd, rel)[0]
        if now.same_entry(origin):
            return None
        if origin.kind == "missing":
            return f"it did not exist when the speculation created it, and now it is {now.describe()}"
        if now.kind == "missing":
            return "it was deleted on disk while the speculation ran"
        if now.kind == "file" and now.same_content(origin):  # copying back would undo a chmod
            return f"its mode changed on disk from {origin.mode:04o} to {now.mode:04o} after the speculation copied it"
        if now.kind == "file":
            return "it changed on disk after the speculation copied it"
        return f"it is now {now.describe()}"

    # -- accept / reject ---------------------------------------------------------------------
    def apply(self, paths: Iterable[str] | None = None) -> list[FileChange]:
        """Copy every change back into cwd (or only those ``paths`` name), all or nothing;
        raise ``OverlayConflict`` if unsafe. Returns the changes applied.

        Every chosen change is staged and checked before the first one lands; a file left
        out is neither checked nor written. If a commit still fails (the tree changed in the
        last instant), the ones already made are undone.
        """
        everything = self.changes()
        chosen = chosen_paths(everything, paths)
        changes = [c for c in everything if c.path in chosen]
        conflicts = self.conflicts(chosen)
        if conflicts:
            raise OverlayConflict(conflicts)
        staged: list[StagedChange] = []
        try:
            for change in changes:
                staged.append(self._stage(change))
            late = [Conflict(s.rel, why) for s in staged if (why := s.verify(self._origins[s.rel]))]
            if late:
                raise OverlayConflict(late)
            _commit_all(staged)
        except UnsafePath as err:
            raise OverlayConflict([Conflict(err.path, err.reason)]) from None
        finally:
            for item in reversed(staged):  # innermost first: a shared new directory empties last
                item.abandon()
                item.close()
        return changes

    def _stage(self, change: FileChange) -> StagedChange:
        if change.kind == "deleted":
            return stage_delete(self.cwd, change.path)
        mine, data = read_entry(self.tree, change.path)
        assert data is not None
        origin = self._origins[change.path]
        mode = origin.mode if origin.kind == "file" else mine.mode
        return stage_write(self.cwd, change.path, data, mode or 0o644)

    def discard(self) -> None:
        """Delete the overlay; the real tree is never touched."""
        shutil.rmtree(self.workdir, ignore_errors=True)
        self._origins.clear()

    @property
    def exists(self) -> bool:
        return os.path.isdir(self.workdir)


def _commit_all(staged: list[StagedChange]) -> None:
    """Commit every staged change, or undo the ones made and raise ``OverlayConflict``."""
    for number, item in enumerate(staged):
        try:
            item.commit()
        except OSError as err:
            failed = Conflict(item.rel, f"it could not be replaced ({err.strerror or err}): it changed on disk while accept ran")
            stuck = []
            for made in reversed(staged[:number]):
                try:
                    made.roll_back()
                except OSError:
                    stuck.append(made.rel)
                    made.finish()
            raise OverlayConflict([failed], applied=sorted(stuck)) from None
    for item in staged:
        item.finish()


def _nested(rel: str, other: str) -> bool:
    """True when ``other`` is a directory of ``rel`` or the reverse (a file/dir clash)."""
    return rel.startswith(other + os.sep) or other.startswith(rel + os.sep)


def unified_diff(rel: str, old: bytes | None, new: bytes | None) -> tuple[str, bool]:
    """A unified diff of two versions of ``rel`` (None = absent); binary files say so."""
    try:
        before = old.decode("utf-8") if old is not None else ""
        after = new.decode("utf-8") if new is not None else ""
    except UnicodeDecodeError:
        return f"Binary file {rel} differs\n", True
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{rel}",
        tofile="/dev/null" if new is None else f"b/{rel}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines), False

