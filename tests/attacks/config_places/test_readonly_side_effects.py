"""Commands judged read-only (auto-allowed, run in parallel and during speculation in the
real tree) that run a repository's program, write into it, or never finish."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched import models
from nbtoolsched import Agent
from nbtoolsched.speculation import agent_loop, speculate

from ..conftest import Refuser, git, run_one, scheduler


def _rustup_cargo() -> bool:
    found = shutil.which("cargo")
    return bool(found) and os.path.basename(os.path.realpath(found)).startswith("rustup")


@pytest.mark.skipif(not _rustup_cargo(), reason="needs cargo installed through rustup (its proxy reads rust-toolchain.toml)")
@pytest.mark.parametrize("command", ["cargo --version", "rustc --version"])
async def test_toolchain_version_runs_the_repository_program(project, command):
    # rustup's proxies obey rust-toolchain.toml in the directory they run in; a "path"
    # toolchain must be absolute, and /proc/self/cwd makes any repository's own folder
    # absolute. So `cargo --version` (exact-allowlisted) runs a program the repo ships.
    tools = project / "tools" / "bin"
    tools.mkdir(parents=True)
    for name in ("cargo", "rustc"):
        program = tools / name
        program.write_text('#!/bin/sh\ntouch "$PWD/PWNED"\necho "1.0.0 (not really)"\n')
        program.chmod(0o755)
    (project / "rust-toolchain.toml").write_text('[toolchain]\npath = "/proc/self/cwd/tools"\n')
    refuser = Refuser()
    await run_one(scheduler(project, refuser), "Bash", command=command)
    assert not (project / "PWNED").exists()


def _repo_with_split_index(root: Path) -> Path:
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    git(root, "init", "-q")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "first")
    git(root, "config", "core.splitIndex", "true")
    later = time.time() + 5  # a stale index: git diff refreshes (and so writes) it
    os.utime(root / "a.txt", (later, later))
    return root


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


async def test_git_diff_with_split_index_config_writes_into_the_repository(tmp_path):
    # The private index copy keeps .git/index unchanged, but core.splitIndex (only an
    # existing sharedindex.* file is checked, not the key) makes git write a new
    # $GIT_DIR/sharedindex.<sha> next to it.
    repo = _repo_with_split_index(tmp_path / "repo")
    before = sorted(os.listdir(repo / ".git"))
    refuser = Refuser()
    await run_one(scheduler(repo.resolve(), refuser), "Bash", command="git diff")
    assert sorted(os.listdir(repo / ".git")) == before


async def test_speculation_reject_leaves_a_sharedindex_file_behind(tmp_path):
    repo = _repo_with_split_index(tmp_path / "repo").resolve()
    before = _tree_hash(repo)
    perms = nts.Permissions(mode="acceptEdits", cwd=repo)
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=repo)
    model = models.ScriptedModel([[models.tool_use("Bash", command="git diff")], [models.text("done")]])
    loop = agent_loop(lambda s, messages, turns: Agent(model, s, messages=messages, max_turns=turns))
    spec = await speculate("look at the diff", loop, scheduler=sched)
    await spec.reject()
    assert _tree_hash(repo) == before


_CHILD = textwrap.dedent(
    """
    import asyncio, signal, sys
    import nbtoolsched as nts

    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it: let the size limit stop us
    from nbtoolsched.models import tool_use

    class Refuser:
        async def __call__(self, request):
            return nts.ApprovalAnswer.deny("no")

    repo = sys.argv[1]
    perms = nts.Permissions(mode="default", cwd=repo, approver=Refuser())
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=repo)
    (result,) = asyncio.run(sched.run([tool_use("Bash", id="toolu_1", command="git status")]))
    print("RESULT", result.is_error)
    """
)


@pytest.mark.heavy  # a child process that imports the package, under a 64 MB file size limit
def test_git_status_copies_an_index_that_is_a_symlink_to_dev_zero(tmp_path):
    # private_git_index() copies .git/index with shutil.copy2, which follows a symlink
    # and copies /dev/zero forever: the event loop blocks and the temp folder fills at
    # hundreds of MB/s. (A repository from an archive may hold any .git/index.) The
    # child's file size limit kills it at 64 MB (SIGXFSZ) instead of letting it fill the disk.
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    git(repo, "init", "-q")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "first")
    (repo / ".git" / "index").unlink()
    os.symlink("/dev/zero", repo / ".git" / "index")
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024 * 1024, 64 * 1024 * 1024))

    env = dict(os.environ, TMPDIR=str(scratch))
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(repo)], env=env, preexec_fn=limit,
                              capture_output=True, text=True, timeout=90)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert done.returncode == 0, f"the scheduler died (status {done.returncode}): {done.stderr[-500:]}"
    assert "RESULT" in done.stdout
