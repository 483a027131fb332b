"""The shared pieces on their own: atomic writes, glob rules, the Python engine's abort."""

from __future__ import annotations

import os

import pytest

import nbtoolsched as nts
from nbtoolsched._files import atomic_write
from nbtoolsched.tools.files._globs import GlobSyntaxError, parse_rule, path_matcher, split_glob_argument
from nbtoolsched.tools.files._search import PythonEngine, SearchSpec


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write(str(target), b"new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


@pytest.mark.parametrize("line, path, is_dir, matches", [
    ("*.log", "a/b/x.log", False, True),
    ("/top.txt", "top.txt", False, True),
    ("/top.txt", "sub/top.txt", False, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),
    ("docs/**/*.tmp", "docs/a/b/c.tmp", False, True),
    ("docs/**/*.tmp", "docs/c.tmp", False, True),
    ("a/*.py", "a/b/c.py", False, False),
    ("[Tt]emp*", "Temp1.txt", False, True),
    ("*.{js,ts}", "src/x.ts", False, True),
    ("\\#hash", "#hash", False, True),
    ("trailing   ", "trailing", False, True),
])
def test_gitignore_rules(line, path, is_dir, matches):
    rule = parse_rule(line)
    assert rule is not None and rule.matches(path, is_dir) is matches


def test_comments_blanks_and_bad_globs():
    assert parse_rule("# note") is None and parse_rule("   ") is None
    with pytest.raises(GlobSyntaxError, match="unclosed"):
        parse_rule("[abc")
    with pytest.raises(GlobSyntaxError, match="unclosed"):
        path_matcher("*.{py,ts")
    assert path_matcher("!weird").matches("!weird", False)  # Glob patterns have no negation


def test_grep_glob_argument_splits_like_claude_code():
    assert split_glob_argument("*.py,*.md  *.{ts,tsx}") == ["*.py", "*.md", "*.{ts,tsx}"]


async def test_python_engine_stops_on_abort(tmp_path):
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text("needle\n")
    abort = nts.AbortSignal()
    abort.abort("user_abort")
    with pytest.raises(nts.AbortError):
        await PythonEngine().search(SearchSpec("needle", str(tmp_path)), abort)
    found = await PythonEngine().search(SearchSpec("needle", str(tmp_path)), nts.AbortSignal())
    assert len(found) == 50
