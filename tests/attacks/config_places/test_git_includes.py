"""A repository's config that git reads from somewhere else: an include through a link or
through /proc/self, a ``.git`` file whose gitdir leads through a link. Each made ``git
status`` (read-only, auto-allowed) run the repository's fsmonitor program unasked when it
was found, with the OS sandbox off (conftest sets NBTOOLSCHED_SANDBOX=off); with the
sandbox on, tests/sandbox/test_contained.py runs them again.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbtoolsched as nts

from ..conftest import Refuser, run_one, scheduler
from ..conftest import committed as _committed


def _fsmonitor_config(target: Path, marker: Path) -> None:
    target.write_text(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')


def _status_must_ask(project: Path, marker: Path) -> None:
    refuser = Refuser()
    sched = scheduler(project, refuser)
    result = nts.run_sync(run_one(sched, "Bash", command="git status"))
    assert refuser.asked, f"git status ran unasked: {result.text[:300]}"
    assert not marker.exists(), "git ran the repository's fsmonitor program"


def test_a_config_include_through_a_link_is_read_where_git_reads_it(project, tmp_path):
    # `[include] path = lnk/../evil.cfg`: lexically .git/evil.cfg (absent), but the kernel
    # follows lnk first, so git reads the evil.cfg beside lnk's target.
    _committed(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    marker = tmp_path / "PWNED"
    _fsmonitor_config(elsewhere / "evil.cfg", marker)
    os.symlink(elsewhere / "deep", project / ".git" / "lnk")
    with open(project / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = lnk/../evil.cfg\n")
    _status_must_ask(project, marker)


def test_a_config_include_through_proc_self_cannot_be_checked(project, tmp_path):
    _committed(project)
    marker = tmp_path / "PWNED"
    _fsmonitor_config(project / "evil.cfg", marker)
    with open(project / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = /proc/self/cwd/evil.cfg\n")
    _status_must_ask(project, marker)


def test_a_gitdir_file_through_a_link_is_followed_as_the_kernel_does(project, tmp_path):
    # .git is a file: `gitdir: lnk/../evil-git`. Lexically that is <project>/evil-git (absent),
    # for the kernel the evil-git beside lnk's target, whose config runs a program.
    _committed(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    os.rename(project / ".git", elsewhere / "evil-git")
    marker = tmp_path / "PWNED"
    with open(elsewhere / "evil-git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    os.symlink(elsewhere / "deep", project / "lnk")
    (project / ".git").write_text("gitdir: lnk/../evil-git\n")
    _status_must_ask(project, marker)
