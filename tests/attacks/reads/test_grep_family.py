"""egrep and fgrep are grep: their first operand is the pattern, so with no path a
recursive search reads the whole tree (found by the outside review of the facts record:
the program table had the pattern-first column for grep only, so `egrep -r SECRET`, which
prints .env, ran unasked as a read-only command)."""

from __future__ import annotations

import subprocess

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import BashTool

from ..conftest import READ_DENIES, SECRET


@pytest.mark.parametrize("command", [
    "egrep -r TOKEN", "fgrep -r TOKEN", "egrep -R TOKEN", "fgrep -rn TOKEN", "egrep -rl TOKEN",
    "egrep --recursive TOKEN", "egrep -d recurse TOKEN", "grep -r TOKEN",
])
async def test_a_recursive_grep_with_no_path_is_not_read_only_allowed(project, command):
    shown = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True).stdout
    assert SECRET in shown or shown.split() == [".env"]  # what bash really prints: the protected file (-l: its name)
    perms = nts.Permissions(cwd=project, deny=READ_DENIES)
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior != "allow", (command, decision.steps)


async def test_a_grep_of_a_named_file_outside_the_protected_ones_still_runs(project):
    perms = nts.Permissions(cwd=project, deny=READ_DENIES)
    for command in ("egrep readme README.md", "fgrep -n readme README.md"):
        assert (await perms.evaluate(BashTool(), {"command": command})).behavior == "allow", command
