"""git read commands auto-allowed in a repository whose submodules run programs where the
repository check does not look: a work tree moved by core.worktree, and a submodule
checked out inside a submodule whose git dir lives under .git/modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Refuser, git, run_one, scheduler

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _repo(path: Path, name: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    (path / f"{name}.txt").write_text(f"{name}\n")
    git(path, "add", f"{name}.txt")
    git(path, "commit", "-qm", name)


def _arm(repo: Path, marker: Path) -> None:
    """Set core.fsmonitor in ``repo``'s own config (git runs it through the shell)."""
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false #")


def _git_status_runs_it(project: Path, marker: Path) -> None:
    """The attack must be real: plain git status in the project runs the program."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(project), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "status", "--short"], cwd=project, env=env, capture_output=True)
    assert marker.exists(), "git status did not run the submodule's fsmonitor: the setup is wrong"
    marker.unlink()


async def test_core_worktree_moves_the_submodules_out_of_sight(project):
    # The superproject's index has the gitlink "lib"; core.worktree makes git use the
    # folder w/ as the work tree, so git status enters w/lib (under its own config),
    # while the check looked for a checked-out submodule at ./lib.
    _repo(project, "top")
    _repo(project / "lib", "lib")
    git(project, "add", "lib")
    git(project, "commit", "-qm", "gitlink")
    (project / "w").mkdir()
    (project / "lib").rename(project / "w" / "lib")
    git(project, "config", "core.worktree", "../w")
    marker = project / "PWNED"
    _arm(project / "w" / "lib", marker)
    _git_status_runs_it(project, marker)
    refuser = Refuser()
    await run_one(scheduler(project, refuser), "Bash", command="git status")
    assert not marker.exists()
    assert refuser.asked


async def test_a_submodule_checked_out_inside_an_absorbed_submodule(project):
    # sub's git dir is .git/modules/sub (as `git submodule update` leaves it); sub has a
    # gitlink "deep" checked out with a .git folder of its own. git status recurses into
    # sub and then into deep, running deep's fsmonitor; the check marked sub's git dir as
    # checked while walking .git/modules (without submodules) and never looked inside it.
    _repo(project, "top")
    sub = project / "sub"
    _repo(sub, "sub")
    _repo(sub / "deep", "deep")
    git(sub, "add", "deep")
    git(sub, "commit", "-qm", "gitlink")
    git(project, "add", "sub")
    git(project, "commit", "-qm", "gitlink")
    modules = project / ".git" / "modules"
    modules.mkdir()
    (sub / ".git").rename(modules / "sub")
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n")
    git(project, "config", "--file", str(modules / "sub" / "config"), "core.worktree", "../../../sub")
    clean = Refuser()
    await run_one(scheduler(project, clean), "Bash", command="git status")
    assert not clean.asked, "an absorbed submodule whose core.worktree names its own folder stays read-only"
    marker = project / "PWNED"
    _arm(sub / "deep", marker)
    _git_status_runs_it(project, marker)
    refuser = Refuser()
    await run_one(scheduler(project, refuser), "Bash", command="git status")
    assert not marker.exists()
    assert refuser.asked
