"""Writes into .git through code git runs later (an editor, a rebase step, git config
behind a runner), an extended glob that a later line turns on, or a variable the line
sets to a literal value. Through the public API with the real Bash tool.

Each wrote into .git in bypass mode or acceptEdits mode without the approver being
asked, when it was written. Ordinary commands near these checks must still run unasked.
"""

from __future__ import annotations

import pytest

from ..conftest import WATCHED, Refuser, git, run_one, scheduler, watched

_COMMIT = "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && "
# An extended glob on a later line than the `shopt -s extglob` that turns it on: the parser
# (which knows no shell options) splits the word, so only the raw text tells the name.
# Code git runs later as a shell line: an editor or a rebase step (a string, however the
# words in it read), or git config behind a runner the check cannot peel.
CONFIG_WRITES = [
    "shopt -s extglob\ncp x .gi@(t)/config",
    "shopt -s extglob\ncp x .+(g|i|t)/config",
    "git -c user.name=a -c user.email=a@b -c core.editor='git config core.hooksPath d #' commit -q --allow-empty",
    "git -c user.name=a -c user.email=a@b -c core.editor='cp x .git/config #' commit -q --allow-empty",
    "GIT_EDITOR='git config core.hooksPath d #' git -c user.name=a -c user.email=a@b commit -q --allow-empty",
    _COMMIT + "git rebase -q --exec 'git config core.hooksPath d' --root",
    _COMMIT + "git -c user.name=a -c user.email=a@b rebase -q -x 'cp x .git/config' --root",
    _COMMIT + "git -c user.name=a -c user.email=a@b rebase -q --exec='cp x .gi?/config' --root",
    "flock x git config core.hooksPath d",
    "env -S'-C .git' cp ../x hooks/pre-commit",  # env reads -C from a split string too
    "env -S '-C .git cp ../x hooks/pre-commit'",
    "v=.gi; cp x ${v}t/config",  # a variable the line sets to a literal value, in a longer word
    "v=.gi; cp x \"$v\"t/config",
    "v=.gxt; cp x ${v/x/i}/config",
    "mkdir -p git/hooks && cp x git/hooks/pre-commit && for f in git; do cp -rT $f .$f; done",
    "mkdir -p xgit/hooks && cp x xgit/hooks/pre-commit && tar -cf - xgit | tar -xf - --transform 's/^x/./'",
    "mkdir -p xgit/hooks && cp x xgit/hooks/pre-commit && tar -cf - xgit | tar -xf - --xform='s/^x/./'",
]


def _config_project(project):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    (project / "d").mkdir()
    return watched(project)


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
@pytest.mark.parametrize("command", CONFIG_WRITES)
async def test_a_name_in_code_git_runs_or_in_an_extended_glob_still_asks(project, command, mode):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode)
    result = await run_one(sched, "Bash", command=command)
    after = watched(project)
    assert after == before, f"{command!r} changed {[p for p in WATCHED if after[p] != before[p]]}: {result.text}"
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


async def test_an_allow_rule_for_git_commit_does_not_cover_an_editor_that_sets_config(project):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(git commit:*)", "Bash(git -c:*)"])
    result = await run_one(sched, "Bash", command=CONFIG_WRITES[2])
    assert (project / ".git/config").read_bytes() == before[".git/config"], result.text
    assert refuser.asked, result.text


# Ordinary commands near the new checks that must not ask in bypass mode.
ORDINARY = [
    "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m 'fix .git/config parsing'",
    "git -c user.name=a -c user.email=a@b -c core.editor=true commit -q --allow-empty --allow-empty-message",
    _COMMIT + "git -c user.name=a -c user.email=a@b rebase -q -x 'ls victim' --root",
    "shopt -s extglob\nls !(victim)",
    "cp -r victim backup && rm -rf backup",
    "for f in victim README.md; do cp -r $f backup.$f; done",
    "OUT=build; mkdir -p $OUT && cp -r victim $OUT/",
]


@pytest.mark.parametrize("command", ORDINARY)
async def test_ordinary_commands_still_run_unasked(project, command):
    _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert not result.is_error and not refuser.asked, result.text
