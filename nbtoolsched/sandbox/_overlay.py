"""A kernel copy-on-write view of one folder, for speculation: overlayfs in a private mount namespace.

While a command runs (``held()``), a helper process (``unshare -m``, or ``unshare -rm`` for
a user without root, with ``userxattr``) mounts overlayfs over the folder (lower: the real
folder; upper and work folders in the speculation's own directory) and waits on a pipe;
the command enters its mount namespace (``nsenter``) and runs under bubblewrap there.
The kernel writes only the upper folder (copy-up, whiteouts for deletions, opaque folders
for replaced ones); the real folder is never written. Between commands nothing is
mounted, so the upper folder may be read and written directly (the file tools do, as
overlayfs would: ``speculation/_kernel.py``); overlayfs leaves changes to its layers while
mounted undefined, which is why the mount lives for one command at a time.

Closing the pipe ends the helper and with it the mount (also when this process dies: the
pipe closes). What changed is read from the upper folder (``upper_entries``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import shutil
import stat
import subprocess
from dataclasses import dataclass
from typing import AsyncIterator, Iterator, Literal

__all__ = ["KernelOverlay", "OverlayUnavailable", "UpperEntry", "upper_entries", "StatEntry", "stat_manifest", "now_entry", "upper_opaque", "lstat_or_none"]

START_TIMEOUT_S = 10.0
OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")
REDIRECT_XATTRS = ("trusted.overlay.redirect", "user.overlay.redirect")
MAX_MANIFEST = 200_000  # entries of the real folder recorded when a speculation starts


class OverlayUnavailable(Exception):
    """overlayfs cannot be mounted here (the reason says why): speculation falls back."""


class KernelOverlay:
    """One mounted overlay over ``lower``, with its upper and work folders under ``workdir``."""

    def __init__(self, lower: str, workdir: str, *, run_as: tuple[str, ...] = ()) -> None:
        """``run_as``: a prefix the helper and the commands that enter it run behind (such
        as ``setpriv --reuid=...``: the tests mount as an unprivileged user that way)."""
        self.lower = os.path.realpath(lower)
        self.run_as = run_as
        self.workdir = workdir
        self.upper = os.path.join(workdir, "upper")
        self.work = os.path.join(workdir, "work")
        self.tmp_dir = os.path.join(workdir, "tmp")  # the $TMPDIR of the commands that run in it
        self.root = os.geteuid() == 0 and not run_as
        self._helper: subprocess.Popen[bytes] | None = None
        self._lock: asyncio.Lock | None = None

    @classmethod
    def check(cls, lower: str, workdir: str, *, run_as: tuple[str, ...] = ()) -> "KernelOverlay":
        """A new overlay, mounted once and unmounted to show the kernel allows it here
        (blocking, a few ms); ``OverlayUnavailable`` saying why when it does not."""
        made = cls(lower, workdir, run_as=run_as)
        made.mount()
        made.unmount()
        return made

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator["KernelOverlay"]:
        """Mounted for the body, one holder at a time (two mounts cannot share a work folder)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await asyncio.to_thread(self.mount)
            try:
                yield self
            finally:
                await asyncio.to_thread(self.unmount)

    def mount(self) -> None:
        """Start the helper that holds the mount (blocking); ``OverlayUnavailable`` says why not."""
        if any(c in self.lower for c in ",:\\\n"):
            raise OverlayUnavailable(f"the folder {self.lower!r} has a character overlayfs options cannot hold (, : \\)")
        for tool in ("unshare", "nsenter"):
            if shutil.which(tool) is None:
                raise OverlayUnavailable(f"{tool} (util-linux) is not installed")
        for folder in (self.upper, self.work, self.tmp_dir):
            os.makedirs(folder, mode=0o700, exist_ok=True)
        options = f"lowerdir={self.lower},upperdir={self.upper},workdir={self.work}"
        # A renamed folder is then copied (not a redirect xattr), and metadata is copied up
        # with the data; userxattr (a user namespace) implies both and refuses them as options.
        options += ",redirect_dir=off,metacopy=off" if self.root else ",userxattr"
        enter = ["unshare", "-m", "--propagation", "private"] if self.root else ["unshare", "-r", "-m", "--propagation", "private"]
        script = 'mount -t overlay nbtoolsched-speculation -o "$1" "$2" || exit 3; echo ready; exec head -c1'
        helper = subprocess.Popen([*self.run_as, *enter, "sh", "-c", script, "nbtoolsched-overlay", options, self.lower],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        assert helper.stdout is not None
        ready, _, _ = select.select([helper.stdout], [], [], START_TIMEOUT_S)
        line = helper.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            helper.kill()
            _, said = helper.communicate(timeout=5)
            message = " ".join(line.strip() for line in said.decode("utf-8", "replace").splitlines() if line.strip())
            raise OverlayUnavailable(f"overlayfs could not be mounted: {message or 'no answer in time'}")
        self._helper = helper

    @property
    def mounted(self) -> bool:
        return self._helper is not None and self._helper.poll() is None

    @property
    def pid(self) -> int:
        assert self._helper is not None, "the overlay is not mounted"
        return self._helper.pid

    def enter_argv(self) -> list[str]:
        """The prefix that runs a program in the view's mount namespace."""
        if self.root:
            return ["nsenter", "-t", str(self.pid), "-m", "--"]
        return [*self.run_as, "nsenter", "-t", str(self.pid), "-U", "-m", "--preserve-credentials", "--"]

    def unmount(self) -> None:
        """End the helper: the mount goes with its namespace; the upper folder stays."""
        helper, self._helper = self._helper, None
        if helper is None:
            return
        if helper.stdin is not None:
            helper.stdin.close()
        try:
            helper.wait(5)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        for stream in (helper.stdout, helper.stderr):
            if stream is not None:
                stream.close()

    def discard(self) -> None:
        """Unmount and delete the upper and work folders (the real folder is never touched)."""
        self.unmount()
        for dirpath, dirnames, _ in os.walk(self.work):  # an unprivileged overlay leaves work/ mode 000
            for name in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, name), 0o700)
                except OSError:
                    pass
        try:
            os.chmod(self.work, 0o700)
        except OSError:
            pass
        shutil.rmtree(self.workdir, ignore_errors=True)

    def lookup(self, rel: str) -> tuple[str | None, bool]:
        """Where the link-free ``rel`` is in the merged tree, resolved as overlayfs does
        (an upper entry first; a whiteout hides the real one; an opaque upper folder hides
        the real folder's contents): its upper or real path, or None when it is not there;
        and whether it is the upper copy. Only while nothing is mounted is this exact."""
        if rel in ("", os.curdir):
            return self.lower, False
        upper, lower, lower_seen = self.upper, self.lower, True
        parts = rel.split(os.sep)
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            upper, lower = os.path.join(upper, part), os.path.join(lower, part)
            here = lstat_or_none(upper)
            if here is not None:
                if stat.S_ISCHR(here.st_mode) and here.st_rdev == 0:
                    return None, False  # a whiteout: deleted in the overlay
                if last:
                    return upper, True
                if not stat.S_ISDIR(here.st_mode):
                    return None, False
                if lower_seen and upper_opaque(upper, self.root):
                    lower_seen = False
                continue
            below = lstat_or_none(lower) if lower_seen else None
            if below is None:
                return None, False
            if last:
                return lower, False
            if not stat.S_ISDIR(below.st_mode):
                return None, False
        return None, False

    def merged_path(self, path: str) -> str | None:
        """``lookup`` for an absolute path: where to stat or read it now (None: not there)."""
        if path != self.lower and not path.startswith(self.lower + os.sep):
            return path
        return self.lookup(os.path.relpath(path, self.lower))[0]

    def enter_at(self, folder: str) -> list[str]:
        """``enter_argv`` that also moves to ``folder`` inside: entering keeps the folder it
        had, the real one (nsenter's --wd opens it before entering, so a shell does the cd)."""
        return [*self.enter_argv(), "/bin/sh", "-c", 'cd "$0" && exec "$@"', folder]

    def upper_size(self, limit: int) -> int:
        """Bytes the overlay holds (the upper folder and the commands' temp folder, files at
        their apparent size: accept writes a sparse file out in full), counting stops past ``limit``."""
        total = 0
        for folder in (self.upper, self.tmp_dir):
            for dirpath, _, filenames in os.walk(folder):
                for name in filenames:
                    try:
                        total += os.lstat(os.path.join(dirpath, name)).st_size
                    except OSError:
                        continue
                    if total > limit:
                        return total
        return total


EntryKind = Literal["whiteout", "opaque_dir", "dir", "file", "symlink", "other"]


@dataclass(frozen=True, slots=True)
class UpperEntry:
    """One entry of the upper folder: what the overlay holds over the real folder."""

    rel: str
    kind: EntryKind
    mode: int = 0
    target: str = ""  # a symlink's
    redirected: bool = False  # a redirect xattr: a renamed folder the mount options should have prevented


def upper_entries(upper: str, *, root: bool = True) -> Iterator[UpperEntry]:
    """Every entry, parents before children (a whiteout's or a file's children: none).
    ``root``: the mount was made as root (``trusted.overlay.*`` marks) or in a user
    namespace (``user.overlay.*``): only the namespace the kernel reads counts, so a
    command cannot fake an opaque folder with the other."""
    pending = [""]
    while pending:
        folder = pending.pop(0)
        try:
            names = sorted(os.listdir(os.path.join(upper, folder) if folder else upper))
        except OSError:
            continue
        for name in names:
            rel = os.path.join(folder, name) if folder else name
            path = os.path.join(upper, rel)
            info = os.lstat(path)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                yield UpperEntry(rel, "whiteout")
            elif stat.S_ISDIR(info.st_mode):
                kind: EntryKind = "opaque_dir" if upper_opaque(path, root) else "dir"
                yield UpperEntry(rel, kind, mode, redirected=_xattr(path, _names(REDIRECT_XATTRS, root)) is not None)
                pending.append(rel)
            elif stat.S_ISREG(info.st_mode):
                yield UpperEntry(rel, "file", mode)
            elif stat.S_ISLNK(info.st_mode):
                yield UpperEntry(rel, "symlink", mode, os.readlink(path))
            else:
                yield UpperEntry(rel, "other", mode)


def lstat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def upper_opaque(path: str, root: bool) -> bool:
    """Does this upper folder hide the real folder's contents (overlayfs's opaque mark, in
    the namespace the mount reads: trusted.* as root, user.* with userxattr)?"""
    return _xattr(path, _names(OPAQUE_XATTRS, root)) == b"y"


def _names(names: tuple[str, ...], root: bool) -> tuple[str, ...]:
    return tuple(n for n in names if n.startswith("trusted." if root else "user."))


def _xattr(path: str, names: tuple[str, ...]) -> bytes | None:
    for name in names:
        try:
            return os.getxattr(path, name, follow_symlinks=False)
        except OSError:
            continue
    return None


@dataclass(frozen=True, slots=True)
class StatEntry:
    """What a path of the real folder was when the speculation started (no bytes: the
    change time moves on any write, so a rewrite with the same bytes still counts)."""

    kind: str
    mode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int


def stat_manifest(root: str, limit: int = MAX_MANIFEST) -> tuple[dict[str, StatEntry], bool]:
    """Every path under ``root`` (relative) and its StatEntry; False when ``limit`` cut it short."""
    found: dict[str, StatEntry] = {}
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(root, folder) if folder else root))
        except OSError:
            continue
        for entry in entries:
            if len(found) >= limit:
                return found, False
            rel = os.path.join(folder, entry.name) if folder else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[rel] = _entry(info)
            if stat.S_ISDIR(info.st_mode):
                pending.append(rel)
    return found, True


def now_entry(root: str, rel: str) -> StatEntry | None:
    try:
        return _entry(os.lstat(os.path.join(root, rel)))
    except OSError:
        return None


def _entry(info: os.stat_result) -> StatEntry:
    mode = info.st_mode
    kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "symlink" if stat.S_ISLNK(mode) else "other"
    return StatEntry(kind, stat.S_IMODE(mode), info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
