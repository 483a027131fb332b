"""The report: tables and SVG charts, a comparison of two policies, and ``%replay``."""

from __future__ import annotations

import pytest

from nbtoolsched.scale import Policy, compare_policies, replay, write_synthetic_transcripts

from .conftest import fixture, write_settings


@pytest.fixture
def report():
    return replay([fixture("hand_parallel.jsonl"), fixture("hand_broken.jsonl")], Policy(name="now"), workers=1, progress=False)


def test_tables_count_what_the_replays_found(report):
    assert report.summary().to_dicts()[0] == {"metric": "sessions", "value": 2}
    assert report.by_tool().to_dicts() == [
        {"tool": "Bash", "calls": 4, "allow": 2, "prompt": 2, "deny": 0},
        {"tool": "Edit", "calls": 1, "allow": 0, "prompt": 1, "deny": 0},
        {"tool": "WebFetch", "calls": 1, "allow": 0, "prompt": 1, "deny": 0},
        {"tool": "Read", "calls": 3, "allow": 3, "prompt": 0, "deny": 0},
        {"tool": "Glob", "calls": 1, "allow": 1, "prompt": 0, "deny": 0},
        {"tool": "Grep", "calls": 1, "allow": 1, "prompt": 0, "deny": 0},
        {"tool": "TodoWrite", "calls": 1, "allow": 1, "prompt": 0, "deny": 0},  # Claude Code never asks for it
    ]
    assert report.parallelism().rows == [[1, 6], [2, 3]]
    assert report.by_rule().rows[:2] == [["tool: the path is inside the working directories", "allow", 5],
                                         ["default: no rule allows it", "prompt", 4]]
    text = str(report)
    assert "prompts (a person asked)" in text and "saved by running in parallel (s)" in text
    rows = {r["metric"]: r["value"] for r in report.summary().to_dicts()}
    # hand_parallel's times (tests/scale/test_replay.py): 8.15 s one at a time, 6.25 s in
    # batches, 1.9 s saved, 2.85 s estimated; hand_broken adds u1 (TodoWrite, 1.0 s, measured)
    # and u3 (a Bash that asks, 1.0 s span, estimated as the smaller of its span and the
    # session's median, 1.0 s); u2 has no result (unknown).
    assert rows["tool time of the calls that run, one at a time (s)"] == 10.15
    assert rows["  estimated: a person was or may have been asked (s)"] == 3.85
    assert rows["saved by running in parallel (s)"] == 1.9
    assert rows["calls whose duration is unknown (left out)"] == 1
    for label, value in rows.items():  # counts are integers, seconds floats
        assert isinstance(value, int) == (not label.endswith("(s)")), label


def test_charts_are_svg_and_the_report_renders_as_html(report):
    for chart in report.charts():
        svg = chart._repr_svg_()
        assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<rect" in report.prompts_chart().to_svg() and "Bash" in report.prompts_chart().to_svg()
    page = report._repr_html_()
    # The decisions by tool, then totals, rules, batch sizes and problems folded; one chart
    # (the tool time), since the others would repeat the tables (tests/scale/test_report_view.py).
    assert page.count("<table") == 5 and page.count("<svg") == 1 and page.count("<details") == 4
    assert "&lt;" not in report.by_tool()._repr_html_()  # names escaped, not mangled


def test_two_policies_side_by_side(tmp_path):
    proposed = write_settings(tmp_path / "p", {"permissions": {"allow": ["Bash(git log:*)", "WebFetch(domain:example.com)"],
                                                               "deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits"}})
    cmp = compare_policies([fixture("hand_parallel.jsonl")], Policy(name="current"), Policy.from_settings(proposed, name="proposed"),
                           workers=1, progress=False)
    assert cmp.summary().to_dicts()[2] == {"metric": "prompts", "current": 3, "proposed": 0, "change": -3}
    assert cmp.summary().to_dicts()[3] == {"metric": "denied", "current": 0, "proposed": 1, "change": 1}
    changes = {(r[0], r[1], r[2]) for r in cmp.changes().rows}
    assert changes == {("Bash", "prompt", "deny"), ("Edit", "prompt", "allow"), ("WebFetch", "prompt", "allow")}
    assert cmp._repr_html_().count("<svg") == 2  # all calls, and (folded) per tool
    with pytest.raises(ValueError, match="different names"):
        compare_policies([fixture("hand_parallel.jsonl")], Policy(name="x"), Policy(name="x"), progress=False)


def test_synthetic_transcripts_are_what_a_seed_says(tmp_path):
    first = write_synthetic_transcripts(tmp_path / "a", 5, seed=3)
    second = write_synthetic_transcripts(tmp_path / "b", 5, seed=3)
    assert [p.read_text() for p in first] == [p.read_text() for p in second]
    rep = replay(tmp_path / "a", workers=1, progress=False)
    assert rep.totals().sessions == 5 and rep.totals().calls > 20


@pytest.mark.heavy  # starts IPython and replays transcripts in it
async def test_replay_magic_in_ipython(tmp_path, monkeypatch):
    """Async: the notebook session the extension makes lives on a running loop."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(tmp_path)
    proposed = write_settings(tmp_path / "p", {"permissions": {"deny": ["Bash(rm:*)"]}})
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    try:
        one = ip.run_line_magic("replay", f"{fixture('hand_parallel.jsonl')} --allow 'Bash(rm:*)' --no-progress --name rep")
        assert one is ip.user_ns["rep"] and one.totals().allow == 7
        both = ip.run_line_magic("replay", f"{fixture('hand_parallel.jsonl')} --proposed {proposed} --no-progress")
        assert (both.current.totals().deny, both.proposed.totals().deny) == (0, 1)
        bad = ip.run_cell(f"%replay {tmp_path / 'none'}/*.jsonl --no-progress")
        assert "no transcript" in str(bad.error_in_exec)
        assert "invalid choice" in str(ip.run_cell("%replay x.jsonl --mode sideways").error_in_exec)
    finally:
        ip.run_line_magic("unload_ext", "nbtoolsched")
