"""A %%toolcall cell body must be read in time linear in its size (cell parser bombs)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent(
    """
    from nbtoolsched.notebook._cellparse import CellError, IdMaker, parse_cell

    body = "[" + '"\\\\' * 100_000
    try:
        parse_cell(body, {}, lambda name: True, ["Read"], IdMaker())
    except CellError:
        pass
    print("parsed")
    """
)


@pytest.mark.heavy  # a child process that imports the package and parses 200 KB
def test_escaped_quotes_make_the_json_depth_scan_quadratic():
    # _JSON_TOKENS tries every '"' as the start of a string, and from each one the
    # escaped quotes that follow ('\\"') run to the end of the cell: one regex search,
    # holding the GIL, that takes minutes for 200 KB (about 3 s for 32 KB, four times
    # as long for every doubling). Run in a child so the test can stop it.
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        raise AssertionError("parse_cell was still reading a 200 KB cell after 15 s") from None
    assert "parsed" in done.stdout, done.stderr[-500:]
