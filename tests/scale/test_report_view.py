"""How a report looks: a headline first, the table that matters, charts that follow the theme.

Checked on the SVG and HTML themselves (parsed, not eyeballed): chart text takes the
theme's colour (no black literal), bars keep 3:1 contrast on light and dark backgrounds,
counts are integers, long labels stay readable, both policies are labelled in one order,
secondary tables are folded, no two charts share a title, and problem rows keep their
real numbers.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest

from nbtoolsched.scale import Policy, compare_policies, replay
from nbtoolsched.scale._report import COLORS, MAX_LABEL, BarChart, PolicyReport

from .conftest import fixture
from .transcripts import write_transcript

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def one():
    return replay([fixture("hand_parallel.jsonl")], Policy(name="current"), workers=1, progress=False)


@pytest.fixture
def cmp():
    return compare_policies([fixture("hand_parallel.jsonl")], Policy(name="current"),
                            Policy(name="proposed", mode="acceptEdits", allow=("WebFetch",), deny=("Bash(rm:*)",)),
                            workers=1, progress=False)


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", page, re.S)]


def shown(svg: ET.Element) -> list[str]:
    """The text a reader sees (without tooltips): a wrapped label's lines joined by a space."""
    out = []
    for t in svg.iter(f"{SVG}text"):
        lines = [c.text or "" for c in t if c.tag == f"{SVG}tspan"]
        out.append(" ".join(lines) if lines else (t.text or "") + "".join((c.tail or "") for c in t))
    return out


def luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    x, y = sorted((luminance(a), luminance(b)))
    return (y + 0.05) / (x + 0.05)


def every_chart(one: PolicyReport, cmp) -> list[BarChart]:
    return [*one.charts(), cmp.chart(), cmp.tools_chart()]


# -- the theme -----------------------------------------------------------------------------------
def test_chart_text_takes_the_theme_colour_never_a_black_literal(one, cmp):
    for chart in every_chart(one, cmp):
        for standalone in (True, False):
            svg = ET.fromstring(chart.to_svg(standalone=standalone))
            parent = {child: node for node in svg.iter() for child in node}
            for text in svg.iter(f"{SVG}text"):
                node, fills = text, []
                while node is not None:  # the fill a text inherits: its own, else its nearest ancestor's
                    fills += [node.get("style", ""), node.get("fill", "")]
                    if node.get("fill") or node.get("style"):
                        break
                    node = parent.get(node)
                assert any("var(--jp-content-font-color" in f for f in fills), (chart.title, fills)
                assert "currentColor" in fills, "where CSS variables are stripped, the page's own colour"
            literal = re.findall(r"fill(?:=|:)\s*'?(#[0-9a-fA-F]{3,6}|black|rgb\([^)]*\))", chart.to_svg(standalone=standalone))
            assert set(literal) <= set(COLORS.values()) | {"#757575", "#ffffff"}, literal
            assert "#000" not in chart.to_svg(standalone=standalone) and "black" not in chart.to_svg(standalone=standalone)


@pytest.mark.parametrize("name", sorted(COLORS))
def test_bar_colours_stand_out_on_light_and_dark_backgrounds(name):
    assert contrast(COLORS[name], "#ffffff") >= 3.0
    assert contrast(COLORS[name], "#111111") >= 3.0


def test_reports_draw_their_charts_inline_so_the_theme_reaches_them(one, cmp):
    for page in (one._repr_html_(), cmp._repr_html_()):
        assert "<svg" in page and "<img" not in page and "image/svg+xml" not in page
        assert "var(--jp-content-font-color1" in page
    chart = one.time_chart()
    assert chart._repr_html_().startswith("<div><svg") and "var(--jp-layout-color0" not in chart._repr_html_()
    assert "var(--jp-layout-color0, #ffffff)" in chart._repr_svg_()  # on its own: a card, white in an <img>


# -- numbers and labels ------------------------------------------------------------------------------
def test_counts_are_drawn_as_integers(tmp_path):
    for n in range(4):
        write_transcript(tmp_path / f"s{n}.jsonl", [[("Read", {"file_path": f"/home/u/proj/f{i}"}) for i in range(300)]])
    report = replay(tmp_path, workers=1, progress=False)
    for chart in (report.rules_chart(), report.prompts_chart(), report.parallelism_chart()):
        drawn = shown(ET.fromstring(chart.to_svg()))
        assert not [t for t in drawn if re.search(r"\d\.\d", t)], (chart.title, drawn)
    assert "1,200" in shown(ET.fromstring(report.rules_chart().to_svg()))
    assert "1,200" in shown(ET.fromstring(report.prompts_chart().to_svg()))
    assert "1,200" in report.by_tool()._repr_html_() and "1,200.00" not in report._repr_html_()
    chart = BarChart("decisions", ["a"], {"allow": [1084.0]})
    assert "1,084" in shown(ET.fromstring(chart.to_svg())) and "1084.00" not in chart.to_svg()
    assert "22.9 s" in shown(ET.fromstring(BarChart("time", ["t"], {"serial": [22.94]}, " s").to_svg()))


def test_no_label_is_cut_long_ones_wrap_and_every_one_has_its_whole_text_as_a_tooltip():
    short = "Bash(git status) (project)"
    sixty = "tool: the path is inside the working directories of the sess"
    long = "default: no rule allows it, and the mode says nothing about this call at all, nor does a hook"
    assert len(short) < 30 < MAX_LABEL < len(sixty) < len(long)
    chart = BarChart("rules", [short, sixty, long], {"allow": [3, 4, 5]})
    svg = ET.fromstring(chart.to_svg())
    drawn = shown(svg)
    assert short in drawn and sixty in drawn and long in drawn  # whole, over as many lines as they need
    assert not [t for t in drawn if "…" in t or t.endswith("...")]
    titles = [t.text for t in svg.iter(f"{SVG}title")]
    assert {short, sixty, long} <= set(titles)
    for text in svg.iter(f"{SVG}text"):
        for line in text.iter(f"{SVG}tspan"):
            assert len(line.text or "") <= MAX_LABEL
    # Wide enough that no line runs into the bars, and each wrapped row is taller, so none overlap.
    bars = sorted((float(r.get("y")), float(r.get("x"))) for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None)
    assert min(x for _, x in bars) >= 6.0 * MAX_LABEL
    ys = [y for y, _ in bars]
    assert ys[1] - ys[0] >= 18 and ys[2] - ys[1] >= 2 * 14  # the second label takes two lines
    wrapped_lines = [len(list(t.iter(f"{SVG}tspan"))) for t in svg.iter(f"{SVG}text") if list(t.iter(f"{SVG}tspan"))]
    assert wrapped_lines == [2, 3]


def test_the_time_chart_says_what_is_measured_what_estimated_and_what_parallel_saves(one):
    chart = one.time_chart()
    drawn = shown(ET.fromstring(chart.to_svg()))
    assert "saved by running in parallel" in drawn and "observed, people's waits included" in drawn
    # hand_parallel (tests/scale/test_replay.py): 8.15 s one at a time, 2.85 s of it estimated; 1.9 s saved.
    assert "5.3 s measured, 2.9 s estimated" in drawn and "1.9 s" in drawn
    assert "estimated" in chart.title


def test_comparison_counts_are_integers_and_times_say_seconds(cmp):
    rows = cmp.summary().to_dicts()
    for row in rows:
        counts = not row["metric"].endswith("(s)")
        assert all(isinstance(row[k], int) == counts for k in ("current", "proposed", "change")), row
    for line in str(cmp.summary()).splitlines()[3:]:  # past the title, the header and its rule
        if "(s)" not in line:
            assert not re.search(r"\d\.\d", line), line  # a count drawn as "3.00"
    saved = next(r for r in rows if r["metric"] == "saved by running in parallel (s)")
    assert (saved["current"], saved["proposed"]) == (1.9, 1.9) and "-0.00" not in str(cmp.summary())


def test_decisions_per_tool_drop_no_tool(tmp_path):
    # 14 tools, 12 of them asked for: Read and Grep (never asked) came 13th and 14th and were cut.
    asked = [(f"mcp__srv__tool{i}", {}) for i in range(12)]
    write_transcript(tmp_path / "s.jsonl", [asked, [("Read", {"file_path": "/home/u/proj/a"}), ("Grep", {"pattern": "x"})]])
    report = replay(tmp_path, workers=1, progress=False)
    labels = report.prompts_chart().labels
    assert len(labels) == 14 and {"Read", "Grep"} <= set(labels)
    assert "Read" in shown(ET.fromstring(report.prompts_chart().to_svg()))
    page = report._repr_html_()
    assert page.count(">Read<") == 1 and page.count(">Grep<") == 1


# -- the report's shape ------------------------------------------------------------------------------
def test_the_report_leads_with_a_one_sentence_headline(one):
    headline = one.headline()
    # The hand count of tests/scale/test_replay.py: 1.9 s saved of 8.15 s, 2.85 s of it estimated (35 %).
    assert headline == ("1 session, 9 calls: 3 prompts (33 %), 6 allowed, 0 denied; 3 batches would run calls in parallel, "
                        "saving 1.9 s of 8.2 s of tool time (35 % of it estimated: people's waits are not tool time).")
    page = one._repr_html_()
    assert page.index(html.escape(headline)) < page.index("<table") < page.index("<details")
    assert str(one).startswith(f"current: {headline}")


def test_secondary_tables_are_folded_and_open_without_a_kernel(one):
    page = one._repr_html_()
    visible = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    assert visible.count("<table") == 1 and "decisions by tool" in visible
    assert visible.count("<svg") <= 1  # at most one chart in view, and not one that repeats the table
    folded = re.findall(r"<details[^>]*><summary[^>]*>(.*?)</summary>", page)
    assert folded[:3] == ["all totals", "what decided the calls (3 rules and checks, most first)", "batches by size"]
    assert " open" not in page and "<script" not in page and "widget" not in page


def test_a_long_table_shows_its_first_rows_and_folds_the_rest(tmp_path):
    write_transcript(tmp_path / "s.jsonl", [[(f"mcp__srv__tool{i:02d}", {}) for i in range(20)]])
    page = replay(tmp_path, workers=1, progress=False)._repr_html_()
    visible = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    cell = re.compile(r">mcp__srv__tool\d\d</td>")
    assert len(cell.findall(visible)) == 15 and len(cell.findall(page)) == 20
    assert "5 more tools" in page


def test_no_two_charts_share_a_title(one, cmp):
    titles = [c.title for c in every_chart(one, cmp)]
    assert len(titles) == len(set(titles))
    for page in (one._repr_html_(), cmp._repr_html_()):
        shown_titles = [svg.find(f"{SVG}title").text for svg in svgs(page)]
        assert len(shown_titles) == len(set(shown_titles))


def test_the_comparison_leads_with_what_changes(cmp):
    headline = cmp.headline()
    assert headline == ("current → proposed, 1 session, 9 calls: prompts 3 → 0 (-3), denied 0 → 1 (+1), "
                        "allowed 6 → 8 (+2); 3 calls change decision.")
    page = cmp._repr_html_()
    assert "current → proposed</b>, 1 session" in page
    changes = cmp.what_changes()
    assert changes.columns[:3] == ["tool", "current → proposed", "calls"]
    assert {tuple(r[:3]) for r in changes.rows} == {("Edit", "prompt → allow", 1), ("WebFetch", "prompt → allow", 1),
                                                    ("Bash", "prompt → deny", 1)}
    assert page.index("what changes, by tool") < page.index("<svg") < page.index("<details")
    text = str(cmp)
    assert text.startswith(headline) and "what changes, by tool" in text and "prompt → deny" in text


def test_both_policies_are_labelled_in_the_same_order(cmp):
    overall = cmp.chart()
    assert overall.labels == ["current", "proposed"] and list(overall.series) == ["allow", "prompt", "deny"]
    per_tool = cmp.tools_chart()
    assert list(per_tool.series) == ["allow", "prompt", "deny"]
    assert per_tool.labels == ["current", "proposed"] * (len(per_tool.labels) // 2)
    assert per_tool.groups is not None and per_tool.groups[0::2] == per_tool.groups[1::2]  # each tool: current, then proposed
    tools = per_tool.groups[0::2]
    assert tools[0] == "Bash" and sorted(tools) == ["Bash", "Edit", "Glob", "Grep", "Read", "WebFetch"]
    for chart in (overall, per_tool):
        drawn = shown(ET.fromstring(chart.to_svg()))
        assert "current" in drawn and "proposed" in drawn
        legend = [t for t in drawn if t in ("allow", "prompt", "deny")]
        assert legend == ["allow", "prompt", "deny"]
    # Bash, current then proposed: the same stacking order in both bars.
    bash = shown(ET.fromstring(per_tool.to_svg()))
    assert "2 allow, 1 prompt" in bash and "2 allow, 1 deny" in bash


def test_policies_with_their_own_names_are_still_labelled_current_and_proposed():
    both = compare_policies([fixture("hand_parallel.jsonl")], Policy(name="team"), Policy(name="strict", mode="dontAsk"),
                            workers=1, progress=False)
    assert both.chart().labels == ["current (team)", "proposed (strict)"]
    for chart in (both.chart(), both.tools_chart()):
        assert chart.title.endswith("current (team) and proposed (strict)")
        assert "current (team)" in shown(ET.fromstring(chart.to_svg()))
    assert both.headline().startswith("team → strict, 1 session")


# -- problems --------------------------------------------------------------------------------------
def test_problem_rows_keep_their_real_numbers(tmp_path):
    good = write_transcript(tmp_path / "a.jsonl", [[("Read", {"file_path": "/home/u/proj/a"})]]).read_text()
    (tmp_path / "a.jsonl").write_text(good.replace("\n", "\n{\"type\": \"user\", \"message\": \n", 1))  # line 2
    lines = good.splitlines(keepends=True)
    (tmp_path / "b.jsonl").write_text("".join(lines[:2]) + "{\"type\": \"user\", \"message\": \n" + "".join(lines[2:]))  # line 3
    (tmp_path / "c.jsonl").write_text(good + "{cut")  # the last line, cut short
    report = replay([fixture("hand_broken.jsonl"), tmp_path], workers=1, progress=False)
    reasons = report.problems().column("reason")
    text = "\n".join(reasons)
    assert "Read u2" in text and "line 7: not valid JSON" in text and "toolu_ghost" in text
    assert "uN" not in text and "line N" not in text and "(N" not in text
    # Grouped by what they say but for numbers; each row one real example and how many sessions.
    rows = {r[0]: r for r in report.problems().rows}
    # hand_broken's line 7, a.jsonl's line 2 and b.jsonl's line 3: the same error but for its
    # line, so one row: the first real example, and the three sessions.
    bad_json = [r for reason, r in rows.items() if "not valid JSON (Expecting value at column 29)" in reason]
    assert len(bad_json) == 1 and bad_json[0][0].startswith("line 7: ") and bad_json[0][2] == 3
    assert report.problems().title.startswith("problems (similar reasons grouped")
