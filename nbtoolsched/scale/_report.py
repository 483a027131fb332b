"""What a policy simulation found, as tables and pictures that need no plotting library.

``PolicyReport`` sums up the replays of one policy: prompts, denials and automatic
allows by tool and by the rule (or mode, or check) that decided them, how many batches
ran calls in parallel, and the time the batches save. ``PolicyComparison`` puts two
reports side by side ("current" and "proposed") and lists the calls whose fate changes.
Tables render as HTML in Jupyter and as aligned text elsewhere (``to_dicts`` and
``to_pandas`` for more); charts are SVG bar charts.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ._replay import CallDecision, SessionReplay

__all__ = ["Table", "BarChart", "PolicyReport", "PolicyComparison"]

OUTCOMES = ("allow", "prompt", "deny")
COLORS = {"allow": "#43a047", "prompt": "#fb8c00", "deny": "#e53935", "observed": "#90a4ae", "serial": "#5c6bc0",
          "simulated": "#26a69a", "batches": "#7e57c2", "current": "#78909c", "proposed": "#1e88e5"}


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

    def __str__(self) -> str:
        cells = [self.columns] + [[_fmt(v) for v in row] for row in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        lines = [self.title] if self.title else []
        for n, row in enumerate(cells):
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        if not self.rows:
            lines.append("(none)")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:{'left' if i == 0 else 'right'}'>{html.escape(c)}</th>" for i, c in enumerate(self.columns))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{html.escape(_fmt(v))}</td>" for i, v in enumerate(row)) + "</tr>"
            for row in self.rows
        ) or f"<tr><td colspan={len(self.columns)}>(none)</td></tr>"
        caption = f"<caption style='text-align:left;font-weight:bold'>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table style='font-size:12px'>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


class BarChart:
    """Horizontal bars, one per label, each stacked from named series (SVG)."""

    def __init__(self, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str = "") -> None:
        self.title = title
        self.labels = list(labels)
        self.series = {name: list(values) for name, values in series.items()}
        self.unit = unit

    def to_svg(self, width: int = 560) -> str:
        row, label_w, top = 20, min(220, 8 + 7 * max((len(label) for label in self.labels), default=4)), 34
        height = top + row * max(1, len(self.labels)) + 10
        totals = [sum(values[i] for values in self.series.values()) for i in range(len(self.labels))]
        scale = (width - label_w - 70) / (max(totals) if totals and max(totals) > 0 else 1)
        parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-family='sans-serif' font-size='11'>",
                 f"<text x='4' y='14' font-weight='bold'>{html.escape(self.title)}</text>"]
        x = 4
        for name in self.series:
            parts.append(f"<rect x='{x}' y='20' width='10' height='10' fill='{COLORS.get(name, '#888')}'/>"
                         f"<text x='{x + 14}' y='29'>{html.escape(name)}</text>")
            x += 24 + 7 * len(name)
        for i, label in enumerate(self.labels):
            y = top + i * row
            parts.append(f"<text x='{label_w - 6}' y='{y + 13}' text-anchor='end'>{html.escape(label[:30])}</text>")
            left = float(label_w)
            for name, values in self.series.items():
                w = values[i] * scale
                if w > 0:
                    parts.append(f"<rect x='{left:.1f}' y='{y + 3}' width='{w:.1f}' height='{row - 6}' fill='{COLORS.get(name, '#888')}'>"
                                 f"<title>{html.escape(f'{name}: {_fmt(values[i])}{self.unit}')}</title></rect>")
                left += w
            parts.append(f"<text x='{left + 4:.1f}' y='{y + 13}'>{html.escape(_fmt(totals[i]))}{html.escape(self.unit)}</text>")
        parts.append("</svg>")
        return "".join(parts)

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
    parallel_batches: int = 0
    calls_in_parallel: int = 0
    observed_s: float = 0.0
    serial_s: float = 0.0
    simulated_s: float = 0.0


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
        return t

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
            ("  parallel batches", t.parallel_batches),
            ("  calls in parallel batches", t.calls_in_parallel),
            ("time observed in the sessions (s)", round(t.observed_s, 2)),
            ("time, every call alone (s)", round(t.serial_s, 2)),
            ("time with this policy's batches (s)", round(t.simulated_s, 2)),
            ("time saved by parallel batches (s)", round(t.serial_s - t.simulated_s, 2)),
        ]
        return Table(f"policy {self.policy}", ("metric", "value"), rows)

    def by_tool(self) -> Table:
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
        """Why sessions were partial, empty, unreadable or failed: grouped by reason (numbers
        folded), with how many sessions and one example; ``per_session=True`` lists each."""
        rows: list[tuple[str, str, str]] = [(r.path, r.status, p) for r in self.replays for p in r.problems]
        rows += [(path, "failed", why) for path, why in self.failures]
        if per_session:
            return Table("sessions with problems", ("session", "status", "reason"), rows[:limit])
        groups: dict[tuple[str, str], list[str]] = {}
        for path, status, reason in rows:
            groups.setdefault((status, re.sub(r"\d+", "N", reason)), []).append(path)
        table = sorted(((reason, status, len(set(paths)), paths[0]) for (status, reason), paths in groups.items()),
                       key=lambda r: (-r[2], r[0]))
        return Table("problems (N: a number)", ("reason", "status", "sessions", "example"), table[:limit])

    # -- charts --------------------------------------------------------------------------------------
    def prompts_chart(self, top: int = 12) -> BarChart:
        table = self.by_tool()
        rows = table.rows[:top]
        return BarChart("decisions per tool", [r[0] for r in rows],
                        {"allow": [r[2] for r in rows], "prompt": [r[3] for r in rows], "deny": [r[4] for r in rows]})

    def parallelism_chart(self) -> BarChart:
        rows = self.parallelism().rows
        return BarChart("batches by number of calls", [f"{size} call{'s' if size > 1 else ''}" for size, _ in rows],
                        {"batches": [n for _, n in rows]})

    def time_chart(self) -> BarChart:
        t = self.totals()
        return BarChart("tool time (estimated from the transcripts)", ["observed", "every call alone", "this policy"],
                        {"observed": [t.observed_s, 0, 0], "serial": [0, t.serial_s, 0], "simulated": [0, 0, t.simulated_s]}, " s")

    def rules_chart(self, top: int = 8) -> BarChart:
        rows = self.by_rule(top).rows
        series: dict[str, Sequence[float]] = {o: [float(r[2]) if r[1] == o else 0.0 for r in rows] for o in OUTCOMES}
        return BarChart("rules and checks that fired most", [r[0] for r in rows], series)

    def charts(self) -> list[BarChart]:
        return [self.prompts_chart(), self.parallelism_chart(), self.time_chart(), self.rules_chart()]

    def tables(self) -> list[Table]:
        return [self.summary(), self.by_tool(), self.by_rule(), self.parallelism(), self.problems()]

    def __str__(self) -> str:
        head = self.description or f"policy {self.policy}"
        return "\n\n".join([head] + [str(t) for t in self.tables()])

    def __repr__(self) -> str:
        t = self.totals()
        return (f"PolicyReport({self.policy!r}: {t.sessions} sessions, {t.calls} calls: {t.allow} allowed, "
                f"{t.prompt} prompts, {t.deny} denied; {t.parallel_batches} parallel batches)")

    def _repr_html_(self) -> str:
        tables = "".join(f"<div style='display:inline-block;vertical-align:top;margin:0 18px 12px 0'>{t._repr_html_()}</div>"
                         for t in self.tables())
        charts = "".join(f"<div style='display:inline-block;vertical-align:top'>{c.to_svg()}</div>" for c in self.charts())
        head = html.escape(self.description or f"policy {self.policy}")
        return f"<div><p><b>{head}</b></p>{tables}<div>{charts}</div></div>"


class PolicyComparison:
    """Two policies over the same sessions: what changes, in numbers and call by call."""

    def __init__(self, current: PolicyReport, proposed: PolicyReport) -> None:
        self.current = current
        self.proposed = proposed

    def summary(self) -> Table:
        a, b = self.current.totals(), self.proposed.totals()
        rows = []
        for label, name in (("tool calls", "calls"), ("allowed without asking", "allow"), ("prompts", "prompt"),
                            ("denied", "deny"), ("parallel batches", "parallel_batches"), ("simulated time (s)", "simulated_s")):
            x, y = getattr(a, name), getattr(b, name)
            rows.append((label, round(x, 2), round(y, 2), round(y - x, 2)))
        return Table(f"{self.current.policy} vs {self.proposed.policy}", ("metric", self.current.policy, self.proposed.policy, "change"), rows)

    def by_tool(self) -> Table:
        a = {r[0]: r for r in self.current.by_tool().rows}
        b = {r[0]: r for r in self.proposed.by_tool().rows}
        rows = [(tool, a.get(tool, [0] * 5)[3], b.get(tool, [0] * 5)[3], a.get(tool, [0] * 5)[4], b.get(tool, [0] * 5)[4])
                for tool in sorted(set(a) | set(b))]
        rows.sort(key=lambda r: (-(abs(r[2] - r[1]) + abs(r[4] - r[3])), r[0]))
        return Table("prompts and denials by tool", ("tool", "prompts now", "prompts proposed", "denials now", "denials proposed"), rows)

    def changes(self, limit: int = 20) -> Table:
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

    def chart(self) -> BarChart:
        a, b = self.current.totals(), self.proposed.totals()
        return BarChart("decisions, side by side", [self.current.policy, self.proposed.policy],
                        {o: [getattr(a, o), getattr(b, o)] for o in OUTCOMES})

    def __str__(self) -> str:
        return "\n\n".join(str(t) for t in (self.summary(), self.by_tool(), self.changes()))

    def __repr__(self) -> str:
        a, b = self.current.totals(), self.proposed.totals()
        return f"PolicyComparison({self.current.policy!r}: {a.prompt} prompts -> {self.proposed.policy!r}: {b.prompt} prompts)"

    def _repr_html_(self) -> str:
        tables = "".join(f"<div style='display:inline-block;vertical-align:top;margin:0 18px 12px 0'>{t._repr_html_()}</div>"
                         for t in (self.summary(), self.by_tool(), self.changes()))
        charts = "".join(f"<div style='display:inline-block;vertical-align:top'>{c.to_svg()}</div>"
                         for c in (self.chart(), self.current.prompts_chart(), self.proposed.prompts_chart()))
        return f"<div>{tables}<div>{charts}</div></div>"
