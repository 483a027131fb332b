"""File operations under a root directory that never follow a symlink.

A path is walked from an open descriptor of the root, one component at a time, with
``O_NOFOLLOW``: a symlink swapped in anywhere along the way (the file itself or a
directory above it) makes the operation fail instead of landing somewhere else. Writes
go to a temporary file in the same directory and are renamed into place, so a reader
never sees half a file and a symlink at the final name is replaced, not followed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["UnsafePath", "Snapshot", "StagedChange", "read_entry", "snapshot", "split_rel", "stage_delete", "stage_write"]

EntryKind = Literal["missing", "file", "symlink", "dir", "other", "unsafe"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(Exception):
    """A path that cannot be used safely: it escapes, or a symlink sits on it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one path held at one moment: enough to tell whether it changed since."""

    kind: EntryKind
    sha256: str = ""
    size: int = 0
    mtime_ns: int = 0
    mode: int = 0
    detail: str = ""

    def same_content(self, other: "Snapshot") -> bool:
        return self.kind == other.kind and self.sha256 == other.sha256 and self.size == other.size

    def same_entry(self, other: "Snapshot") -> bool:
        """Same kind, bytes and permission bits: copying back over it would revert nothing."""
        return self.same_content(other) and self.mode == other.mode

    def describe(self) -> str:
        if self.kind == "file":
            return f"a file of {self.size} bytes (mode {self.mode:04o})"
        if self.kind == "unsafe":
            return self.detail
        return {"missing": "missing", "symlink": "a symlink", "dir": "a directory", "other": "a special file"}[self.kind]


def split_rel(rel: str) -> list[str]:
    """The components of a relative path; anything that could climb out is refused."""
    if not isinstance(rel, str) or not rel or "\0" in rel:
        raise UnsafePath(str(rel), "not a usable relative path")
    if os.path.isabs(rel):
        raise UnsafePath(rel, "must be relative")
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise UnsafePath(rel, "must name a file below the root without '..'")
    return parts


def _open_dir(root: str) -> int:
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


@dataclass(slots=True)
class _Parent:
    """An open parent directory of a path, plus the directories made to reach it."""

    fd: int
    name: str
    created: list[tuple[int, str]] = field(default_factory=list)  # (dir fd, name), outermost first


def _walk(root: str, rel: str, *, create: bool) -> _Parent | None:
    """Open ``rel``'s parent without following symlinks; None if it does not exist."""
    parts = split_rel(rel)
    fd = _open_dir(root)
    created: list[tuple[int, str]] = []
    try:
        for depth, part in enumerate(parts[:-1]):
            where = os.sep.join(parts[: depth + 1])
            try:
                child = _open_child(part, fd, rel, where)
            except FileNotFoundError:
                if not create:
                    _close_all(fd, created)
                    return None
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:  # made by someone else since the open above
                    raise UnsafePath(rel, f"the directory {where} appeared on disk while the changes were being written") from None
                created.append((os.dup(fd), part))
                child = _open_child(part, fd, rel, where)
            os.close(fd)
            fd = child
    except BaseException:
        _close_all(fd, created)
        raise
    return _Parent(fd, parts[-1], created)


def _open_child(part: str, fd: int, rel: str, where: str) -> int:
    """Open one directory component; a symlink or a non-directory there is unsafe."""
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(rel, f"{where} is a symlink or not a directory") from None
        raise


def _close_all(fd: int, created: list[tuple[int, str]]) -> None:
    os.close(fd)
    for dir_fd, _ in created:
        os.close(dir_fd)


def _entry(parent: _Parent, want_data: bool) -> tuple[Snapshot, bytes | None]:
    try:
        info = os.stat(parent.name, dir_fd=parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return Snapshot("missing"), None
    if stat.S_ISLNK(info.st_mode):
        return Snapshot("symlink", mtime_ns=info.st_mtime_ns), None
    if stat.S_ISDIR(info.st_mode):
        return Snapshot("dir", mtime_ns=info.st_mtime_ns), None
    if not stat.S_ISREG(info.st_mode):
        return Snapshot("other"), None
    fd = os.open(parent.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent.fd)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
        info = os.fstat(fd)
    finally:
        os.close(fd)
    snap = Snapshot("file", hashlib.sha256(data).hexdigest(), len(data), info.st_mtime_ns, stat.S_IMODE(info.st_mode))
    return snap, data if want_data else None


def read_entry(root: str, rel: str) -> tuple[Snapshot, bytes | None]:
    """The entry at ``root/rel`` and, for a regular file, its bytes."""
    try:
        parent = _walk(root, rel, create=False)
    except UnsafePath as err:
        return Snapshot("unsafe", detail=err.reason), None
    if parent is None:
        return Snapshot("missing"), None
    try:
        return _entry(parent, True)
    finally:
        _close_all(parent.fd, parent.created)


def snapshot(root: str, rel: str) -> Snapshot:
    return read_entry(root, rel)[0]


class StagedChange:
    """One change prepared next to its target: ``commit`` applies it, ``roll_back`` undoes
    a commit, ``finish`` makes it final, ``abandon`` cleans up one that was not committed.

    The parent directory stays open from staging to commit, and ``verify`` checks, just
    before commit, that the same directory is still reached from the root without a
    symlink and that the target still holds what it held when the speculation began.
    A commit keeps what it replaced (a hard link, or the deleted file moved aside) until
    ``finish``, so a later commit that fails can put every earlier one back.
    """

    def __init__(self, root: str, rel: str, parent: _Parent, temp: str | None) -> None:
        self.root, self.rel, self.parent, self.temp = root, rel, parent, temp
        self.backup: str | None = None  # the replaced entry, beside the target, until finish
        self.done = False

    def verify(self, expected: Snapshot) -> str | None:
        """None when safe to commit; otherwise why not."""
        try:
            fresh = _walk(self.root, self.rel, create=False)
        except UnsafePath as err:
            return err.reason
        if fresh is None:
            return "its directory disappeared"
        try:
            mine, now = os.fstat(self.parent.fd), os.fstat(fresh.fd)
            if (mine.st_dev, mine.st_ino) != (now.st_dev, now.st_ino):
                return "its directory was replaced"
            current, _ = _entry(fresh, False)
        finally:
            _close_all(fresh.fd, fresh.created)
        if not current.same_entry(expected):
            return f"it is now {current.describe()}, it was {expected.describe()}"
        return None

    def commit(self) -> None:
        fd, name = self.parent.fd, self.parent.name
        backup = _temp_name(name, "old")
        kept = _set_aside(fd, name, backup)
        try:
            if self.temp is not None:
                os.rename(self.temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            elif kept is None:
                raise FileNotFoundError(errno.ENOENT, "it disappeared from disk", self.rel)
            elif kept == "linked":
                os.unlink(name, dir_fd=fd)
        except BaseException:
            if kept == "linked":
                os.unlink(backup, dir_fd=fd)
            elif kept == "moved":
                os.rename(backup, name, src_dir_fd=fd, dst_dir_fd=fd)
            raise
        self.backup = backup if kept else None
        self.done = True

    def roll_back(self) -> None:
        """Undo ``commit``: the replaced (or deleted) entry goes back under its name."""
        if not self.done:
            return
        fd, name = self.parent.fd, self.parent.name
        if self.backup is not None:
            os.rename(self.backup, name, src_dir_fd=fd, dst_dir_fd=fd)
            self.backup = None
        else:
            os.unlink(name, dir_fd=fd)
        self.done = False

    def finish(self) -> None:
        """Drop what the commit replaced (best effort: the change itself is in place)."""
        if self.backup is not None:
            try:
                os.unlink(self.backup, dir_fd=self.parent.fd)
            except OSError:
                pass
            self.backup = None

    def abandon(self) -> None:
        """Remove the temporary file and any directory made for it (if still empty)."""
        if not self.done and self.temp is not None:
            try:
                os.unlink(self.temp, dir_fd=self.parent.fd)
            except FileNotFoundError:
                pass
        if not self.done:
            for dir_fd, name in reversed(self.parent.created):
                try:
                    os.rmdir(name, dir_fd=dir_fd)
                except OSError:
                    break

    def close(self) -> None:
        _close_all(self.parent.fd, self.parent.created)
        self.parent.created = []


def _set_aside(fd: int, name: str, backup: str) -> Literal["linked", "moved"] | None:
    """Keep the file at ``name`` reachable as ``backup``; None when there is no file.

    A hard link leaves ``name`` in place (no reader ever sees it missing); without hard
    links the file is moved aside. A directory is never moved: that raises.
    """
    try:
        os.link(name, backup, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        return "linked"
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is now a directory", name)
    os.rename(name, backup, src_dir_fd=fd, dst_dir_fd=fd)
    return "moved"


def _temp_name(name: str, kind: str) -> str:
    return f".{name}.{secrets.token_hex(6)}.nbts-{kind}"


def stage_write(root: str, rel: str, data: bytes, mode: int = 0o644) -> StagedChange:
    """Write ``data`` to a temporary file beside ``root/rel`` (made directories included)."""
    parent = _walk(root, rel, create=True)
    assert parent is not None
    temp = _temp_name(parent.name, "tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode & 0o7777, dir_fd=parent.fd)
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(data)
                handle.flush()
                os.fsync(fd)
            os.fchmod(fd, mode & 0o7777)
        finally:
            os.close(fd)
    except BaseException:
        staged = StagedChange(root, rel, parent, temp)
        staged.abandon()
        staged.close()
        raise
    return StagedChange(root, rel, parent, temp)


def stage_delete(root: str, rel: str) -> StagedChange:
    parent = _walk(root, rel, create=False)
    if parent is None:
        raise UnsafePath(rel, "its directory is gone")
    return StagedChange(root, rel, parent, None)
