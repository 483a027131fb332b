"""A prefix allow rule must not let a command line run code the rule never named."""

from __future__ import annotations

import pytest

from ..conftest import Refuser, run_one, scheduler

# Each line first makes "$_" (the last word of the previous command) hold text with a
# command substitution inside an array subscript, then has bash evaluate that text:
# arithmetic expansion, an array subscript, indirection and prompt expansion all run
# it, though the line itself holds no substitution node for the splitter to refuse.
PAYLOADS = [
    "echo 'a[$(rm -rf victim)]'; git log $((_))",
    "echo 'a[$(rm -rf victim)]'; git log ${b[_]}",
    "echo 'a[$(rm -rf victim)]'; git log ${!_}",
    "echo '$(rm -rf victim)'; git log ${_@P}",
]


@pytest.mark.parametrize("command", PAYLOADS)
async def test_dollar_underscore_expansion_runs_code_under_a_prefix_rule(project, command):
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(git log:*)"])
    await run_one(sched, "Bash", command=command)
    assert (project / "victim" / "keep.txt").exists()
    assert refuser.asked, "a command that expands $_ as code must need approval"
