"""Writes into .git that name the path where a word scan does not look: another writer's
output option or operand, a wrapper or loop around cp, a folder a cd moved to, a link
made earlier in the line. Through the public API with the real Bash tool.

Bypass mode runs any command that no deny rule or bypass-immune safety check stops, so
each of these wrote a git hook or git's config without the approver being asked, when it
was written. Ordinary commands near these checks must still run unasked.
"""

from __future__ import annotations

import subprocess

import pytest

from ..conftest import READ_DENIES, WATCHED, Refuser, git, run_one, scheduler, watched

# Commands that write into .git while naming the path somewhere the earlier checks did
# not look: another writer (its output option or operand), a wrapper or loop around cp,
# a folder a cd moved to, or a link made earlier in the same line.
CONFIG_WRITES = [
    "dd if=x of=.git/hooks/pre-commit",
    "sort -o .git/hooks/pre-commit x",
    "uniq x .git/hooks/pre-commit",
    "tar xf evil.tar -C .git",
    "perl -pi -e 's/^/[core]\\n/' .git/config",
    "git config --file .git/config core.hooksPath d/hooks",
    "git config core.hooksPath d/hooks",
    "git -c user.name=a config --local core.fsmonitor 'sh x'",
    "command cp x .git/hooks/pre-commit",
    "env cp x .git/hooks/pre-commit",
    "xargs cp x <<< .git/hooks/pre-commit",
    "find x -exec cp {} .git/hooks/pre-commit \\;",
    "for f in x; do cp $f .git/hooks/pre-commit; done",
    "bash -c 'cp x .git/hooks/pre-commit'",
    "cd .git && cp ../x hooks/pre-commit",
    "cd .git/hooks; cp ../../x pre-commit",
    "cd d && cd ../.git && cp ../x hooks/pre-commit",
    "pushd .git && cp ../x hooks/pre-commit",
    "D=.; cd \"$D\"; echo x > .git/hooks/pre-commit",
    "ln -s .git g && cp x g/hooks/pre-commit",
    "ln .git/config cfg; echo '[core]' >> cfg",
    "cp -al .git g; echo '[core]' >> g/config",
]


def _config_project(project):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    (project / "d" / "hooks").mkdir(parents=True)
    (project / "d" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho pwned\n")
    subprocess.run(["tar", "cf", "evil.tar", "-C", str(project / "d"), "hooks"], cwd=project, check=True)
    return watched(project)


@pytest.mark.parametrize("command", CONFIG_WRITES)
async def test_bypass_mode_asks_before_any_named_write_into_git(project, command):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    after = watched(project)
    assert after == before, f"{command!r} changed {[p for p in WATCHED if after[p] != before[p]]}: {result.text}"
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


@pytest.mark.parametrize("command", ["cd .git && cp ../x hooks/pre-commit", "cd .git/hooks; mv ../../x pre-commit"])
async def test_accept_edits_asks_before_a_write_into_git_after_a_cd(project, command):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits")
    result = await run_one(sched, "Bash", command=command)
    assert not (project / ".git/hooks/pre-commit").exists() and before[".git/hooks/pre-commit"] is None
    assert refuser.asked, result.text


ORDINARY = ["cp README.md notes.md", "mkdir -p build", "rm -rf build", "cd victim && ls", "git status",
            "cat .gitignore", "touch notes.md", "mkdir -p build && cd build && ls", "cat .git/config",
            "git log --oneline -1", "cp README.md .gitignore.bak"]
# acceptEdits asks for these as Claude Code does (cp with flags, pushd) or as nbtoolsched
# always has (several cd in one line).
BYPASS_ONLY = ["cp -r victim backup", "cd victim; cd ..; ls", "pushd victim >/dev/null && ls && popd >/dev/null"]


@pytest.mark.parametrize(("mode", "command"), [(m, c) for m in ("bypassPermissions", "acceptEdits") for c in ORDINARY]
                         + [("bypassPermissions", c) for c in BYPASS_ONLY])
async def test_ordinary_commands_still_run_unasked(project, mode, command):
    git(project, "init", "-q")
    (project / ".gitignore").write_text("build/\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode, deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert not result.is_error and not refuser.asked, result.text


@pytest.mark.parametrize("command", ["tee out.txt < README.md", "dd if=README.md of=out.txt", "sort -o out.txt README.md",
                                     "ln -s README.md link.md", "git config user.name someone"])
async def test_ordinary_writes_still_run_unasked_in_bypass_mode(project, command):
    git(project, "init", "-q")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    if command.startswith("git config"):
        assert refuser.asked  # it rewrites .git/config, as an Edit of it would
        return
    assert not result.is_error and not refuser.asked, result.text
