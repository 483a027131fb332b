"""Writes into .git through a name the shell makes from literal words (a glob, a brace,
a default value, an array), through a cp or install destination behind an option or its
value, or through git config by an alias or another git directory. Through the public
API with the real Bash tool.

Each wrote into .git in bypass mode (or acceptEdits mode) without the approver being
asked, when it was written. Ordinary commands near these checks must still run unasked.
"""

from __future__ import annotations

import pytest

from ..conftest import READ_DENIES, WATCHED, Refuser, git, run_one, scheduler, watched

# Names of .git the shell makes from a literal word: a glob (with the shell options that
# let it match dot names or any case), a brace expansion, a default value; or a cp or
# install destination hidden behind an option value or `--`; or git config by an alias.
CONFIG_WRITES = [
    "cp x .gi?/config",
    "cp x .[g]it/config",
    "GLOBIGNORE=x; cp x */config",  # setting GLOBIGNORE turns dotglob on
    "shopt -s dotglob; cp x */config",
    "shopt -s nocaseglob; cp x .GI?/config",
    "cd .gi? && cp ../x hooks/pre-commit",
    "echo '[core]' | tee -a .gi{t,}/config",
    "cp x ${u:-.git}/config",
    "cp x .git/config -S .bak",  # GNU cp and install take options after the operands
    "install x .git/hooks/pre-commit -m 755",
    "mkdir -- -d; cp x -- -d/../.git/config",
    "git -c alias.x=config x core.hooksPath d",
    "git init -q --separate-git-dir gd",  # moves .git: gd/hooks is then unguarded
    "git init -q --templ=d",
    "for d in .gi?; do cp x $d/config; done",  # names outside simple commands' words
    "a=(.git); cp x ${a[0]}/config",
    "declare -a a=(.gi?); cp x $a/config",
]


def _config_project(project):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    (project / "d").mkdir()
    return watched(project)


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
@pytest.mark.parametrize("command", CONFIG_WRITES)
async def test_a_name_the_shell_makes_from_literal_words_still_asks(project, command, mode):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode)
    result = await run_one(sched, "Bash", command=command)
    after = watched(project)
    assert after == before, f"{command!r} changed {[p for p in WATCHED if after[p] != before[p]]}: {result.text}"
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


async def test_an_allow_rule_for_cp_does_not_cover_a_glob_into_git(project):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(cp:*)"])
    result = await run_one(sched, "Bash", command="cp x .gi?/config")
    assert (project / ".git/config").read_bytes() == before[".git/config"], result.text
    assert refuser.asked, result.text


@pytest.mark.parametrize("command", [
    "cp x .git/hooks/pre-commit --no-preserve mode",
    "cp x .git/config --sparse always",
    "cp --no-preserve mode x .git/hooks/pre-commit",
])
async def test_cp_options_that_take_a_value_do_not_hide_its_destination(project, command):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    before = watched(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert watched(project) == before, result.text
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


# Ordinary commands near the new checks that must not ask in bypass mode.
ORDINARY = [
    "rm -rf build/*", "cp -r victim backup", "cp README.md notes.md -v", "install -m 644 README.md out.md",
    "tar -czf out.tgz victim", "tar -C victim -cf - . > out.tar", "find . -name '*.tmp' -execdir rm {} +",
    "env -C victim ls", "mkdir -p build && cd build && touch a", "mv README.md README.txt && cat README.txt", "touch new.txt && git add . && git commit -qm msg",
    "echo x >> README.md && git commit -qam msg", "cp victim/keep.txt victim/keep2.txt",
]


@pytest.mark.parametrize("command", ORDINARY)
async def test_ordinary_commands_still_run_unasked(project, command):
    git(project, "init", "-q")
    (project / ".gitignore").write_text("build/\n*.tgz\nout.*\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    git(project, "config", "user.name", "a")
    git(project, "config", "user.email", "a@example.com")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert not result.is_error and not refuser.asked, result.text
