"""acceptEdits runs sed unasked, as Claude Code does, but only a sed whose script neither
runs a program nor writes a file the command line does not name."""

from __future__ import annotations

import pytest

from ..conftest import Refuser, run_one, scheduler


@pytest.mark.parametrize("command", [
    "sed '1e touch pwned' README.md",
    "sed -i '1e touch pwned' README.md",
    "sed 's/.*/touch pwned/e' README.md",
    "sed -n '1w pwned' README.md",
    "POSIXLY_CORRECT=1 sed '1e touch pwned' -e p README.md",
])
async def test_accept_edits_does_not_run_a_sed_script_that_runs_or_writes(project, command):
    # acceptEdits allows sed, as Claude Code does, but only after its sed constraints:
    # a script with e, s///e or w runs a program or writes anywhere. No rule is needed.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits")
    result = await run_one(sched, "Bash", command=command)
    assert not (project / "pwned").exists()
    assert result.is_error and refuser.asked


async def test_accept_edits_still_runs_a_sed_that_edits_in_place(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits")
    result = await run_one(sched, "Bash", command="sed -i.bak -e 's/readme/README/' README.md")
    assert not result.is_error and not refuser.asked
    assert (project / "README.md").read_text() == "# README\n"
