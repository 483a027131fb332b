"""Read deny rules through Bash when a command runs in a folder the check did not follow:
a HOME spelled with quotes, a cd in code mapfile or a here-string's shell runs, a runner
or program told where to run (env -C, tar -C, git -C, find -execdir), or a link the line
moves. Each printed a protected file in bypass mode without the approver being asked,
when it was written."""

from __future__ import annotations

import pytest

from ..conftest import READ_DENIES, SECRET, Refuser, run_one, scheduler

# Each runs a command in a folder the check did not follow: a HOME or CDPATH spelled with
# quotes, a cd in code mapfile or a shell's here-string runs, a runner or program told
# where to run (env -C, tar -C, git -C, find -execdir).
MOVED_READS = [
    "export HO''ME=$PWD/a/b; cat ~/../../secrets/key.txt",
    "declare HO\\ME=$PWD/a/b; cd; cat ../../secrets/key.txt",
    "mapfile -t -C 'cd a/b; :' -c 1 arr <<< x; cat ../../secrets/key.txt",
    "readarray -C 'cd a/b; :' -c 1 arr <<< x; cat ../../secrets/key.txt",
    "bash <<< 'cd a/b; cat ../../secrets/key.txt'",
    "env -C a/b cat ../../secrets/key.txt",
    "env --chdir=a/b cat ../../secrets/key.txt",
    "env --ch a/b cat ../../secrets/key.txt",
    "tar -C a/b -cf - ../../secrets/key.txt",
    "tar --directory=a -C b -cf - ../../secrets/key.txt",
    "git -C a/b diff --no-index ../../secrets/key.txt /dev/null",
    "find a/b -maxdepth 0 -execdir cat ../secrets/key.txt \\;",
]


@pytest.mark.parametrize("command", ["mv a/b/s a/s && cat a/s/key.txt", "mv a/b a/c; cat a/c/../s/key.txt",
                                     "mv a/b c && cat c/s/key.txt"])
async def test_bypass_mode_asks_before_reading_through_a_link_the_line_moves(project, command):
    (project / "a" / "b").mkdir(parents=True)
    (project / "a" / "b" / "s").symlink_to("../secrets")  # made by an earlier call: it leads to a/secrets, which is not there
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text, f"{command!r} printed the secret unasked"
    assert refuser.asked, result.text


@pytest.mark.parametrize("command", MOVED_READS)
async def test_bypass_mode_asks_before_reading_from_a_folder_the_line_moved_to(project, command):
    (project / "a" / "b").mkdir(parents=True)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text, f"{command!r} printed the secret unasked"
    assert result.is_error and (refuser.asked or "is blocked by the rule" in result.text), result.text
