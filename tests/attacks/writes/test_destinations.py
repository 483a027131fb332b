"""A copier's destination is what it changes, however it is named: the last operand, or
the folder of -t / --target-directory, attached, bundled or separate (found by the outside
review of the facts record: the names read through the program table left -t's value out,
so `install -t protected a.txt` and `ln -s -t protected x` went past an Edit deny rule in
bypass mode; and any option on cp or mv skipped the deny rules before asking)."""

from __future__ import annotations

import subprocess

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import BashTool

DENY = ["Edit(./protected/**)"]


@pytest.fixture()
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "protected").mkdir()
    (tmp_path / "a.txt").write_text("a\n")
    return tmp_path


@pytest.mark.parametrize("command", [
    "install -t protected a.txt", "install -D -t protected a.txt", "install -vt protected a.txt",
    "ln -t protected a.txt", "ln -s -t protected ../a.txt", "ln -st protected ../a.txt",
    "cp -t protected a.txt", "cp -f a.txt protected/x", "mv -v a.txt protected/x", "cp --target-directory=protected a.txt",
])
async def test_a_destination_an_edit_deny_rule_covers_is_denied_in_bypass_mode(repo, command):
    perms = nts.Permissions("bypassPermissions", cwd=repo, deny=DENY)
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior == "deny", (command, decision.steps)


async def test_install_really_writes_its_target_directory(repo):
    """What the rule guards against: GNU install -t DIR copies into DIR."""
    subprocess.run(["install", "-t", "protected", "a.txt"], cwd=repo, check=True)
    assert (repo / "protected" / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("command", ["install -t ../outside a.txt", "ln -s -t ../outside ../a.txt"])
async def test_a_destination_outside_the_working_directories_asks_under_an_allow_rule(repo, command):
    perms = nts.Permissions(cwd=repo, allow=["Bash(install:*)", "Bash(ln:*)"])
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior == "ask", (command, decision.steps)


async def test_copies_inside_the_project_still_run_in_bypass_mode(repo):
    perms = nts.Permissions("bypassPermissions", cwd=repo, deny=DENY)
    for command in ("install -t out a.txt", "cp -f a.txt b.txt", "ln -s a.txt b.txt"):
        assert (await perms.evaluate(BashTool(), {"command": command})).behavior == "allow", command
