"""Read deny rules through Bash: every spelling of a denied file's name, and every line
that names it among other commands, is stopped, also in bypass mode (where only a
bypass-immune safety check stops a command) and when two asks share one line."""

from __future__ import annotations

import pytest

import nbtoolsched as nts

from ..conftest import READ_DENIES, SECRET, Refuser, git, run_one, scheduler
from ..conftest import committed as _committed


def stopped(result, refuser: Refuser) -> bool:
    """The call failed because a rule denied it or a person (who says no here) was asked."""
    return result.is_error and (bool(refuser.asked) or "is blocked by the rule" in result.text)


# Each names the protected file in a way a per-command word scan missed, or hid that
# name behind a plain ask (which bypass mode answers with yes).
NAMED_IN_BYPASS = [
    # a plain ask of the path check came first and hid the safety check
    "cat $'.env'",
    "cat ../outside.txt .env",
    'nl "$HOME" .env',
    "cp -f .env copy.txt; cat copy.txt",
    # a word the shell computes made the whole command "unknown", names and all
    "tac .env $HOME",
    "xargs cat .env < /dev/null",
    "awk 'BEGIN { system(\"true\") } 1' .env",
    # brace expansion makes words whether files exist or not: it is no glob
    "cat {.env,}",
    "cat .en{v,}",
    "cat .env{,{a..z}{a..z}}",
    # lines that cannot be split were never checked command by command
    "if true; then cat .env; fi",
    "x=$(cat .env); echo $x",
    'echo "$(<.env)"',
    "echo `cat .env`",
    "f() { cat .env; }; f",
    "case a in a) tac secrets/key.txt;; esac",
    "while read l; do echo $l; done < .env",
    "cat <(tac secrets/key.txt)",
    # code that a shell runs from a string or from its input
    "bash -c 'cat .e\"\"nv'",
    "eval 'cat .e\"\"nv'",
    "bash <<< 'cat .e\"\"nv'",
    "env bash <<< 'cat .e\"\"nv'",
    "sh <<'X'\ncat .e\"\"nv\nX",
    "python3 <<< 'print(open(\".env\").read())'",
]


@pytest.mark.parametrize("command", NAMED_IN_BYPASS)
async def test_bypass_mode_stops_every_spelling_that_names_a_denied_file(project, command):
    (project.parent / "outside.txt").write_text("outside\n")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text and not (project / "copy.txt").exists()
    assert stopped(result, refuser), result.text


async def test_bypass_mode_stops_an_object_name_fed_to_git_cat_file(project):
    # git cat-file --batch reads object names from its input: the here-string names the blob.
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "with the secret")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command="git cat-file --batch <<< HEAD:.env")
    assert SECRET not in result.text
    assert stopped(result, refuser), result.text


@pytest.mark.parametrize("command", [
    "for f in README.md; do cat $f; done",
    "cat README.{md,txt} 2>/dev/null; true",
    "cat > notes.md <<'X'\nset TOKEN in .env first\nX",
    "bash -c 'cat README.md'",
])
async def test_bypass_mode_still_runs_commands_that_name_no_protected_file(project, command):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert not refuser.asked and not result.is_error, result.text


async def test_posixly_correct_sed_script_cannot_reach_a_denied_file(project):
    # With POSIXLY_CORRECT, GNU sed stops reading options at the first other word: the
    # script is '1e ...' and "-e p" are two file names. The check read "-e p" as the script.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits", deny=READ_DENIES, allow=["Bash(sed:*)"])
    result = await run_one(sched, "Bash", command="POSIXLY_CORRECT=1 sed '1e cat .e\"\"nv' -e p README.md")
    assert SECRET not in result.text
    assert result.is_error and refuser.asked


@pytest.mark.parametrize("command", [
    "rg SECRET; rg SECRET",
    "git log -p; git log -p",
    "strings /proc/self/environ; ls /proc/self/",
    "find . -type f | xargs cat",
])
async def test_two_asks_in_one_line_stay_an_ask(project, command):
    _committed(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=["Read(./.env)", "Read(./secrets/**)"])  # the finding's rules
    result = await run_one(sched, "Bash", command=command)
    assert refuser.asked, f"{command!r} ran unasked: {result.text[:300]}"
    assert SECRET not in result.text


def test_man_does_not_format_a_local_page_unasked(project):
    # A page's `.so` request includes another file: man -l prints it.
    (project / "notes.1").write_text(".so .env\n")
    for command in ("man -l notes.1", "man ./notes.1"):
        refuser = Refuser()
        sched = scheduler(project, refuser, deny=READ_DENIES)
        result = nts.run_sync(run_one(sched, "Bash", command=command))
        assert refuser.asked, f"{command!r} ran unasked: {result.text[:300]}"
        assert SECRET not in result.text


@pytest.mark.parametrize("command", ["cat < .e{n..n}v", "cat < .e{n,x}v", "head -c 100 < ./.en{v,}"])
async def test_a_brace_in_a_redirection_is_expanded_before_it_is_judged(project, command):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text
    assert "is blocked by the rule" in result.text or refuser.asked, result.text
