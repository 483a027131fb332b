"""The facts record of a command line: stated once, by the shell layer, checked against bash."""

from __future__ import annotations

import os
import subprocess

import pytest

from nbtoolsched.shell import PROGRAMS, line_facts
from nbtoolsched.shell import _parse


def test_parts_are_read_through_their_programs_rows(tmp_path):
    line = line_facts("FOO=1 timeout 5 grep -e x src && cp -t out a b | tee log.txt", str(tmp_path))
    parts = line.parts
    assert [p.text for p in parts] == ["FOO=1 timeout 5 grep -e x src", "cp -t out a b", "tee log.txt"]
    grep, cp, tee = parts
    assert grep.peeled == "grep -e x src" and grep.row is PROGRAMS["grep"]
    assert grep.names == ("x", "src")  # -e gives the pattern, so the first word after it is a name
    assert cp.written == ("out",) and cp.names == ("a", "b", "out")  # -t's folder is a name it changes too
    assert tee.written == ("log.txt",) and tee.row.paths == "write"
    assert line.structure is None


def test_the_programs_a_line_runs_include_nested_code(tmp_path):
    line = line_facts("""sh -c 'rm -f x' && find . -exec cat {} + ; echo "$(whoami)" """, str(tmp_path))
    programs = {inv.words[0] for inv in line.runs.invocations if inv.words and inv.words[0]}
    assert {"sh", "rm", "find", "cat", "echo", "whoami"} <= programs
    nested = [inv for inv in line.runs.invocations if inv.nested]
    assert any(inv.words[0] == "rm" for inv in nested)
    assert not line.runs.problems


def test_a_computed_program_is_a_problem_not_a_guess(tmp_path):
    line = line_facts('c=rm; $c -rf /', str(tmp_path))
    assert line.runs.problems and line.runs.computes_code
    assert line.bases is None  # it may be cd: where later names lead, the shell decides


def test_places_follow_cd_and_programs_told_where_to_work(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    line = line_facts("cd a && git -C b status && env --chdir=b cat x", str(tmp_path))
    assert line.bases is not None
    assert str(tmp_path / "a") in line.bases and str(tmp_path / "a" / "b") in line.bases
    assert line.structure == ("cd with git", line.structure[1])


def test_redirections_are_facts_too(tmp_path):
    line = line_facts("cat < in.txt > out{1,2}.txt 2>&1 >/dev/null; echo hi > $OUT", str(tmp_path))
    found = [(r.output, r.paths, r.computed) for r in line.redirections]
    assert (False, ("in.txt",), False) in found
    assert (True, ("out1.txt", "out2.txt"), False) in found
    assert any(output and computed for output, _, computed in found)
    assert all(r.paths != ("/dev/null",) for r in line.redirections)


def test_a_line_that_cannot_be_split_has_no_parts(tmp_path):
    line = line_facts("for f in *; do cat $f; done", str(tmp_path))
    assert line.parts is None
    assert line.is_compound("ls; rm x") and not line.is_compound("ls -l")


def test_a_custom_splitter_is_the_one_used(tmp_path):
    line = line_facts("echo a && echo b", str(tmp_path), split=lambda c: None)
    assert line.parts is None and line.is_compound("echo a")


def test_file_system_facts_are_kept_for_the_decision_only(tmp_path):
    """Facts that look at the tree are computed on first use and kept in the record (one
    decision), never across records: a link made between two decisions is seen."""
    (tmp_path / "docs").mkdir()
    line = line_facts("grep -r x docs", str(tmp_path))
    part = line.parts[0]
    first = line.reads(part, (str(tmp_path),))
    assert line.reads(part, (str(tmp_path),)) is first
    assert line.paths("docs", str(tmp_path)) is line.paths("docs", str(tmp_path))
    os.symlink("/etc", tmp_path / "docs" / "etc")
    again = line_facts("grep -r x docs", str(tmp_path))
    assert again.paths("docs/etc", str(tmp_path)) != [str(tmp_path / "docs" / "etc")]
    assert "/etc" in again.paths("docs/etc", str(tmp_path))


def test_the_text_of_a_line_is_parsed_once_per_decision(tmp_path, monkeypatch):
    """Every fact of a one-part line comes from one parse of its text (the caches shared by
    every decision, emptied here as for a command never seen)."""
    _parse.parse_command.cache_clear()
    seen: list[str] = []
    real = _parse._parse

    def counting(command: str):
        seen.append(command)
        return real(command)

    monkeypatch.setattr(_parse, "_parse", counting)
    line = line_facts("git log --oneline -n 5 src", str(tmp_path))
    line.parts, line.runs, line.bases, line.redirections, line.shows_history, line.read_only()
    line.reads(line.parts[0], (str(tmp_path),)), line.names((str(tmp_path),)), line.config_write(line.bases)
    assert seen.count("git log --oneline -n 5 src") == 1, seen


@pytest.mark.parametrize("command, expected", [
    ("tar -C sub -xf a.tar && cat ../x", True),
    ("tar Cxf sub a.tar && cat ../x", False),  # old-style letters: their values in order, the shell decides
    ("sudo -R /mnt cat x", False),  # a new root: no name is judged from here
    ("env -S '-C sub cat' ../x", False),  # options in an env -S string
])
def test_runners_told_where_to_work(tmp_path, command, expected):
    (tmp_path / "sub").mkdir()
    bases = line_facts(command, str(tmp_path)).bases
    assert (bases is not None) is expected, bases
    if expected:
        assert str(tmp_path / "sub") in bases


def test_bash_agrees_on_where_tar_works(tmp_path):
    """The row's -C is where GNU tar itself works: checked against the real tar."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_text("x")
    subprocess.run(["tar", "-C", "sub", "-cf", "a.tar", "f"], cwd=tmp_path, check=True)
    listed = subprocess.run(["tar", "-tf", "a.tar"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    assert listed.split() == ["f"]
    assert str(tmp_path / "sub") in line_facts("tar -C sub -cf a.tar f", str(tmp_path)).bases
