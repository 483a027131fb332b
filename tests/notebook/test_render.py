"""Pure rendering: inputs, progress lines, escaping, diffs, the timeline, theme colours."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbtoolsched._messages import ToolResultBlock
from nbtoolsched.notebook._diffrender import file_diff_html
from nbtoolsched.notebook._render import (
    RowView,
    badge_html,
    counts_text,
    elapsed_text,
    progress_text,
    progress_view,
    result_summary,
    time_text,
    input_html,
    nice_step,
    result_preview,
    row_text,
    rows_html,
    short_input,
    timeline_html,
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


def test_progress_that_says_how_far_is_a_bar_with_time_left():
    shown = progress_view({"elapsed": 2, "remaining": 8.0})
    assert shown is not None and shown.text == "20% · 8 s left" and shown.fraction == 0.2
    mcp = progress_view({"progress": 3, "total": 4, "message": "indexing"})
    assert mcp is not None and mcp.text == "75% · 3/4 · indexing" and mcp.fraction == 0.75
    assert progress_view({"bytes": 12_345}).text == "12.3 KB received"  # type: ignore[union-attr]
    assert progress_view({"elapsed": 90, "remaining": 125}).text == "42% · 2 min 05 s left"  # type: ignore[union-attr]
    row = RowView(1, "t", "Sleep", {"seconds": 10}, 1, "executing", progress="20% · 8 s left", fraction=0.2)
    html = rows_html([row])
    assert 'class="nts-bar"' in html and "width:20%" in html and "{" not in html.split("nts-progress")[1]


def test_a_finished_call_says_its_result_in_one_line():
    read = ToolResultBlock.make("t", "".join(f"     {i}\u2192line {i}\n" for i in range(1, 9)))
    assert result_summary("Read", read) == "8 lines"
    assert result_summary("Glob", ToolResultBlock.make("t", "a.py\nb.py\nc.py")) == "3 files"
    assert result_summary("Bash", ToolResultBlock.make("t", "hello\nworld")) == "hello (+1 lines)"
    assert result_summary("Bash", ToolResultBlock.make("t", "")) == "no output"
    row = RowView(1, "t", "Read", {"file_path": "a"}, 1, "completed", summary="8 lines")
    assert "8 lines" in rows_html([row])


def test_rows_never_wrap_and_neighbours_stopped_for_one_reason_say_it_once():
    skipped = [RowView(n, f"t{n}", "Write", {"file_path": f"{n}.txt"}, n, "cancelled", note="the run stopped when #2 was denied",
                       label="skipped") for n in range(3, 11)]
    html = rows_html(skipped, header=True)
    assert html.count('class="nts-why"') == 1 and "#3–#10: the run stopped when #2 was denied" in html
    assert html.count("white-space:nowrap") >= 7 * len(skipped)  # every cell of a row stays on its line
    assert counts_text(r.shown_state for r in skipped) == "8 skipped"


def test_calls_that_never_ran_show_no_run_time():
    from nbtoolsched._events import CallState

    denied = CallState("t", "Bash", queued_at=1.0, started_at=1.0, asked_at=1.0, answered_at=2.0, finished_at=2.0, status="denied")
    assert time_text(denied) == "waited 1.0 s"
    skipped = CallState("u", "Write", queued_at=1.0, started_at=1.5, finished_at=1.5, status="cancelled")
    assert time_text(skipped, "skipped") == "" and time_text(skipped, "interrupted") == "ran 0.0 s"


def test_the_record_opens_each_result_in_one_click():
    row = RowView(1, "t1", "Read", {"file_path": "a"}, 1, "completed", summary="2 lines")
    html = rows_html([row], results={"t1": "<pre>the result</pre>"})
    assert '<details class="nts-call"><summary class="nts-row"' in html and "the result" in html


def test_elapsed_is_coarse_while_running_and_fine_when_done():
    assert elapsed_text(3.47, final=False) == "3 s"
    assert elapsed_text(3.47, final=True) == "3.5 s"
    assert elapsed_text(None, final=True) == ""


def _markup(text: str) -> str:
    row = RowView(1, text, text, {text: text}, 1, "executing", text, text, text, text)
    return rows_html([row], header=True) + badge_html(text) + input_html({"k": text * 100}, 50)


@given(st.text(alphabet="<>&\"'ab/ ", min_size=1, max_size=20))
def test_everything_shown_is_escaped(text):
    shown, plain = _markup(text), _markup("x")
    # the text adds no tag and no attribute boundary, whatever it contains
    assert shown.count("<") == plain.count("<") and shown.count(">") == plain.count(">")
    assert shown.count('"') == plain.count('"')


def test_row_text_and_counts():
    row = RowView(2, "t1", "Read", {"file_path": "a"}, 1, "completed", "ran 0.1 s")
    assert row_text(row) == " 2. Read [b1] completed  file_path=a"
    denied = RowView(3, "t2", "Bash", {"command": "ls"}, 2, "denied", note="denied by you")
    assert row_text(denied) == " 3. Bash [b2] denied  command=ls\n      -> denied by you"
    assert counts_text(["completed", "queued", "completed", "awaiting_approval"]) == "1 queued, 1 awaiting approval, 2 completed"


def test_result_preview_marks_errors_and_drops_the_model_tags():
    ok = result_preview(ToolResultBlock.make("t", "fine <b>"))
    assert "fine &lt;b&gt;" in ok and "nts-result-error" not in ok
    bad = result_preview(ToolResultBlock.make("t", "<tool_use_error>" + "x" * 5000 + "</tool_use_error>", is_error=True), limit=100)
    assert "nts-result-error" in bad and "4900 more characters" in bad and "tool_use_error" not in bad


def test_diff_is_tinted_with_inline_styles_and_theme_text():
    html = file_diff_html("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old <tag>\n+new\n")  # the one diff renderer
    assert "&lt;tag&gt;" in html and "rgba(46,160,67" in html and "var(--jp-content-font-color1" in html


def test_no_fixed_dark_text_colours_anywhere():
    """Text colours come from the theme's variables (a fixed dark grey is unreadable in dark themes)."""
    import re

    row = RowView(1, "t", "Read", {"file_path": "a\nb"}, 1, "error", "ran 1 s", "", "no such file")
    html = rows_html([row], header=True) + badge_html("denied") + file_diff_html("@@ -1 +1 @@\n+a") + timeline_html([])
    for colour in re.findall(r"(?<![-\w])color:\s*([^;\"]+)", html):
        assert colour.startswith("var(--jp-"), colour


def test_input_keeps_line_breaks_and_folds_only_past_the_limit():
    data = {"command": "for i in 1 2; do\n  echo $i\ndone", "timeout": 5}
    full = input_html(data, None)
    assert "command:\n  for i in 1 2; do\n    echo $i\n  done\ntimeout: 5" in full and "<details" not in full
    folded = input_html({"content": "line\n" * 200}, 100)
    assert "<details" in folded and "show all" in folded


def test_round_ticks_and_a_legend():
    assert [nice_step(t) for t in (8.113, 0.9, 0.04, 130)] == [2, 0.2, 0.01, 50]
    from nbtoolsched._events import CallState

    state = CallState("t", "Read", queued_at=100.0, started_at=100.0, asked_at=100.2, answered_at=3.0 + 100.0, finished_at=108.113,
                      status="completed")
    html = timeline_html([state], ["#1 Read"])
    assert "10 s" in html and "2 s" in html and "8113" not in html
    assert "waiting for approval" in html and "nts-legend" in html
