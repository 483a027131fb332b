"""Can git, run in a directory, be made to run programs by the repository's own config?

A read-only git command is only read-only if the repository it uses cannot run code:
``core.fsmonitor``, ``diff.<driver>.textconv``, ``filter.<driver>.clean``, a
``post-index-change`` hook and many more run programs on ``git status``, ``git diff``
or ``git show``. A cloned repository ships no config, but a downloaded archive with a
``.git`` directory, or a bare-repository-shaped directory inside a clone, does.

So this module finds the repository git uses from a directory (walking up as git does:
``.git`` files of worktrees and submodules, ``.git`` directories, bare repositories,
with git's own is_git_directory() rules), reads its local config and config.worktree
with git's own parser (``git config --file``, which runs nothing) following every
include whatever its condition, and refuses any key that can run a program or write
(core.splitIndex included), the hooks read commands can trigger, a split index, an index
that is no regular file or too large to copy (read-only git runs on a private copy of
it), a core.worktree that moves the work tree elsewhere (where other submodules may be
checked out), and the same in every submodule repository git status would enter, nested
ones inside submodules whose git dirs live under .git/modules included. Bare
repositories are refused outright, as in Claude Code. Anything it cannot follow fails closed. The user's global and system
config are the user's own and not checked, nor are aliases: git never lets an alias
replace a built-in command, and only built-ins are on the allowlist.

Results are cached per directory and revalidated by the stat of every path consulted,
so a repeated check costs a few dozen ``stat`` calls.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
from dataclasses import dataclass
from typing import Mapping

from ._lexical import lexical_paths
from ._process_paths import through_process_paths

__all__ = ["Repository", "RepositoryError", "find_repository", "repository_problem"]

# Hooks that commands on the read-only allowlist can trigger (an index write runs
# post-index-change; reference-transaction runs on any ref update).
READ_HOOKS = ("post-index-change", "reference-transaction")
# Whole sections whose keys run programs, hold credentials or redirect the network.
_SECTIONS = frozenset({
    "filter", "credential", "hook", "protocol", "url", "difftool", "mergetool", "browser",
    "sendemail", "pager", "guitool", "man", "instaweb", "trace2",
})
# Key names (the last part) that name a program or make git write or fetch.
_NAME_SUFFIXES = (
    "command", "program", "cmd", "helper", "textconv", "driver", "askpass", "editor",
    "pager", "hook",
)
_NAMES = frozenset({
    "process", "clean", "smudge", "external", "vcs", "uploadpack", "receivepack", "tool",
    "guitool", "browser", "promisor", "partialclonefilter", "partialclone", "showsignature",
    "savecookies", "sslkeylogfile", "gitproxy",
})
_FALSE = frozenset({"false", "no", "off", "0", ""})
# Variables that point git at another repository, index or object store.
_ENV_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                  "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")
_MAX_INCLUDE_DEPTH = 10
_MAX_SUBMODULE_CONFIGS = 200
_MAX_SUBMODULE_DEPTH = 8
_GITLINK_MODE = b"\x00\x00\xe0\x00"  # 0160000 as the index stores it (big-endian)
_HEX_HEAD = re.compile(rb"[0-9a-fA-F]{40}")  # git reads 40 or 64 hex digits, then stops
_CACHE_SIZE = 256
# A read-only git command runs on a private copy of the index (tools/_bash.py): a larger
# index, or one that is no regular file (a link to /dev/zero), is refused instead.
MAX_INDEX_BYTES = 256 * 1024 * 1024
_SCAN_CHUNK = 1 << 20


class RepositoryError(Exception):
    """git's repository or config could not be read with certainty; the message says why."""


@dataclass(frozen=True, slots=True)
class Repository:
    """The repository git would use: its git dir, common dir, work tree and index."""

    git_dir: str
    common_dir: str
    work_tree: str | None  # None for a bare repository

    @property
    def index(self) -> str:
        return os.path.join(self.git_dir, "index")


# ------------------------------------------------------------------ stat tracking
_Stamp = tuple[int, int, int, int, int] | None


def _stamp(path: str) -> _Stamp:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _Watch:
    """Records the stat of every path the check consults, to revalidate the cache."""

    def __init__(self) -> None:
        self.stamps: dict[str, _Stamp] = {}
        # Git dirs whose own config, hooks and index were checked, and the (git dir, work
        # tree) pairs whose checked-out submodules were too: a git dir first met under
        # .git/modules (no work tree) still needs its submodules checked when a work tree
        # that uses it is met.
        self.checked: set[str] = set()
        self.checked_trees: set[tuple[str, str]] = set()
        self.worktrees: dict[str, list[str | None]] = {}  # git dir -> its core.worktree values

    def lstat(self, path: str) -> os.stat_result | None:
        self.stamps[path] = _stamp(path)
        try:
            return os.lstat(path)
        except OSError:
            return None

    def kind(self, path: str) -> str | None:
        """"file", "dir", "link" or "other"; None when missing (follows no symlink)."""
        st = self.lstat(path)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            target = _stamp(os.path.realpath(path))
            self.stamps[os.path.realpath(path)] = target
            return "link"
        return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"

    def exists(self, path: str) -> bool:
        self.lstat(path)
        return os.path.exists(path)

    def read(self, path: str, limit: int | None = 4096) -> bytes:
        self.lstat(path)
        try:
            with open(path, "rb") as file:
                return file.read(-1 if limit is None else limit)
        except OSError as exc:
            raise RepositoryError(f"cannot read {path}: {exc.strerror}") from None

    def fresh(self) -> bool:
        return all(_stamp(path) == stamp for path, stamp in self.stamps.items())


_lock = threading.Lock()
_cache: dict[str, tuple[_Watch, str | None]] = {}


def repository_problem(cwd: str, env: dict[str, str] | None = None) -> str | None:
    """Why git run in ``cwd`` could run a program or write, or None when it cannot.

    ``env`` is the environment the command gets (default: this process's). Judging paths
    as written (``lexical_paths``, a replay), no repository is known: None.
    """
    if lexical_paths.active:
        return None
    environment: Mapping[str, str] = os.environ if env is None else env
    for name in _ENV_REDIRECTS:
        if environment.get(name):
            return f"the environment sets {name}, which points git elsewhere"
    cwd = os.path.abspath(cwd)
    with _lock:
        cached = _cache.get(cwd)
    if cached is not None and cached[0].fresh():
        return cached[1]
    watch = _Watch()
    try:
        problem = _check(cwd, watch)
    except RepositoryError as exc:
        problem = str(exc)
    except OSError as exc:
        problem = f"cannot inspect the repository: {exc}"
    with _lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[cwd] = (watch, problem)
    return problem


# ------------------------------------------------------------- finding repositories
def find_repository(cwd: str) -> Repository | None:
    """The repository git uses from ``cwd`` (None: none, and none is known when paths are
    judged as written, ``lexical_paths``); RepositoryError if unclear."""
    if lexical_paths.active:
        return None
    return _discover(os.path.abspath(cwd), _Watch())


def _discover(cwd: str, watch: _Watch) -> Repository | None:
    """Walk up from ``cwd`` as git's setup_git_directory() does.

    In each directory: a ``.git`` file names the git dir (git uses it or dies); a
    ``.git`` directory, then the directory itself (bare), count when they pass git's
    own is_git_directory(). Ceilings and filesystem boundaries, which only stop git
    earlier, are ignored: checking a repository git would not use costs nothing.
    """
    directory = cwd
    while True:
        dotgit = os.path.join(directory, ".git")
        kind = watch.kind(dotgit)
        if kind == "file":
            return _repository(_gitfile_target(dotgit, watch), directory, watch)
        if kind == "link" and not os.path.isdir(dotgit):
            raise RepositoryError(f"{dotgit} is a link git may read differently")
        if kind in ("dir", "link") and _is_git_dir(dotgit, watch):
            return _repository(dotgit, directory, watch)
        if kind not in (None, "dir", "link"):
            raise RepositoryError(f"{dotgit} is neither a file nor a directory")
        if _is_git_dir(directory, watch):
            return _repository(directory, None, watch)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _gitfile_target(path: str, watch: _Watch) -> str:
    data = watch.read(path, 65536)
    if len(data) == 65536:
        raise RepositoryError(f"{path} is too large for a gitdir file")
    if not data.startswith(b"gitdir: "):
        raise RepositoryError(f"{path} is not a gitdir file")
    target = data[8:].rstrip(b"\r\n").decode("utf-8", "surrogateescape")
    if not target or "\n" in target:
        raise RepositoryError(f"{path} is not a gitdir file")
    return kernel_path(os.path.dirname(path), target, f"the gitdir file {path}")


def _repository(git_dir: str, work_tree: str | None, watch: _Watch) -> Repository:
    common = git_dir
    commondir = os.path.join(git_dir, "commondir")
    if watch.kind(commondir) is not None:
        text = watch.read(commondir).strip().decode("utf-8", "surrogateescape")
        if not text or "\n" in text:
            raise RepositoryError(f"{commondir} is unreadable")
        common = kernel_path(git_dir, text, f"the commondir file {commondir}")
    return Repository(git_dir, common, work_tree)


def _is_git_dir(path: str, watch: _Watch) -> bool:
    """git's is_git_directory(): a valid HEAD, and objects/ and refs/ it may enter."""
    head = os.path.join(path, "HEAD")
    kind = watch.kind(head)
    if kind == "link":
        if not os.readlink(head).startswith("refs/"):
            return False
    elif kind == "file":
        data = watch.read(head, 256)
        if data.startswith(b"ref:"):
            if not data[4:].lstrip().startswith(b"refs/"):
                return False
        elif not _HEX_HEAD.match(data):
            return False
    else:
        return False
    common = _repository(path, None, watch).common_dir
    for name in ("objects", "refs"):
        entry = os.path.join(common, name)
        watch.lstat(entry)
        if not os.access(entry, os.X_OK):
            return False
    return True


# --------------------------------------------------------------------- the check
def _check(cwd: str, watch: _Watch) -> str | None:
    repo = _discover(cwd, watch)
    if repo is None:
        return None
    if repo.work_tree is None:
        # As Claude Code: never in a bare repository, the usual shape of this attack
        # (a bare-repository directory committed inside a clone), whatever its config.
        return "git in a bare repository (its config could run programs)"
    return _repository_problem(repo, watch)


def _repository_problem(
    repo: Repository, watch: _Watch, *, submodules: bool = True, depth: int = 0,
) -> str | None:
    problem = _own_problem(repo, watch)
    if problem or not submodules:
        return problem
    if repo.work_tree is not None:
        tree = (repo.git_dir, repo.work_tree)
        if tree in watch.checked_trees:
            return None
        watch.checked_trees.add(tree)
        problem = _worktree_problem(repo, watch.worktrees.get(repo.git_dir, []))
        if problem:
            return problem
    return _absorbed_problem(repo, watch) or _checked_out_problem(repo, watch, depth)


def _own_problem(repo: Repository, watch: _Watch) -> str | None:
    """The repository's own config, hooks and index (each git dir once)."""
    if repo.git_dir in watch.checked:
        return None
    watch.checked.add(repo.git_dir)
    files = dict.fromkeys([
        os.path.join(repo.common_dir, "config"),
        os.path.join(repo.git_dir, "config"),
        os.path.join(repo.common_dir, "config.worktree"),
        os.path.join(repo.git_dir, "config.worktree"),
    ])
    hooks_dirs = [os.path.join(repo.common_dir, "hooks")]
    problem = _index_problem(repo.index, watch)
    if problem:
        return problem
    for path in files:
        for key, value, source in _config(path, watch):
            problem = _key_problem(key, value)
            if problem:
                return f"the repository's config ({source}) sets {problem}"
            if key == "core.hookspath":
                hooks_dirs.extend(_hooks_path(value, repo))
            elif key == "core.worktree":
                watch.worktrees.setdefault(repo.git_dir, []).append(value)
    for directory in hooks_dirs:
        for hook in READ_HOOKS:
            path = os.path.join(directory, hook)
            if watch.kind(path) is not None:
                return f"the repository has a {hook} hook ({path}), which read commands can run"
    for directory in dict.fromkeys((repo.git_dir, repo.common_dir)):
        if watch.kind(directory) == "dir" and any(
            name.startswith("sharedindex.") for name in os.listdir(directory)
        ):
            return "the repository uses a split index, which git may rewrite in its git directory"
    return None


def _worktree_problem(repo: Repository, values: list[str | None]) -> str | None:
    """core.worktree makes git use another folder as the work tree, whose checked-out
    submodules (and their configs) are what git status enters: only one that names the
    folder found (as a submodule's git dir under .git/modules does) is followed."""
    assert repo.work_tree is not None
    for value in values:
        target = os.path.join(repo.git_dir, value) if value and not value.startswith("~") else None
        if target is None or os.path.realpath(target) != os.path.realpath(repo.work_tree):
            return f"the repository's config sets core.worktree to {value!r}, another folder than {repo.work_tree}"
    return None


def _index_problem(index: str, watch: _Watch) -> str | None:
    """The index must be a regular file of bounded size (or missing) to be copied."""
    st = watch.lstat(index)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        return f"the index {index} is not a regular file"
    if st.st_size > MAX_INDEX_BYTES:
        return f"the index {index} is larger than {MAX_INDEX_BYTES // (1 << 20)} MiB"
    return None


def _has_gitlink(index: str, watch: _Watch) -> bool:
    """Does the gitlink mode appear in the index? Read in chunks, at most MAX_INDEX_BYTES."""
    watch.lstat(index)
    tail = b""
    read = 0
    try:
        with open(index, "rb") as file:
            while chunk := file.read(_SCAN_CHUNK):
                read += len(chunk)
                if read > MAX_INDEX_BYTES:
                    raise RepositoryError(f"the index {index} is larger than {MAX_INDEX_BYTES // (1 << 20)} MiB")
                if _GITLINK_MODE in tail + chunk:
                    return True
                tail = chunk[-(len(_GITLINK_MODE) - 1):]
    except OSError as exc:
        raise RepositoryError(f"cannot read {index}: {exc.strerror}") from None
    return False


def _hooks_path(value: str | None, repo: Repository) -> list[str]:
    if not value or "%(" in value:
        raise RepositoryError(f"core.hooksPath {value!r} cannot be followed")
    path = os.path.expanduser(value)
    if os.path.isabs(path):
        return [path]
    bases = [repo.work_tree, repo.git_dir] if repo.work_tree else [repo.git_dir]
    return [os.path.join(base, path) for base in bases if base]


def _absorbed_problem(repo: Repository, watch: _Watch) -> str | None:
    """Submodule repositories under modules/: git status and diff run git in them."""
    root = os.path.join(repo.common_dir, "modules")
    if watch.kind(root) != "dir":
        return None
    seen = 0
    for directory, subdirs, names in os.walk(root):
        watch.lstat(directory)
        subdirs.sort()
        if "config" in names:
            seen += 1
            if seen > _MAX_SUBMODULE_CONFIGS:
                raise RepositoryError("too many submodule repositories to check")
            sub = _repository(directory, None, watch)
            problem = _repository_problem(sub, watch, submodules=False)
            if problem:
                return f"a submodule: {problem}"
            subdirs[:] = [d for d in subdirs if d == "modules"]
    return None


def _checked_out_problem(repo: Repository, watch: _Watch, depth: int) -> str | None:
    """Submodules checked out in the work tree (the index's gitlinks), with their own
    .git: git status and diff run git status inside each, under its own config."""
    if repo.work_tree is None:
        return None
    for path in _gitlinks(repo, watch):
        dotgit = os.path.join(repo.work_tree, path, ".git")
        kind = watch.kind(dotgit)
        if kind is None:
            continue  # not checked out: git does not go in
        if depth >= _MAX_SUBMODULE_DEPTH:
            raise RepositoryError("submodules nest too deep to check")
        if kind == "file":
            git_dir = _gitfile_target(dotgit, watch)
        elif kind in ("dir", "link") and os.path.isdir(dotgit):
            git_dir = dotgit
        else:
            raise RepositoryError(f"{dotgit} is neither a file nor a directory")
        sub = _repository(git_dir, os.path.dirname(dotgit), watch)
        problem = _repository_problem(sub, watch, depth=depth + 1)
        if problem:
            return f"the submodule {path}: {problem}"
    return None


def _gitlinks(repo: Repository, watch: _Watch) -> list[str]:
    """The paths of the index's submodule entries, as git lists them."""
    assert repo.work_tree is not None
    if watch.kind(repo.index) != "file" or not _has_gitlink(repo.index, watch):
        return []  # the mode appears nowhere in the index: no gitlink
    out = _run_git(
        ["-c", "core.fsmonitor=false", "ls-files", "--stage", "-z"], repo.work_tree,
        f"list the submodules of {repo.work_tree}",
        GIT_DIR=repo.git_dir, GIT_WORK_TREE=repo.work_tree,
    )
    paths = [entry.partition("\t")[2] for entry in out.split("\0") if entry.startswith("160000 ")]
    if len(paths) > _MAX_SUBMODULE_CONFIGS:
        raise RepositoryError("too many submodules to check")
    return paths


def _key_problem(key: str, value: str | None) -> str | None:
    section, _, name = key.partition(".")
    name = name.rpartition(".")[2]
    if key == "core.fsmonitor":
        return None if (value or "").strip().lower() in _FALSE else f"{key} (runs a program)"
    if key == "core.splitindex":
        # git writes $GIT_DIR/sharedindex.<sha> next to any index it refreshes, a private
        # copy's too (read commands with a stale index, such as git diff, refresh it).
        return None if (value or "").strip().lower() in _FALSE else f"{key} (git writes a shared index into the repository)"
    if section in _SECTIONS or name in _NAMES or name.endswith(_NAME_SUFFIXES):
        return f"{key} (can run a program or write)"
    return None


# ----------------------------------------------------------------------- config
def _config(path: str, watch: _Watch, depth: int = 0) -> list[tuple[str, str | None, str]]:
    """(key, value, file) of a config file and everything it includes (all conditions)."""
    if depth > _MAX_INCLUDE_DEPTH:
        raise RepositoryError(f"config includes nest too deep at {path}")
    kind = watch.kind(path)
    if kind is None:
        return []
    if kind not in ("file", "link") or not os.path.isfile(path):
        raise RepositoryError(f"{path} is not a config file")
    entries = _git_config_list(path)
    found = [(key, value, path) for key, value in entries]
    for key, value in entries:
        section, _, rest = key.partition(".")
        if section in ("include", "includeif") and rest.rpartition(".")[2] == "path":
            found.extend(_config(_include_target(value, path), watch, depth + 1))
    return found


def _include_target(value: str | None, including: str) -> str:
    if not value or value.startswith("%("):
        raise RepositoryError(f"the config include {value!r} in {including} cannot be followed")
    target = os.path.expanduser(value)
    if target.startswith("~"):
        raise RepositoryError(f"the config include {value!r} in {including} cannot be followed")
    return kernel_path(os.path.dirname(including), target, f"the config include {value!r} in {including}")


def kernel_path(base: str, target: str, what: str) -> str:
    """``target`` (relative to ``base``) as the kernel resolves it when git opens it: each
    link followed before a ``..`` after it is applied (``lnk/../evil.cfg`` is beside
    lnk's target, not beside lnk), so the file checked is the file git reads."""
    joined = os.path.join(base, target)
    if through_process_paths(joined):  # git's /proc/self is git, whose folder is not this checker's
        raise RepositoryError(f"{what} goes through /proc/self, /proc/thread-self or /dev/fd, which git resolves "
                              "in its own process, so what it names cannot be checked")
    return os.path.realpath(joined)


def _git_config_list(path: str) -> list[tuple[str, str | None]]:
    """git's own reading of one file: ``git config --file`` runs nothing it configures."""
    out = _run_git(
        ["config", "--no-includes", "--file", path, "--list", "--null"], os.sep,
        f"read the config {path}", GIT_DIR=os.path.join(os.sep, "nonexistent", "nbtoolsched"),
    )
    entries: list[tuple[str, str | None]] = []
    for item in out.split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            entries.append((key.lower(), value if newline else None))
    return entries


def _run_git(args: list[str], cwd: str, what: str, **extra: str) -> str:
    """Run git for a fact about the repository: no user or system config, nothing else."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.sep,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
        **extra,
    }
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise RepositoryError(f"cannot run git to {what}: {exc}") from None
    if done.returncode != 0:
        raise RepositoryError(f"git could not {what}")
    return done.stdout.decode("utf-8", "surrogateescape")
