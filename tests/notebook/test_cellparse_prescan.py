"""The depth pre-scan of a JSON cell finds the brackets outside strings in linear time.

It must find exactly what the one-regex scan it replaced found (that regex took
minutes on a cell of escaped quotes); the regex stays here as the reference.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.notebook._cellparse import CellError, IdMaker, MAX_DEPTH, _brackets, parse_cell

REFERENCE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\']*\'|[\[\]{}]')


def reference_brackets(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in REFERENCE.finditer(text) if m.group() in "[]{}"]


@settings(deadline=None, max_examples=1000)
@given(st.text(alphabet='"\'\\[]{}a \n', max_size=40))
def test_the_brackets_are_the_ones_the_regex_found(text: str) -> None:
    assert list(_brackets(text)) == reference_brackets(text)


@pytest.mark.parametrize("text", ['["a", {"b": "c\\"]"}]', "{'x': '[', y: [1, 2]}", '"\\\n"[', '["\\"\\"]', "'", '"'])
def test_examples(text: str) -> None:
    assert list(_brackets(text)) == reference_brackets(text)


def test_depth_is_still_refused() -> None:
    with pytest.raises(CellError, match="nested more than"):
        parse_cell("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), {}, lambda name: True, ["Read"], IdMaker())


@pytest.mark.heavy  # hostile bodies large enough to show linear time
@pytest.mark.parametrize("body", ['"[" + \'"\\\\\' * 300_000', "\"[\" + \"'\" + '\"\\\\\\n' * 200_000", "'[' * 50 + '\"' * 300_000"])
def test_hostile_bodies_are_read_in_linear_time(body: str) -> None:
    code = textwrap.dedent(f"""
        from nbtoolsched.notebook._cellparse import CellError, IdMaker, parse_cell
        try:
            parse_cell({body}, {{}}, lambda name: True, ["Read"], IdMaker())
        except CellError:
            pass
        print("parsed")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the cell was still being read after 60 s") from None
    assert "parsed" in done.stdout, done.stderr[-500:]
