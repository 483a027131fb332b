"""Ways around the config-write check (round 8), through the public API with the real
Bash tool.

Each wrote into .git in bypass mode or acceptEdits mode without the approver being
asked, when it was written.
"""

from __future__ import annotations

import pytest

from .conftest import Refuser, git, run_one, scheduler

# An extended glob on a later line than the `shopt -s extglob` that turns it on: the parser
# (which knows no shell options) splits the word, so only the raw text tells the name.
CONFIG_WRITES = [
    "shopt -s extglob\ncp x .gi@(t)/config",
    "shopt -s extglob\ncp x .+(g|i|t)/config",
]
WATCHED = (".git/hooks/pre-commit", ".git/config")


def _config_project(project):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    (project / "d").mkdir()
    return {p: (project / p).read_bytes() if (project / p).exists() else None for p in WATCHED}


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
@pytest.mark.parametrize("command", CONFIG_WRITES)
async def test_a_name_in_code_git_runs_or_in_an_extended_glob_still_asks(project, command, mode):
    before = _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode)
    result = await run_one(sched, "Bash", command=command)
    after = {p: (project / p).read_bytes() if (project / p).exists() else None for p in WATCHED}
    assert after == before, f"{command!r} changed {[p for p in WATCHED if after[p] != before[p]]}: {result.text}"
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


# Ordinary commands near the new checks that must not ask in bypass mode.
ORDINARY = [
    "shopt -s extglob\nls !(victim)",
    "cp -r victim backup && rm -rf backup",
]


@pytest.mark.parametrize("command", ORDINARY)
async def test_ordinary_commands_still_run_unasked(project, command):
    _config_project(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert not result.is_error and not refuser.asked, result.text
