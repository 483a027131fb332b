"""Read deny rules through Bash after a move, through the variables bash keeps for the
folder it is in, the one it left and its folder stack ($PWD, $OLDPWD, ~1, DIRSTACK), and
through options env reads from a split string. Each printed a protected file in bypass
mode without the approver being asked, when it was written."""

from __future__ import annotations

import pytest

from ..conftest import READ_DENIES, SECRET, Refuser, run_one, scheduler

# After a move, the variables bash keeps for the folder it is in, the one it left and its
# folder stack name places as ~+ and ~- do: the shell decides where these lead.
MOVED_READS = [
    "cd a/b && cat $OLDPWD/secrets/key.txt",
    "cd a/b && cat $PWD/../../secrets/key.txt",
    "cd a/b && cat \"${PWD}\"/../../secrets/key.txt",
    "pushd a/b >/dev/null; cat ~1/secrets/key.txt",
    "pushd a/b >/dev/null; cat \"${DIRSTACK[1]}/secrets/key.txt\"",
    "env -S '-C a/b cat ../../secrets/key.txt'",  # env reads options from a split string too
    "env -S'-C a/b' cat ../../secrets/key.txt",
    "env --split-string='-C a/b' cat ../../secrets/key.txt",
]


@pytest.mark.parametrize("command", MOVED_READS)
async def test_bypass_mode_asks_before_reading_from_the_folder_bash_records(project, command):
    (project / "a" / "b").mkdir(parents=True)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text, f"{command!r} printed the secret unasked"
    assert result.is_error and (refuser.asked or "is blocked by the rule" in result.text), result.text
