"""Read deny rules through Bash: git shows the whole repository, not just the folder it runs in.

Run from a subfolder, ``git log -p``, ``git diff`` and ``git show`` print changes to any
file of the repository; the read check took them to read only the tree under cwd, so a
Read deny rule for a path elsewhere in the repository did not hold.
"""

from __future__ import annotations

import shutil

import pytest

import nbtoolsched as nts

from ..conftest import SECRET, Refuser, git, run_one

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.mark.parametrize("command", ["git log -p", "git diff", "git show HEAD"])
async def test_git_in_a_subfolder_prints_a_denied_file_elsewhere_in_the_repository(project, command):
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    git(project, "rm", "-q", "--cached", "secrets/key.txt")  # git show HEAD: the deletion shows the content
    git(project, "commit", "-qm", "untrack")
    git(project, "add", "secrets/key.txt")
    (project / "secrets" / "key.txt").write_text(f"NEW-{SECRET}\n")  # git diff: a change to a tracked file
    refuser = Refuser()
    src = project / "src"
    perms = nts.Permissions(mode="default", cwd=src, approver=refuser, deny=[f"Read(/{project}/secrets/**)"])
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=src)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text
    assert refuser.asked
