"""What a policy simulation found, as tables and pictures that need no plotting library.

``PolicyReport`` sums up the replays of one policy: prompts, denials and automatic
allows by tool and by the rule (or mode, or check) that decided them, how many batches
ran calls in parallel, and the time the batches save. ``PolicyComparison`` puts two
reports side by side ("current" and "proposed") and lists the calls whose fate changes.

Both lead with a one-sentence headline, then the table that matters (decisions by tool;
for a comparison, what changes), and fold the rest into ``<details>`` sections, which open
without a kernel. ``str()`` gives the same, as text. Tables render as HTML in Jupyter and as
aligned text elsewhere (``to_dicts`` and ``to_pandas`` for more); charts are SVG bar
charts drawn inline in the HTML, so they follow the JupyterLab theme: text takes the
theme's font colour (its CSS variables, ``currentColor`` where those are missing), bars
have colours of at least 3:1 contrast on light and on dark backgrounds. ``to_svg()`` on
its own (a file, an ``<img>``) draws on a light card of its own, since CSS variables do
not reach an image.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ._replay import CallDecision, SessionReplay

__all__ = ["Table", "BarChart", "PolicyReport", "PolicyComparison"]

OUTCOMES = ("allow", "prompt", "deny")
# Each at least 3:1 against white (#fff) and against a dark theme's background (#111);
# tests/scale/test_report_view.py checks every one.
COLORS = {"allow": "#388e3c", "prompt": "#ef6c00", "deny": "#c62828", "observed": "#607d8b", "serial": "#5c6bc0",
          "simulated": "#00897b", "batches": "#7e57c2", "current": "#757575", "proposed": "#1976d2",
          "measured": "#5c6bc0", "estimated": "#9c7a6b", "saved": "#00897b"}
OTHER_COLOR = "#757575"
TEXT = "var(--jp-content-font-color1, #1f2328)"  # the theme's text colour; dark grey where there is no theme
MUTED = "var(--jp-content-font-color2, #57606a)"
CARD = "var(--jp-layout-color0, #ffffff)"
MAX_LABEL = 40  # characters of a chart label on one line; a longer one wraps onto more lines (never cut)
CHAR_W = 6.6  # px per character at 12 px sans-serif (a generous average, so labels are never clipped)
LINE_H = 14  # px per line of a wrapped label
VISIBLE_ROWS = 15  # rows of a report's main table shown at once; the rest fold into <details>


class Table:
    """A small table: HTML in Jupyter, aligned text in a terminal."""

    def __init__(self, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        self.title = title
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def to_pandas(self) -> Any:
        import pandas as pd  # optional: only for those who have it

        return pd.DataFrame(self.rows, columns=self.columns)

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [row[i] for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def _numeric(self, rows: Sequence[Sequence[Any]]) -> list[bool]:
        """Which columns hold only numbers (drawn right-aligned; text is left-aligned)."""
        return [bool(rows) and all(isinstance(r[i], (int, float)) for r in rows) for i in range(len(self.columns))]

    def __str__(self) -> str:
        cells = [self.columns] + [[_fmt(v) for v in row] for row in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        numeric = self._numeric(self.rows)
        lines = [self.title] if self.title else []
        for n, row in enumerate(cells):
            lines.append("  ".join(c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        if not self.rows:
            lines.append("(none)")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self, rows: Sequence[Sequence[Any]] | None = None, *, caption: bool = True) -> str:
        """The table (or ``rows`` of it) as HTML; text columns left, numbers right."""
        chosen = self.rows if rows is None else rows
        numeric = self._numeric(self.rows)

        def align(i: int) -> str:
            return "right" if numeric[i] else "left"

        head = "".join(f"<th style='text-align:{align(i)}'>{html.escape(c)}</th>" for i, c in enumerate(self.columns))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{align(i)};vertical-align:top'>{html.escape(_fmt(v))}</td>"
                             for i, v in enumerate(row)) + "</tr>"
            for row in chosen
        ) or f"<tr><td colspan={len(self.columns)}>(none)</td></tr>"
        title = (f"<caption style='text-align:left;font-weight:bold;white-space:nowrap'>{html.escape(self.title)}</caption>"
                 if self.title and caption else "")
        return f"<table style='font-size:12px;margin:2px 0'>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(value: Any) -> str:
    """A cell as text: counts as integers with thousands separators, other numbers to 2 places."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def _num(value: float, unit: str = "") -> str:
    """A number drawn on a chart: a count as an integer ("1,084"), seconds to one place."""
    if unit.strip() == "s":
        return f"{_tenths(value):,.1f}{unit}"
    if float(value).is_integer():
        return f"{int(value):,}{unit}"
    return f"{value:,.2f}{unit}"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _wrap(text: str, width: int = MAX_LABEL) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (a longer word
    on a line of its own, split only where it has no space); nothing left out."""
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False, drop_whitespace=True) or [text]


class BarChart:
    """Horizontal bars, one per label, each stacked from named series (SVG).

    ``groups`` (one per label) draws consecutive rows of the same group together under
    its name, each row with its own label: a tool, with a bar for "current" and one for
    "proposed". No label is cut: one longer than ``MAX_LABEL`` characters wraps onto more
    lines (its row grows), and every label carries its whole text as a tooltip too."""

    def __init__(self, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str = "", *,
                 groups: Sequence[str] | None = None, legend: bool | None = None) -> None:
        self.title = title
        self.labels = list(labels)
        self.series = {name: list(values) for name, values in series.items()}
        self.unit = unit
        self.groups = list(groups) if groups is not None else None
        self.legend = len(self.series) > 1 if legend is None else legend  # one series needs no key
        if self.groups is not None and len(self.groups) != len(self.labels):
            raise ValueError("groups needs one entry per label")

    def totals(self) -> list[float]:
        return [sum(values[i] for values in self.series.values()) for i in range(len(self.labels))]

    def value_texts(self) -> list[str]:
        """What is written after each bar: its total, or with several series each part by name
        ("4 allow, 5 prompt"; parts that are 0 left out)."""
        if len(self.series) == 1:
            return [_num(t, self.unit) for t in self.totals()]
        out = []
        for i, total in enumerate(self.totals()):
            parts = [f"{_num(values[i], self.unit)} {name}" for name, values in self.series.items() if values[i]]
            out.append(", ".join(parts) if len(parts) > 1 else _num(total, self.unit))
        return out

    def to_svg(self, width: int | None = None, *, standalone: bool = True) -> str:
        """The chart as SVG. ``standalone`` (a file, an ``<img>``, ``IPython.display.SVG``)
        draws it on a card of its own (the theme's background inline, white in an image);
        ``standalone=False`` leaves the background to the page, as ``_repr_html_`` does."""
        bar_h, gap, top = 12, 6, (42 if self.legend else 24)
        totals = self.totals()
        values = self.value_texts()
        lines = [_wrap(label) for label in self.labels]
        heads = [_wrap(g) for g in self.groups] if self.groups is not None else None
        value_w = math.ceil(CHAR_W * max((len(v) for v in values), default=1)) + 10
        widest = max((len(line) for wrapped in lines for line in wrapped), default=4)
        if heads is not None:
            group_w = math.ceil(CHAR_W * max((len(line) for wrapped in heads for line in wrapped), default=4)) + 12
            sub_w = math.ceil(CHAR_W * widest) + 8
        else:
            group_w, sub_w = 0, math.ceil(CHAR_W * widest) + 12
        label_w = group_w + sub_w
        legend_w = sum(24 + math.ceil(CHAR_W * len(name)) for name in self.series) + 8 if self.legend else 0
        title_w = math.ceil(CHAR_W * 1.1 * len(self.title)) + 12
        bar_w = max(160, (width or 0) - label_w - value_w - 8)
        total_w = max(label_w + bar_w + value_w + 8, legend_w, title_w)
        scale = bar_w / (max(totals) if totals and max(totals) > 0 else 1)
        ys, y = [], top
        for i in range(len(self.labels)):
            starts_group = heads is not None and (i == 0 or self.groups[i] != self.groups[i - 1])  # type: ignore[index]
            if starts_group and i > 0:
                y += gap
            ys.append(y)
            shown = max(len(lines[i]), len(heads[i]) if heads is not None and starts_group else 1)
            y += max(18, LINE_H * shown + 4)
        height = y + 8
        parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{total_w}' height='{height}' viewBox='0 0 {total_w} {height}' "
                 f"font-family='sans-serif' font-size='12' role='img' aria-label='{_esc(self.title)}'>",
                 f"<title>{_esc(self.title)}</title>"]
        if standalone:
            parts.append(f"<rect width='100%' height='100%' rx='4' fill='#ffffff' style='fill:{CARD}'/>")
        # Text: the theme's colour (CSS variables reach an inline SVG), else the page's
        # colour (currentColor), else the dark grey fallback inside the variable.
        parts.append(f"<g fill='currentColor' style='fill:{TEXT}'>")
        parts.append(f"<text x='4' y='15' font-weight='bold'>{_esc(self.title)}</text>")
        x = 4
        for name in self.series if self.legend else ():
            parts.append(f"<rect x='{x}' y='22' width='10' height='10' fill='{COLORS.get(name, OTHER_COLOR)}'/>"
                         f"<text x='{x + 14}' y='31'>{_esc(name)}</text>")
            x += 24 + math.ceil(CHAR_W * len(name))
        for i, label in enumerate(self.labels):
            base = ys[i] + 13
            if heads is not None and self.groups is not None and (i == 0 or self.groups[i] != self.groups[i - 1]):
                parts.append(self._label(self.groups[i], heads[i], 4, base, "start", bold=True))
            parts.append(self._label(label, lines[i], label_w - 6, base, "end"))
        parts.append("</g>")
        for i, label in enumerate(self.labels):
            left = float(label_w)
            name_of_row = f"{self.groups[i]} · {label}" if self.groups is not None else label
            for name, series in self.series.items():
                w = series[i] * scale
                if w > 0:
                    parts.append(f"<rect x='{left:.1f}' y='{ys[i] + 3}' width='{max(w, 1.0):.1f}' height='{bar_h}' "
                                 f"fill='{COLORS.get(name, OTHER_COLOR)}'><title>{_esc(f'{name_of_row}: {name} {_num(series[i], self.unit)}')}"
                                 "</title></rect>")
                left += w
            parts.append(f"<text x='{left + 4:.1f}' y='{ys[i] + 13}' fill='currentColor' style='fill:{MUTED}'>{_esc(values[i])}</text>")
        parts.append("</svg>")
        return "".join(parts)

    @staticmethod
    def _label(text: str, lines: list[str], x: float, y: int, anchor: str, *, bold: bool = False) -> str:
        """A label, whole: one line, or its wrapped lines as tspans; its text as a tooltip."""
        weight = " font-weight='bold'" if bold else ""
        tip = f"<title>{_esc(text)}</title>"
        if len(lines) == 1:
            return f"<text x='{x:.0f}' y='{y}' text-anchor='{anchor}'{weight}>{tip}{_esc(text)}</text>"
        spans = "".join(f"<tspan x='{x:.0f}' dy='{0 if n == 0 else LINE_H}'>{_esc(line)}</tspan>" for n, line in enumerate(lines))
        return f"<text x='{x:.0f}' y='{y}' text-anchor='{anchor}'{weight}>{tip}{spans}</text>"

    def _repr_html_(self) -> str:
        # Inline, so the SVG inherits the notebook's theme (an <img> would not).
        return f"<div>{self.to_svg(standalone=False)}</div>"

    def _repr_svg_(self) -> str:
        return self.to_svg()


@dataclass
class _Totals:
    sessions: int = 0
    calls: int = 0
    allow: int = 0
    prompt: int = 0
    deny: int = 0
    batches: int = 0
    parallel_batches: int = 0  # batches in which two or more calls run
    calls_in_parallel: int = 0  # calls that run beside another of their batch
    observed_s: float = 0.0  # the recorded answers, people's waits included
    serial_s: float = 0.0  # tool time of the calls that run, each alone
    simulated_s: float = 0.0  # the same in this policy's batches
    estimated_s: float = 0.0  # the part of serial_s that is estimated (a person was or may have been asked)
    denied_s: float = 0.0  # tool time of the calls that do not run
    prompt_s: float = 0.0  # the people's time priced per prompt (prompt_seconds)
    unknown: int = 0  # calls whose duration is unknown (left out of every sum)

    @property
    def saved_s(self) -> float:
        """Saved by running in parallel: only batches in which two or more calls run."""
        return self.serial_s - self.simulated_s

    @property
    def measured_s(self) -> float:
        return self.serial_s - self.estimated_s


def _share(part: int, whole: int) -> str:
    if not whole or not part:
        return "0 %"
    share = 100 * part / whole
    return "<1 %" if share < 1 else f"{share:.0f} %"


def _tenths(value: float) -> float:
    """Seconds to one place, halves up, as on paper: sums of floats (8.1499999 is 8.15) and
    halves (6.25) are not rounded down."""
    return math.floor(round(value, 6) * 10 + 0.5) / 10


def _s(value: float) -> str:
    return f"{_tenths(value):,.1f} s"


def _estimated_share(t: _Totals) -> str:
    if not t.serial_s or not t.estimated_s:
        return "none"
    share = 100 * t.estimated_s / t.serial_s
    return "<1 %" if share < 1 else f"{share:.0f} %"


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


# HTML pieces shared by both reports: a muted line, a folded section, a row of blocks.
def _muted(text: str) -> str:
    return f"<div style='color:{MUTED};margin:0 0 4px 0'>{_esc(text)}</div>"


def _fold(summary: str, body: str) -> str:
    return (f"<details style='margin:2px 0'><summary style='cursor:pointer'>{_esc(summary)}</summary>"
            f"<div style='margin:2px 0 6px 16px'>{body}</div></details>")


def _side_by_side(*blocks: str) -> str:
    inner = "".join(f"<div style='display:inline-block;vertical-align:top;margin:0 24px 6px 0'>{b}</div>" for b in blocks if b)
    return f"<div>{inner}</div>"


def _page(headline_html: str, body: str) -> str:
    return (f"<div class='nts-replay' style='font-size:12px;line-height:1.4;color:{TEXT}'>"
            f"<div class='nts-replay-headline' style='font-size:13px;margin:0 0 2px 0'>{headline_html}</div>{body}</div>")


def _table_with_fold(table: Table, what: str) -> str:
    """A table's first ``VISIBLE_ROWS`` rows, and the rest folded (never dropped)."""
    if len(table.rows) <= VISIBLE_ROWS:
        return table.to_html()
    rest = table.rows[VISIBLE_ROWS:]
    return table.to_html(table.rows[:VISIBLE_ROWS]) + _fold(f"{len(rest):,} more {what}", table.to_html(rest, caption=False))


class PolicyReport:
    """The replays of one policy, summed up. ``failures`` are sessions whose replay itself
    failed (an engine error), listed with the sessions that had problems."""

    def __init__(self, policy: str, replays: Sequence[SessionReplay], failures: Sequence[tuple[str, str]] = (), *,
                 description: str = "", seconds: float | None = None, engine: str = "") -> None:
        self.policy = policy
        self.replays = list(replays)
        self.failures = list(failures)
        self.description = description
        self.seconds = seconds
        self.engine = engine

    @property
    def calls(self) -> list[CallDecision]:
        return [c for r in self.replays for c in r.calls]

    def totals(self) -> _Totals:
        t = _Totals(sessions=len(self.replays) + len(self.failures))
        for replay in self.replays:
            t.calls += len(replay.calls)
            for call in replay.calls:
                setattr(t, call.outcome, getattr(t, call.outcome) + 1)
            t.batches += replay.batches
            t.parallel_batches += replay.parallel_batches
            t.calls_in_parallel += sum(1 for c in replay.calls if c.parallel)
            t.observed_s += replay.observed_s
            t.serial_s += replay.serial_s
            t.simulated_s += replay.simulated_s
            t.estimated_s += replay.estimated_s
            t.denied_s += replay.denied_s
            t.prompt_s += replay.prompt_s
            t.unknown += sum(1 for c in replay.calls if c.duration is None)
        return t

    def troubled(self) -> int:
        """Sessions replayed only in part, unreadable, or whose replay failed."""
        return sum(1 for r in self.replays if r.status in ("partial", "unreadable")) + len(self.failures)

    def headline(self) -> str:
        """The report in one sentence: sessions, calls, prompts, allows, denials, parallel batches."""
        t = self.totals()
        text = (f"{_plural(t.sessions, 'session')}, {_plural(t.calls, 'call')}: {_plural(t.prompt, 'prompt')} "
                f"({_share(t.prompt, t.calls)}), {t.allow:,} allowed, {t.deny:,} denied; "
                f"{_plural(t.parallel_batches, 'batch', 'batches')} would run calls in parallel")
        if t.serial_s > 0:
            text += (f", saving {_s(t.saved_s)} of {_s(t.serial_s)} of tool time"
                     f" ({_estimated_share(t)} of it estimated: people's waits are not tool time)")
        text += "."
        troubled = self.troubled()
        if troubled:
            text += f" {_plural(troubled, 'session')} could be replayed only in part (see the problems)."
        return text

    # -- tables ------------------------------------------------------------------------------------
    def summary(self) -> Table:
        t = self.totals()
        statuses = Counter(r.status for r in self.replays)
        rows: list[tuple[str, Any]] = [
            ("sessions", t.sessions),
            ("  replayed in full", statuses.get("ok", 0)),
            ("  with problems (partial)", statuses.get("partial", 0)),
            ("  without tool calls", statuses.get("empty", 0)),
            ("  unreadable or failed", statuses.get("unreadable", 0) + len(self.failures)),
            ("tool calls", t.calls),
            ("  allowed without asking", t.allow),
            ("  prompts (a person asked)", t.prompt),
            ("  denied", t.deny),
            ("batches", t.batches),
            ("  in which two or more calls run (parallel)", t.parallel_batches),
            ("  calls that run beside another", t.calls_in_parallel),
            ("time observed in the sessions, people's waits included (s)", round(t.observed_s, 2)),
            ("tool time of the calls that run, one at a time (s)", round(t.serial_s, 2)),
            ("  measured from the transcripts (s)", round(t.measured_s, 2)),
            ("  estimated: a person was or may have been asked (s)", round(t.estimated_s, 2)),
            ("tool time with this policy's batches (s)", round(t.simulated_s, 2)),
            ("saved by running in parallel (s)", round(t.saved_s, 2)),
            ("tool time of the calls that do not run (s)", round(t.denied_s, 2)),
            ("people's time for the prompts, at prompt_seconds each (s)", round(t.prompt_s, 2)),
            ("calls whose duration is unknown (left out)", t.unknown),
        ]
        return Table(f"policy {self.policy}", ("metric", "value"), rows)

    def by_tool(self) -> Table:
        """Every tool called, with its decisions (most prompts first, then most calls)."""
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        for call in self.calls:
            counts[call.tool][call.outcome] += 1
        rows = [(tool, sum(c.values()), c["allow"], c["prompt"], c["deny"]) for tool, c in counts.items()]
        rows.sort(key=lambda r: (-r[3], -r[1], r[0]))
        return Table("decisions by tool", ("tool", "calls", "allow", "prompt", "deny"), rows)

    def by_rule(self, top: int = 10) -> Table:
        counts = Counter((c.decided_by, c.outcome) for c in self.calls)
        rows = [(by, outcome, n) for (by, outcome), n in counts.most_common()]
        rows.sort(key=lambda r: (-r[2], r[0], r[1]))
        return Table("what decided the calls (most first)", ("decided by", "outcome", "calls"), rows[:top])

    def parallelism(self) -> Table:
        sizes: Counter[int] = Counter()
        for replay in self.replays:
            per_batch = Counter(c.batch for c in replay.calls)
            sizes.update(per_batch.values())
        return Table("batches by size", ("calls in the batch", "batches"), sorted(sizes.items()))

    def problems(self, limit: int = 20, *, per_session: bool = False) -> Table:
        """Why sessions were partial, empty, unreadable or failed: similar reasons (the same
        but for their numbers) grouped, each shown by one real example with the number of
        sessions that had it; ``per_session=True`` lists each session's own."""
        rows: list[tuple[str, str, str]] = [(r.path, r.status, p) for r in self.replays for p in r.problems]
        rows += [(path, "failed", why) for path, why in self.failures]
        if per_session:
            return Table("sessions with problems", ("session", "status", "reason"), rows[:limit])
        groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for path, status, reason in rows:
            groups.setdefault((status, re.sub(r"\d+", "N", reason)), []).append((path, reason))
        table = sorted(((found[0][1], status, len({p for p, _ in found}), found[0][0]) for (status, _), found in groups.items()),
                       key=lambda r: (-r[2], r[0]))
        return Table("problems (similar reasons grouped, one example each)", ("reason", "status", "sessions", "example"), table[:limit])

    # -- charts --------------------------------------------------------------------------------------
    def prompts_chart(self, top: int | None = None) -> BarChart:
        """Decisions per tool, every tool (or the first ``top``) in the order of ``by_tool``."""
        rows = self.by_tool().rows[:top]
        return BarChart("decisions per tool", [r[0] for r in rows],
                        {"allow": [r[2] for r in rows], "prompt": [r[3] for r in rows], "deny": [r[4] for r in rows]})

    def parallelism_chart(self) -> BarChart:
        rows = self.parallelism().rows
        return BarChart("batches by number of calls", [f"{size} call{'s' if size > 1 else ''}" for size, _ in rows],
                        {"batches": [n for _, n in rows]})

    def time_chart(self) -> BarChart:
        """Observed (people included), the tool time of the calls that run alone (measured
        and estimated apart), in this policy's batches, and what running in parallel saves."""
        t = self.totals()
        labels = ["observed, people's waits included", "calls that run, one at a time", "in this policy's batches",
                  "saved by running in parallel"]
        return BarChart("time (s): measured from the transcripts, or estimated where a person was asked", labels,
                        {"observed": [t.observed_s, 0, 0, 0], "measured": [0, t.measured_s, 0, 0],
                         "estimated": [0, t.estimated_s, 0, 0], "simulated": [0, 0, t.simulated_s, 0],
                         "saved": [0, 0, 0, t.saved_s]}, " s", legend=False)

    def rules_chart(self, top: int = 8) -> BarChart:
        rows = self.by_rule(top).rows
        series: dict[str, Sequence[float]] = {o: [r[2] if r[1] == o else 0 for r in rows] for o in OUTCOMES}
        return BarChart("rules and checks that fired most", [r[0] for r in rows], series)

    def charts(self) -> list[BarChart]:
        return [self.prompts_chart(), self.parallelism_chart(), self.time_chart(), self.rules_chart()]

    def tables(self) -> list[Table]:
        """In the order the report shows them: decisions by tool first."""
        return [self.by_tool(), self.summary(), self.by_rule(), self.parallelism(), self.problems()]

    def __str__(self) -> str:
        head = [f"{self.policy}: {self.headline()}"]
        if self.description:
            head.append(self.description)
        return "\n\n".join(["\n".join(head)] + [str(t) for t in self.tables()])

    def __repr__(self) -> str:
        t = self.totals()
        return (f"PolicyReport({self.policy!r}: {t.sessions} sessions, {t.calls} calls: {t.allow} allowed, "
                f"{t.prompt} prompts, {t.deny} denied; {t.parallel_batches} parallel batches)")

    def details_html(self) -> str:
        """The folded sections: totals, rules, batch sizes, problems."""
        rules, sizes, problems = self.by_rule(), self.parallelism(), self.problems()
        parts = [_fold("all totals", self.summary().to_html(caption=False)),
                 _fold(f"what decided the calls ({_plural(len(rules), 'rule or check', 'rules and checks')}, most first)",
                       rules.to_html(caption=False)),
                 _fold("batches by size", sizes.to_html(caption=False))]
        if problems.rows:
            parts.append(_fold(f"problems ({_plural(len(problems), 'kind')}, in {_plural(self.troubled(), 'session')} replayed in part)",
                               problems.to_html(caption=False)))
        return "".join(parts)

    def _repr_html_(self) -> str:
        t = self.totals()
        headline = f"<b>{_esc(self.policy)}</b>: {_esc(self.headline())}"
        time = self.time_chart().to_svg(standalone=False) if t.serial_s > 0 else ""
        body = (_muted(self.description) if self.description else "") + _side_by_side(_table_with_fold(self.by_tool(), "tools"), time)
        return _page(headline, body + self.details_html())


def _side_label(role: str, name: str) -> str:
    """A row label that says which policy it is: "current", or "current (team)"."""
    return role if name == role else f"{role} ({name})"


class PolicyComparison:
    """Two policies over the same sessions: what changes, in numbers and call by call."""

    def __init__(self, current: PolicyReport, proposed: PolicyReport) -> None:
        self.current = current
        self.proposed = proposed

    def changed_calls(self) -> int:
        before = {(r.path, c.tool_use_id): c.outcome for r in self.current.replays for c in r.calls}
        return sum(1 for r in self.proposed.replays for c in r.calls
                   if before.get((r.path, c.tool_use_id), c.outcome) != c.outcome)

    def headline(self) -> str:
        a, b = self.current.totals(), self.proposed.totals()

        def change(label: str, x: int, y: int) -> str:
            return f"{label} {x:,} → {y:,}" + (f" ({y - x:+,})" if y != x else "")

        text = (f"{self.current.policy} → {self.proposed.policy}, {_plural(a.sessions, 'session')}, {_plural(a.calls, 'call')}: "
                f"{change('prompts', a.prompt, b.prompt)}, {change('denied', a.deny, b.deny)}, {change('allowed', a.allow, b.allow)}; "
                f"{_plural(self.changed_calls(), 'call')} change decision")
        if a.parallel_batches != b.parallel_batches:
            text += f"; {change('parallel batches', a.parallel_batches, b.parallel_batches)}"
        return text + "."

    def summary(self) -> Table:
        a, b = self.current.totals(), self.proposed.totals()
        rows = []
        for label, name in (("tool calls", "calls"), ("allowed without asking", "allow"), ("prompts", "prompt"),
                            ("denied", "deny"), ("parallel batches (two or more calls run)", "parallel_batches"),
                            ("tool time, one call at a time (s)", "serial_s"), ("  of it estimated (s)", "estimated_s"),
                            ("tool time with the policy's batches (s)", "simulated_s"),
                            ("saved by running in parallel (s)", "saved_s"), ("tool time of calls that do not run (s)", "denied_s"),
                            ("people's time for prompts (s)", "prompt_s")):
            x, y = getattr(a, name), getattr(b, name)
            rows.append((label, round(x, 2), round(y, 2), round(y - x, 2) + 0))  # + 0: no "-0.00"
        return Table(f"{self.current.policy} vs {self.proposed.policy}", ("metric", self.current.policy, self.proposed.policy, "change"), rows)

    def by_tool(self) -> Table:
        a = {r[0]: r for r in self.current.by_tool().rows}
        b = {r[0]: r for r in self.proposed.by_tool().rows}
        rows = [(tool, a.get(tool, [0] * 5)[3], b.get(tool, [0] * 5)[3], a.get(tool, [0] * 5)[4], b.get(tool, [0] * 5)[4])
                for tool in sorted(set(a) | set(b))]
        rows.sort(key=lambda r: (-(abs(r[2] - r[1]) + abs(r[4] - r[3])), r[0]))
        return Table("prompts and denials by tool", ("tool", "prompts now", "prompts proposed", "denials now", "denials proposed"), rows)

    def changes(self, limit: int | None = 20) -> Table:
        """The calls whose outcome differs, grouped by tool, outcomes and what decided them."""
        before = {(r.path, c.tool_use_id): c for r in self.current.replays for c in r.calls}
        groups: dict[tuple[str, str, str, str], list[str]] = {}
        for replay in self.proposed.replays:
            for call in replay.calls:
                old = before.get((replay.path, call.tool_use_id))
                if old is not None and old.outcome != call.outcome:
                    groups.setdefault((call.tool, old.outcome, call.outcome, call.decided_by), []).append(call.summary or call.tool)
        rows = sorted(((tool, a, b, by, len(calls), calls[0]) for (tool, a, b, by), calls in groups.items()), key=lambda r: (-r[4], r[0]))
        return Table("calls whose decision changes", ("tool", self.current.policy, self.proposed.policy, "decided by (proposed)", "calls", "example"),
                     rows[:limit])

    def what_changes(self, limit: int | None = None) -> Table:
        """``changes`` as the report shows it: one "current → proposed" column."""
        rows = [(tool, f"{a} → {b}", n, by, example) for tool, a, b, by, n, example in self.changes(limit).rows]
        return Table(f"what changes, by tool ({self.current.policy} → {self.proposed.policy})",
                     ("tool", f"{self.current.policy} → {self.proposed.policy}", "calls", "decided by (proposed)", "example"), rows)

    def chart(self) -> BarChart:
        """Every call's decision under each policy: one bar each, allow, prompt, deny in that order."""
        a, b = self.current.totals(), self.proposed.totals()
        return BarChart(f"all calls: {self._sides()}",
                        [_side_label("current", self.current.policy), _side_label("proposed", self.proposed.policy)],
                        {o: [getattr(a, o), getattr(b, o)] for o in OUTCOMES})

    def tools_chart(self) -> BarChart:
        """Decisions per tool under each policy: a bar for each, tools in one order (most calls first)."""
        a = {r[0]: r for r in self.current.by_tool().rows}
        b = {r[0]: r for r in self.proposed.by_tool().rows}
        none = ["", 0, 0, 0, 0]
        tools = sorted(set(a) | set(b), key=lambda t: (-max(a.get(t, none)[1], b.get(t, none)[1]), t))
        sides = (_side_label("current", self.current.policy), _side_label("proposed", self.proposed.policy))
        labels: list[str] = []
        groups: list[str] = []
        series: dict[str, list[float]] = {o: [] for o in OUTCOMES}
        for tool in tools:
            for side, rows in zip(sides, (a, b)):
                row = rows.get(tool, none)
                labels.append(side)
                groups.append(tool)
                for i, outcome in enumerate(OUTCOMES):
                    series[outcome].append(row[2 + i])
        return BarChart(f"decisions per tool: {self._sides()}", labels, dict(series), groups=groups)

    def _sides(self) -> str:
        """"current and proposed", with the policies' own names when they have others."""
        return f"{_side_label('current', self.current.policy)} and {_side_label('proposed', self.proposed.policy)}"

    def __str__(self) -> str:
        return "\n\n".join([self.headline()] + [str(t) for t in (self.what_changes(), self.summary(), self.by_tool())])

    def __repr__(self) -> str:
        a, b = self.current.totals(), self.proposed.totals()
        return f"PolicyComparison({self.current.policy!r}: {a.prompt} prompts -> {self.proposed.policy!r}: {b.prompt} prompts)"

    def _repr_html_(self) -> str:
        changes = self.what_changes()
        main = _table_with_fold(changes, "kinds of change") if changes.rows else f"<p>{_esc('No call changes decision.')}</p>"
        body = _side_by_side(main, self.chart().to_svg(standalone=False))
        problems = self.current.problems()
        folds = [_fold("decisions per tool, current and proposed (chart)", self.tools_chart().to_svg(standalone=False)),
                 _fold("all totals, side by side", self.summary().to_html(caption=False)),
                 _fold("prompts and denials by tool", self.by_tool().to_html(caption=False)),
                 _fold("the two policies", "".join(_muted(r.description or r.policy) for r in (self.current, self.proposed)))]
        if problems.rows:
            folds.append(_fold(f"problems ({_plural(len(problems), 'kind')}, in {_plural(self.current.troubled(), 'session')} "
                               "replayed in part)", problems.to_html(caption=False)))
        head, _, rest = self.headline().partition(", ")
        return _page(f"<b>{_esc(head)}</b>, {_esc(rest)}", body + "".join(folds))
