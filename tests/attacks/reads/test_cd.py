"""Read deny rules through Bash after the line moves the shell: cd and pushd however they
are spelled, a HOME, CDPATH or cdable variable the line sets, ~ names, and links the line
makes. Each printed a protected file in bypass mode without the approver being asked,
when it was written; a CDPATH the session inherited must not move a cd either."""

from __future__ import annotations

import pytest

from ..conftest import READ_DENIES, SECRET, Refuser, run_one, scheduler

# Each moves the shell (or where its names lead) somewhere the check did not compute,
# then reads the protected file by a name that looks harmless from the working directory.
MOVED_READS = [
    "cd -P a/b && tac ../../secrets/key.txt",  # an option was taken for the folder
    "cd -L -- a/b && tac ../../secrets/key.txt",
    "pushd a/b >/dev/null && tac ../../secrets/key.txt",  # pushd moves like cd
    "pushd -n a/b >/dev/null; pushd >/dev/null; tac ../../secrets/key.txt",
    "builtin cd a/b && tac ../../secrets/key.txt",  # cd behind builtin, command, eval
    "command cd a/b && tac ../../secrets/key.txt",
    "eval cd a/b; tac ../../secrets/key.txt",
    "cd a && cd b && tac ../../secrets/key.txt",  # each cd moves from where the last one went
    "cd a/b && cd .. && tac ../secrets/key.txt",
    "shopt -s cdable_vars; D=a/b; cd D && tac ../../secrets/key.txt",  # cd D goes to $D
    "shopt -s cdable\"\"_vars; D=a/b; cd D && tac ../../secrets/key.txt",
    "HOME=a/b; cd; tac ../../secrets/key.txt",  # cd with no folder goes $HOME
    "HOME=$PWD/a/b cd && tac ../../secrets/key.txt",
    "for HOME in a/b; do cd; tac ../../secrets/key.txt; done",
    "read HOME <<< a/b; cd; tac ../../secrets/key.txt",
    "printf -v HOME a/b; cd; tac ../../secrets/key.txt",
    "declare -x HOME=a/b; cd; tac ../../secrets/key.txt",
    "HOME=$PWD/a/b; tac ~/../../secrets/key.txt",  # ~ is $HOME
    "cd a/b; tac ~+/../../secrets/key.txt",  # ~+ is $PWD, ~- is $OLDPWD
    "cd a/b; cd ../..; tac ~-/../../secrets/key.txt",
    "ln -s a/b l; cd l; tac ../../secrets/key.txt",  # a link made in the line: .. leaves its target
    "ln -s a/b l; tac l/../../secrets/key.txt",
    "ln -s ../secrets/key.txt a/k; tac a/k",
    "cp -s $PWD/secrets/key.txt k; tac k",
]


@pytest.mark.parametrize("command", MOVED_READS)
async def test_bypass_mode_asks_before_reading_where_the_shell_moved(project, command):
    (project / "a" / "b").mkdir(parents=True)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text, f"{command!r} printed the secret unasked"
    assert result.is_error and (refuser.asked or "is blocked by the rule" in result.text), result.text


@pytest.mark.parametrize("command", ["CDPATH=.. cd {proj}/secrets && tac key.txt",
                                     "export CDPATH=..; cd {proj}/secrets && tac key.txt",
                                     'D=secrets; cd "$D" && tac key.txt'])
async def test_bypass_mode_asks_before_reading_in_a_folder_the_shell_decides(project, command):
    # The folder check took `cd proj/secrets` as relative to cwd, but CDPATH sends it to
    # ../proj/secrets; and after `cd "$D"` any relative name may be the protected file.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command.format(proj=project.name))
    assert SECRET[::-1] not in result.text and SECRET not in result.text
    assert result.is_error and refuser.asked


async def test_an_inherited_cdpath_does_not_move_a_cd(project, monkeypatch):
    # The check judges `cd secrets` from the working directory; the command must go there too.
    (project.parent / "secrets").mkdir(exist_ok=True)
    monkeypatch.setenv("CDPATH", str(project.parent))
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command="cd secrets && pwd")
    assert result.text.strip() == str(project / "secrets")
