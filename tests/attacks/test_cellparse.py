"""A %%toolcall cell body must be read in time linear in its size (cell parser bombs)."""

from __future__ import annotations

import threading

from nbtoolsched.notebook.cellparse import CellError, IdMaker, parse_cell


def test_escaped_quotes_make_the_json_depth_scan_quadratic():
    # _JSON_TOKENS tries every '"' as the start of a string, and from each one the
    # escaped quotes that follow ('\"') run to the end of the cell: 200 KB of them take
    # minutes (about 3 s for 32 KB, four times as long for every doubling).
    body = "[" + '"\\' * 100_000
    outcome: list[object] = []

    def parse() -> None:
        try:
            outcome.append(parse_cell(body, {}, lambda name: True, ["Read"], IdMaker()))
        except CellError as err:
            outcome.append(err)

    worker = threading.Thread(target=parse, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert outcome, "parse_cell was still reading a 200 KB cell after 10 s"
