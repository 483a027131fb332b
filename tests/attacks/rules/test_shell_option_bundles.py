"""`bash -oc posix 'rm -rf x'`: in a bundle, -o takes the next word, and the command string
comes after it (found by the outside review: the peeler took `posix` for the code, so no
deny rule, protected read or config place was ever checked in the string that runs)."""

from __future__ import annotations

import subprocess

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import BashTool

from ..conftest import READ_DENIES


@pytest.mark.parametrize("command", [
    "bash -oc posix 'rm -rf victim'", "bash -co posix 'rm -rf victim'", "sh -Oc extglob 'rm -rf victim'",
    "bash +oc posix -c 'rm -rf victim'",
])
async def test_a_deny_rule_holds_inside_a_command_string_after_a_valued_bundle(project, command):
    perms = nts.Permissions("bypassPermissions", cwd=project, deny=["Bash(rm:*)"])
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior == "deny", (command, decision.steps)


async def test_bash_really_runs_the_string_after_the_option_value(project, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    subprocess.run(["bash", "-oc", "posix", "touch made"], cwd=scratch, check=True)
    assert (scratch / "made").exists()


@pytest.mark.parametrize("command", ["sh -co posix 'cat .e\"\"nv'", "bash -oc posix 'cp README.md .git/hooks/pre-commit'"])
async def test_reads_and_config_writes_inside_the_string_ask_in_bypass_mode(project, command):
    perms = nts.Permissions("bypassPermissions", cwd=project, deny=READ_DENIES)
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior in ("ask", "deny"), (command, decision.steps)
