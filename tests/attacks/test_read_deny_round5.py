"""Ways around today's Read-deny checks for Bash (round 5): bypass mode, where only a
bypass-immune safety check stops a command, and acceptEdits, which runs sed unasked."""

from __future__ import annotations

import pytest

from .conftest import READ_DENIES, SECRET, Refuser, git, run_one, scheduler


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


async def test_posixly_correct_sed_script_cannot_reach_a_denied_file(project):
    # With POSIXLY_CORRECT, GNU sed stops reading options at the first other word: the
    # script is '1e ...' and "-e p" are two file names. The check read "-e p" as the script.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits", deny=READ_DENIES, allow=["Bash(sed:*)"])
    result = await run_one(sched, "Bash", command="POSIXLY_CORRECT=1 sed '1e cat .e\"\"nv' -e p README.md")
    assert SECRET not in result.text
    assert result.is_error and refuser.asked


@pytest.mark.parametrize("command", [
    "if true; then mkdir -p .claude; echo '{}' > .claude/settings.json; fi",
    "for i in 1; do mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; done",
    "x=$(mkdir -p .vscode; echo a > .vscode/settings.json)",
])
async def test_bypass_mode_asks_before_a_loop_redirects_into_a_tool_config(project, command):
    # `echo x > .git/hooks/pre-commit` asks in bypass mode (a safety check), but a line
    # that cannot be split (a loop, an if, a substitution) never had its redirections checked.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert not any((project / p).exists() for p in (".claude/settings.json", ".git/hooks/pre-commit", ".vscode/settings.json"))
    assert result.is_error and refuser.asked


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
