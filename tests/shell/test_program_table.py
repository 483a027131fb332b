"""The program table: one row per program, read by one option reader, for every analysis.

The finding that made it: in bypass mode `cp x .git/hooks/pre-commit --no-preserve mode`
wrote a git hook unasked, because one of the copies of cp's options knew only two that
take a value (so `mode` looked like the destination). Now cp's row says which options take
a value, and the writes, the reads and the places a line may work in all read it: a change
of the row changes all three, as the tests below show by swapping the row.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.shell import PROGRAMS, line_facts, program
from nbtoolsched.shell import _programs
from nbtoolsched.shell._programs import read_args
from nbtoolsched.tools import BashTool

HOOK_LINES = [
    "cp x .git/hooks/pre-commit --no-preserve mode",
    "cp x .git/config --sparse always",
    "cp x .git/hooks/pre-commit --no-p mode",  # getopt_long takes an unambiguous prefix
    "cp -S .bak x .git/hooks/pre-commit",
    "install -m 755 x .git/hooks/pre-commit",
]


@pytest.fixture()
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "x").write_text("#!/bin/sh\necho owned\n")
    (tmp_path / ".env").write_text("TOKEN=1\n")
    return tmp_path


@pytest.mark.parametrize("command", HOOK_LINES)
async def test_a_copy_into_a_git_hook_asks_in_bypass_mode(repo, command):
    perms = nts.Permissions("bypassPermissions", cwd=repo)
    decision = await perms.evaluate(BashTool(), {"command": command})
    assert decision.behavior == "ask", (command, decision.steps)
    assert decision.decision.reason is not None and decision.decision.reason.kind == "safety_check"


def test_the_destination_is_what_the_row_says(repo):
    """Writes: the option's value is no operand, wherever it sits."""
    part = line_facts("cp x .git/hooks/pre-commit --no-preserve mode", str(repo)).parts[0]
    assert part.written == (".git/hooks/pre-commit",)
    assert part.names == ("x", ".git/hooks/pre-commit")
    target = line_facts("cp -t .git/hooks x y", str(repo)).parts[0]
    assert target.written == (".git/hooks",)


def _without_valued_options(monkeypatch, name):
    """cp's row as the old copy of the table had it: no option takes a value but -S and -t."""
    row = PROGRAMS[name]
    options = {option: option in ("-S", "-t", "--suffix", "--target-directory") for option in row.options}
    patched = dict(PROGRAMS)
    patched[name] = dataclasses.replace(row, options=options)
    monkeypatch.setattr(_programs, "PROGRAMS", patched)


def test_one_row_drives_writes_reads_and_places(repo, monkeypatch):
    """Swap cp's row for one that forgets --no-preserve takes a value: what cp writes, the
    names it is given and whether it makes links (so where the line's later names lead)
    all change at once, because all three read the same row."""
    write = "cp x .git/hooks/pre-commit --no-preserve mode"
    links = "cp --no-preserve -s a b && cat ../outside"  # -s is --no-preserve's value: no link
    before = (line_facts(write, str(repo)).parts[0].written, line_facts(write, str(repo)).parts[0].names,
              line_facts(links, str(repo)).bases)
    assert before[0] == (".git/hooks/pre-commit",)
    assert before[1] == ("x", ".git/hooks/pre-commit")
    assert before[2] == (str(repo),)
    from nbtoolsched.shell import _facts
    _facts.part_facts.cache_clear()
    _without_valued_options(monkeypatch, "cp")
    after = (line_facts(write, str(repo)).parts[0].written, line_facts(write, str(repo)).parts[0].names,
             line_facts(links, str(repo)).bases)
    _facts.part_facts.cache_clear()
    assert after[0] == ("mode",)
    assert after[1] == ("x", ".git/hooks/pre-commit", "mode")
    assert after[2] is None  # a link before a later read: the shell decides where names lead


async def test_reads_of_a_protected_file_through_cp_options_ask(repo):
    perms = nts.Permissions(cwd=repo, allow=["Bash(cp:*)"], deny=["Read(./.env)"])
    decision = await perms.evaluate(BashTool(), {"command": "cp --sparse always .env /tmp/out"})
    assert decision.behavior in ("ask", "deny")


def test_every_column_names_options_the_row_knows():
    for row in PROGRAMS.values():
        known = set(row.options)
        for column in ("optional", "chdir", "new_root", "split_string", "target_dir", "makes_links", "copies_links",
                       "prints_only", "recursive"):
            stray = set(getattr(row, column)) - known
            if column == "recursive" and not row.options:
                continue  # grep's options live in the read-only allowlist: the row names only these
            assert not stray, (row.name, column, stray)
        assert set(row.hides_command) <= known, row.name


def test_unknown_programs_get_an_empty_row():
    row = program("some-tool-nobody-has")
    assert row.options == {} and row.writes is None and row.runs is None
    assert program("/usr/bin/cp") is PROGRAMS["cp"]
    assert program(None).name == ""


def test_runner_options_are_read_strictly():
    reading = read_args(program("env"), ["env", "-C", "a", "-u", "X", "cat", "../x"], first=1, strict=True)
    assert reading.values == (("-C", "a"), ("-u", "X")) and reading.end == 5 and reading.problem is None
    refused = read_args(program("env"), ["env", "-S", "cat x"], first=1, strict=True)
    assert refused.problem == "env -S splits a string into a command"
    unknown = read_args(program("timeout"), ["timeout", "--bogus", "5", "rm"], first=1, strict=True)
    assert unknown.problem and "--bogus" in unknown.problem


def test_git_takes_no_abbreviations_or_bundles():
    reading = read_args(program("git"), ["-C", "a", "--work", "b", "-Pp", "status"])
    assert reading.values == (("-C", "a"),)
    assert "--work" in reading.flags and "--work-tree" not in reading.flags


@settings(max_examples=300, derandomize=True, deadline=None)
@given(name=st.sampled_from(sorted(PROGRAMS)),
       args=st.lists(st.one_of(st.none(), st.sampled_from(["-", "--", "-x", "--x=1", "-t", "a", ".git", "--target-directory",
                                                             "-C", "--no-preserve", "-Sfoo", "b c"]), st.text(max_size=6)),
                     max_size=8),
       strict=st.booleans())
def test_the_reader_never_invents_words(name, args, strict):
    """Whatever the words, the reader ends inside them, and its operands and values are
    words it was given (or an attached part of one)."""
    reading = read_args(PROGRAMS[name], args, strict=strict)
    assert 0 <= reading.end <= len(args)
    given_words = [a for a in args if a is not None]
    for operand in reading.operands:
        assert operand in given_words
    for _, value in reading.values:
        assert any(value in word for word in given_words)


def test_the_rows_are_one_per_program():
    names = [row.name for row in _programs._ROWS]
    assert len(names) == len(set(names))
    with pytest.raises(ValueError, match="two rows for cp"):
        rows = _programs._ROWS + (_programs.Program("cp"),)
        original = _programs._ROWS
        try:
            _programs._ROWS = rows
            _programs._build()
        finally:
            _programs._ROWS = original


def test_no_logic_module_names_a_programs_options():
    """The options of the programs that were written down two to four times (env, sudo,
    git, tar, cp) now live in the table only: no other shell module names their
    value-taking options as data."""
    here = os.path.dirname(_programs.__file__)
    for name in os.listdir(here):
        if not name.endswith(".py") or name in ("_programs.py", "_allowlists.py"):
            continue
        text = open(os.path.join(here, name), encoding="utf-8").read()
        for spelled in ('"--no-preserve"', '"--target-directory"', '"--split-string"', '"--chroot"', '"--git-dir"',
                        '"--directory"', '"--chdir"'):
            assert spelled not in text, (name, spelled)
