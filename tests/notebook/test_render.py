"""Pure rendering: short inputs, progress lines, escaping, diffs with inline styles."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbtoolsched._messages import ToolResultBlock
from nbtoolsched.notebook._render import (
    RowView,
    badge_html,
    counts_text,
    diff_html,
    elapsed_text,
    progress_text,
    result_preview,
    row_text,
    rows_table_html,
    short_input,
)


def test_short_input_is_one_line_and_cut():
    assert short_input({"file_path": "a.py", "limit": 3}) == "file_path=a.py, limit=3"
    long = short_input({"command": "echo " + "x" * 200 + "\nls"})
    assert len(long) == 70 and long.endswith("…") and "\n" not in long


def test_progress_text_picks_the_useful_line():
    assert progress_text({"stream": "stdout", "line": "  building  "}) == "building"
    assert progress_text("a\nb\n\n") == "b"
    assert progress_text({"elapsed": 2}) == '{"elapsed": 2}'
    assert progress_text(None) == ""


def test_elapsed_is_coarse_while_running_and_fine_when_done():
    assert elapsed_text(3.47, final=False) == "3 s"
    assert elapsed_text(3.47, final=True) == "3.5 s"
    assert elapsed_text(None, final=True) == ""


def _markup(text: str) -> str:
    return rows_table_html([RowView(1, text, text, text, 1, "executing", "", text)]) + badge_html(text)


@given(st.text(alphabet="<>&\"'ab/ ", min_size=1, max_size=20))
def test_everything_shown_is_escaped(text):
    shown, plain = _markup(text), _markup("x")
    # the text adds no tag and no attribute boundary, whatever it contains
    assert shown.count("<") == plain.count("<") and shown.count(">") == plain.count(">")
    assert shown.count('"') == plain.count('"')


def test_row_text_and_counts():
    row = RowView(2, "t1", "Read", "file_path=a", 1, "completed", "0.1 s", "")
    assert row_text(row) == " 2. Read [b1] completed  file_path=a"
    assert counts_text(["completed", "queued", "completed", "awaiting_approval"]) == "1 queued, 1 awaiting approval, 2 completed"


def test_result_preview_marks_errors_and_cuts():
    ok = result_preview(ToolResultBlock.make("t", "fine <b>"))
    assert "fine &lt;b&gt;" in ok and "#991b1b" not in ok
    bad = result_preview(ToolResultBlock.make("t", "x" * 5000, is_error=True), limit=100)
    assert "#991b1b" in bad and "4900 more characters" in bad


def test_diff_is_highlighted_with_inline_styles_only():
    html = diff_html("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old <tag>\n+new\n")
    assert "class=" not in html.replace('class="nts-diff"', "")  # no page-wide CSS needed
    assert "style=" in html and "&lt;tag&gt;" in html and "new" in html
