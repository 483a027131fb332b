"""A Bash deny rule must hold however the command it names is spelled, and wherever it runs.

Deny and ask rules are matched on the subcommand's text as written (``cmd.display``),
although the parser already knows each word's value: quoting, a path to the program,
and the runners ``command``/``exec``/``env`` (or ``xargs`` with an option) all step
around ``Bash(rm:*)``. In bypassPermissions mode, or next to a tool-wide ``Bash``
allow rule ("everything but rm"), nothing else stops them. Code that mapfile runs as a
callback is a command too.
"""

from __future__ import annotations

import pytest

from ..conftest import Refuser, run_one, scheduler

SPELLINGS = [
    "\\rm -rf victim",
    '"rm" -rf victim',
    "r''m -rf victim",
    "/bin/rm -rf victim",
    "command rm -rf victim",
    "exec rm -rf victim",
    "env rm -rf victim",
    "echo victim | xargs -n1 rm -rf",
]


@pytest.mark.parametrize("command", SPELLINGS)
@pytest.mark.parametrize("setup", [{"mode": "bypassPermissions"}, {"allow": ["Bash"]}], ids=["bypass", "allow-all"])
async def test_deny_rule_holds_for_another_spelling_of_the_command(project, command, setup):
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=["Bash(rm:*)"], **setup)
    result = await run_one(sched, "Bash", command=command)
    assert (project / "victim" / "keep.txt").exists()
    assert result.is_error


async def test_a_deny_rule_holds_for_code_mapfile_runs(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=["Bash(rm:*)"])
    result = await run_one(sched, "Bash", command="mapfile -C 'rm -r victim #' -c 1 arr <<< x")
    assert (project / "victim" / "keep.txt").exists(), result.text
    assert result.is_error, result.text
