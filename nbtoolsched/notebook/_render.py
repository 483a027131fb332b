"""Pure rendering: call rows, inputs, reasons, diffs, a timeline, as HTML or plain text.

No widgets here. Every function is a pure function of its input, so the same state
always renders the same string (which is also what keeps widget traffic low: setting
an equal value sends nothing).

Colours come from JupyterLab's theme variables (``--jp-*``) with light fallbacks for
places without them (GitHub, a bare browser). Text always uses the theme's own font
colours, so it stays readable in light and dark themes; state colours only tint
borders, markers and translucent backgrounds.
"""

from __future__ import annotations

import difflib
import html
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

__all__ = [
    "BORDER",
    "BOX",
    "FG",
    "FG2",
    "FINAL_STATES",
    "RowView",
    "STATE_LABELS",
    "badge_html",
    "clean_error",
    "counts_text",
    "elapsed_text",
    "input_html",
    "input_text",
    "nice_step",
    "progress_text",
    "result_preview",
    "row_text",
    "plural",
    "rows_html",
    "progress_view",
    "result_summary",
    "ProgressView",
    "short_input",
    "time_text",
    "timeline_html",
]

# -- theme ---------------------------------------------------------------------------------------
FG = "var(--jp-content-font-color1, #1f2328)"
FG2 = "var(--jp-content-font-color2, #424a53)"
BORDER = "var(--jp-border-color2, #d0d7de)"
BOX = "var(--jp-layout-color2, #eef0f3)"
_MONO = "var(--jp-code-font-family, monospace)"
_ACCENTS = {
    "grey": "var(--jp-border-color1, #8c959f)",
    "blue": "var(--jp-brand-color1, #1976d2)",
    "green": "var(--jp-success-color1, #2e7d32)",
    "red": "var(--jp-error-color1, #d32f2f)",
    "orange": "var(--jp-warn-color1, #ef6c00)",
    "yellow": "var(--jp-warn-color2, #ffb74d)",
    "purple": "#8e44ad",
}
# Translucent tints work over a light and a dark background alike (the text keeps FG).

STATE_LABELS: dict[str, tuple[str, str]] = {  # state -> (label, accent)
    "queued": ("queued", _ACCENTS["grey"]),
    "awaiting_approval": ("awaiting approval", _ACCENTS["yellow"]),
    "executing": ("running", _ACCENTS["blue"]),
    "completed": ("completed", _ACCENTS["green"]),
    "cancelled": ("cancelled", _ACCENTS["grey"]),
    "interrupted": ("interrupted", _ACCENTS["grey"]),
    "skipped": ("skipped", _ACCENTS["grey"]),
    "error": ("error", _ACCENTS["red"]),
    "denied": ("denied", _ACCENTS["orange"]),
    "deferred": ("deferred", _ACCENTS["purple"]),
}
FINAL_STATES = frozenset({"completed", "cancelled", "error", "denied", "deferred"})
# One grid for every row (live rows, the record's, the header), so rows line up anywhere.
_GRID = "2.4em 6.5em minmax(0,1fr) 3.8em 11.2em 10em 24%"
_HEADINGS = (
    ("#", "the call's place in the cell"),
    ("tool", ""),
    ("input", "what the call was given (hover for all of it)"),
    ("step", "calls in one step run side by side; steps run one after another"),
    ("status", ""),
    ("time", "waited = for a person's approval; ran = the tool's own work"),
    ("details", "progress, what it waits for, or its result in one line (click a finished row for all of it)"),
)
_CELL = "padding:1px 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0"
_ROW = f"display:grid;grid-template-columns:{_GRID};align-items:center;font-size:12px;line-height:17px;color:{FG};margin:0"

@dataclass(frozen=True, slots=True)
class RowView:
    """Everything one panel row shows, already reduced to what is displayed."""

    number: int
    tool_use_id: str
    name: str
    input: Any
    batch: int
    state: str  # the scheduler's status (data-state in the HTML)
    time: str = ""
    progress: str = ""  # the latest progress as one short line ("40% · 6 s left", a shell line)
    note: str = ""  # why it ended so, or what it waits for
    label: str = ""  # what the badge says when it differs from the state (interrupted, skipped)
    extra: Mapping[str, Any] = field(default_factory=dict)
    fraction: float | None = None  # progress as a share of the whole, when the tool says it
    summary: str = ""  # a finished call's result in one line ("8 lines", "3 files", its first line)

    @classmethod
    def from_state(cls, number: int, state: Any, note: str = "", label: str = "") -> "RowView":
        shown = progress_view(state.last_progress)
        done = state.outcome is not None and state.status == "completed"
        summary = result_summary(state.tool_name, state.outcome.result) if done else ""
        return cls(number, state.tool_use_id, state.tool_name, state.input, state.batch, state.status,
                   time_text(state, label), shown.text if shown else "", note, label,
                   fraction=shown.fraction if shown else None, summary=summary)

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def shown_state(self) -> str:
        """The one word this row's state is called everywhere (badge, header counts, text)."""
        return self.label or STATE_LABELS.get(self.state, (self.state, ""))[0]


# -- inputs ----------------------------------------------------------------------------------------
def short_input(data: Any, limit: int = 70) -> str:
    """``file_path=README.md, limit=3``: the input on one short line (plain text views)."""
    if isinstance(data, dict):
        text = ", ".join(f"{k}={_scalar(v)}" for k, v in data.items())
    else:
        text = _scalar(data)
    return _cut(" ".join(text.split()), limit)


def input_text(data: Any) -> str:
    """The whole input, one ``key: value`` per line; multi-line strings keep their lines."""
    if not isinstance(data, dict):
        return _scalar(data)
    lines = []
    for key, value in data.items():
        text = _scalar(value)
        if "\n" in text:
            lines.append(f"{key}:\n" + "\n".join("  " + line for line in text.split("\n")))
        else:
            lines.append(f"{key}: {text}")
    return "\n".join(lines)


def input_html(data: Any, limit: int | None = 400) -> str:
    """The input wrapped with its line breaks kept; past ``limit`` characters the rest folds
    into a ``<details>`` that opens without a kernel (``limit=None``: all of it, always)."""
    text = input_text(data)
    style = f"margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:{_MONO};font-size:11.5px;color:{FG}"
    if limit is None or len(text) <= limit:
        return f'<pre class="nts-input" style="{style}">{html.escape(text)}</pre>'
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return (f'<pre class="nts-input" style="{style}">{html.escape(text[:cut])}</pre>'
            f'<details style="color:{FG2}"><summary style="cursor:pointer">show all ({len(text):,} characters)</summary>'
            f'<pre class="nts-input-rest" style="{style}">{html.escape(text[cut:])}</pre></details>')


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many``: the plural when it is not ``noun + "s"``)."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- times and progress ------------------------------------------------------------------------
def elapsed_text(seconds: float | None, final: bool) -> str:
    """Whole seconds while running (fewer updates), tenths once finished."""
    if seconds is None:
        return ""
    return f"{seconds:.1f} s" if final else f"{int(seconds)} s"


# Calls that end without their tool having done its work show no "ran" time.
_NEVER_RAN = frozenset({"denied", "deferred", "skipped"})


def time_text(state: Any, label: str = "") -> str:
    """``waited 3.2 s · ran 0.1 s``: the wait for a person apart from the tool's own work;
    nothing about running for a call that never ran (denied, deferred, skipped)."""
    status = state.status
    final = status in FINAL_STATES
    if status == "awaiting_approval" and state.asked_at is not None:
        import time

        return f"waiting {elapsed_text(time.monotonic() - state.asked_at, False)}"
    parts = []
    waited = state.waited
    if waited is not None and waited >= 0.05:
        parts.append(f"waited {elapsed_text(waited, True)}")
    if final:
        ran = state.ran
        if ran is not None and state.started_at is not None and status not in _NEVER_RAN and label not in _NEVER_RAN:
            parts.append(f"ran {elapsed_text(max(ran, 0.0), True)}")
    elif status == "executing" and state.started_at is not None:
        import time

        since = state.answered_at if state.answered_at is not None else state.started_at
        parts.append(f"ran {elapsed_text(time.monotonic() - since, False)}")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class ProgressView:
    """A progress report reduced to what a row shows: a short line, and a share when known."""

    text: str
    fraction: float | None = None  # 0..1


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _left_text(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{math.ceil(seconds)} s left"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s left"


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"


def progress_view(data: Any, limit: int = 60) -> ProgressView | None:
    """The latest progress report as one line, and a share of the whole when it says one:
    ``elapsed``/``remaining`` (Sleep), ``progress``/``total`` (MCP), ``percent``; a shell
    line or a message otherwise; compact JSON only for shapes nothing here knows."""
    if data is None:
        return None
    if isinstance(data, str):
        lines = [line for line in data.splitlines() if line.strip()]
        return ProgressView(_cut(lines[-1].strip() if lines else "", limit))
    if not isinstance(data, dict):
        return ProgressView(_cut(_scalar(data), limit))
    message = next((data[k].strip() for k in ("line", "message", "text", "status")
                    if isinstance(data.get(k), str) and data[k].strip()), "")
    elapsed, remaining = _number(data.get("elapsed")), _number(data.get("remaining"))
    done, total = _number(data.get("progress")), _number(data.get("total"))
    percent, size = _number(data.get("percent")), _number(data.get("bytes"))
    fraction: float | None = None
    parts: list[str] = []
    if elapsed is not None and remaining is not None and elapsed + remaining > 0:
        fraction = elapsed / (elapsed + remaining)
        parts = [f"{min(max(fraction, 0.0), 1.0):.0%}", _left_text(remaining)]
    elif done is not None and total is not None and total > 0:
        fraction = done / total
        parts = [f"{min(max(fraction, 0.0), 1.0):.0%}", f"{done:g}/{total:g}"]
    elif percent is not None:
        fraction = percent / 100
        parts = [f"{min(max(fraction, 0.0), 1.0):.0%}"]
    elif size is not None:
        parts = [f"{_size(size)} received"]
    if message:
        parts.append(message)
    if not parts:
        return ProgressView(_cut(_scalar(data), limit))
    return ProgressView(_cut(" · ".join(parts), limit), None if fraction is None else min(max(fraction, 0.0), 1.0))


def progress_text(data: Any, limit: int = 60) -> str:
    """The latest progress report as one short line (see ``progress_view``)."""
    shown = progress_view(data, limit)
    return shown.text if shown is not None else ""


# A finished call's result counted in the unit its tool returns, one row per tool; any other
# tool's result is its first line, with the count of the lines after it.
_RESULT_UNITS: dict[str, tuple[str, str]] = {"Read": ("line", "lines"), "Glob": ("file", "files"), "LS": ("entry", "entries")}


def result_summary(tool_name: str, result: Any, limit: int = 60) -> str:
    """A finished call's result in one line: ``8 lines``, ``3 files``, or its first line."""
    text = getattr(result, "text", None)
    text = text() if callable(text) else text
    if not isinstance(text, str):
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "no output"
    unit = _RESULT_UNITS.get(tool_name)
    if unit is not None and not lines[0].startswith("No "):
        count = len(lines)
        return f"{count} {unit[0] if count == 1 else unit[1]}"
    first = _cut(lines[0].strip(), limit)
    return first if len(lines) == 1 else f"{first} (+{len(lines) - 1} lines)"



_ERROR_TAGS = re.compile(r"</?tool_use_error>")


def clean_error(text: str) -> str:
    """A result's text without the model-facing ``<tool_use_error>`` tags."""
    return _ERROR_TAGS.sub("", text).strip()


# -- rows ----------------------------------------------------------------------------------------------
def badge_html(state: str, label: str = "") -> str:
    shown, accent = STATE_LABELS.get(state, (state, _ACCENTS["grey"]))
    shown = label or shown
    return (f'<span class="nts-badge nts-{html.escape(state)}" style="display:inline-block;padding:0 6px;border-radius:3px;'
            f'font-size:11px;line-height:14px;color:{FG};border:1px solid {accent};border-left:5px solid {accent}">'
            f"{html.escape(shown)}</span>")


def _details_html(row: RowView) -> str:
    """The details cell: a progress bar or line while running, what a queued call waits for,
    a finished call's result in one line (why it ended otherwise goes on its own line)."""
    if row.state == "executing" and row.fraction is not None:
        width = f"{row.fraction * 100:.0f}%"
        bar = (f'<span class="nts-bar" style="display:inline-block;vertical-align:middle;width:5em;height:8px;margin-right:6px;'
               f'border:1px solid {BORDER};border-radius:2px"><span style="display:block;height:100%;width:{width};'
               f'background:{_ACCENTS["blue"]}"></span></span>')
        return f'<span class="nts-progress" style="color:{FG2}">{bar}{html.escape(row.progress)}</span>'
    if row.state == "executing":
        return f'<span class="nts-progress" style="color:{FG2}">{html.escape(row.progress)}</span>'
    if not row.final:
        return f'<span style="color:{FG2}">{html.escape(row.note)}</span>'
    if row.state == "completed" and row.summary:
        return f'<span class="nts-result-line" style="color:{FG2}">{html.escape(row.summary)}</span>'
    return ""


def _cells_html(row: RowView) -> str:
    cells = (
        f"{row.number}",
        f"<b>{html.escape(row.name)}</b>",
        f'<span style="font-family:{_MONO};font-size:11.5px">{html.escape(short_input(row.input, 200))}</span>',
        f"{row.batch}" if row.batch else "",
        badge_html(row.state, row.label),
        html.escape(row.time),
        _details_html(row),
    )
    return "".join(f'<span style="{_CELL}">{c}</span>' for c in cells)


def _why_groups(rows: Sequence[RowView]) -> list[tuple[list[RowView], str]]:
    """Rows in order, each run of neighbours that ended for the same reason as one group:
    ten calls skipped by one denial say why once."""
    groups: list[tuple[list[RowView], str]] = []
    for row in rows:
        why = row.note if row.final and row.state != "completed" else ""
        if groups and why and groups[-1][1] == why:
            groups[-1][0].append(row)
        else:
            groups.append(([row], why))
    return groups


def _why_html(group: list[RowView], why: str) -> str:
    who = f"#{group[0].number}–#{group[-1].number}: " if len(group) > 1 else ""
    return (f'<div class="nts-why" data-id="{html.escape(group[-1].tool_use_id)}" style="{_ROW};color:{FG2}">'
            f'<span></span><span style="grid-column:2 / -1;padding:0 6px;white-space:normal;overflow-wrap:anywhere">'
            f"↳ {html.escape(who + why)}</span></div>")


def rows_html(rows: Sequence[RowView], *, header: bool = False, results: Mapping[str, str] | None = None) -> str:
    """Rows, one line each, on one grid. ``results`` (the record: tool_use_id -> the result
    as HTML) makes each finished row a ``<details>`` that opens its result in one click,
    with no kernel; a live panel's rows open theirs through the panel instead."""
    head = ""
    if header:
        ths = "".join(f'<span title="{html.escape(tip)}" style="{_CELL};font-weight:600;color:{FG2}">{html.escape(name)}</span>'
                      for name, tip in _HEADINGS)
        head = f'<div class="nts-head" style="{_ROW};border-bottom:1px solid {BORDER}">{ths}</div>'
    body = []
    for group, why in _why_groups(rows):
        for row in group:
            attrs = (f'class="nts-row" data-id="{html.escape(row.tool_use_id)}" data-state="{html.escape(row.state)}" '
                     f'title="{html.escape(input_text(row.input)[:1000])}"')
            shown = results.get(row.tool_use_id) if results is not None else None
            if shown is not None:
                body.append(f'<details class="nts-call"><summary {attrs} style="{_ROW};cursor:pointer">{_cells_html(row)}</summary>'
                            f'<div style="margin-left:2.6em">{shown}</div></details>')
            else:
                pointer = ";cursor:pointer" if row.final else ""
                body.append(f'<div {attrs} style="{_ROW}{pointer}">{_cells_html(row)}</div>')
        if why:
            body.append(_why_html(group, why))
    return f'<div class="nts-rows" style="margin:0;color:{FG}">{head}{"".join(body)}</div>'


def row_text(row: RowView) -> str:
    batch = f"b{row.batch}" if row.batch else "--"
    extra = f"  {row.progress}" if row.progress else ""
    line = f"{row.number:>2}. {row.name} [{batch}] {row.shown_state}  {short_input(row.input)}{extra}"
    if row.final and row.note and row.state != "completed":
        line += f"\n      -> {row.note}"
    return line


def counts_text(states: Iterable[str]) -> str:
    """``2 completed, 1 denied, 7 skipped``: the words the rows' badges say (pass
    ``RowView.shown_state``), in the order states come in."""
    counts: dict[str, int] = {}
    for state in states:
        shown = STATE_LABELS[state][0] if state in STATE_LABELS else state
        counts[shown] = counts.get(shown, 0) + 1
    order = [label for label, _ in STATE_LABELS.values()]
    ranked = sorted(counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    return ", ".join(f"{n} {s}" for s, n in ranked)


# -- results and diffs ---------------------------------------------------------------------------------
def result_preview(result: Any, limit: int = 2000) -> str:
    """A tool_result's text, cut, as escaped HTML in a scrollable box (errors get a red edge)."""
    text = getattr(result, "text", None)
    text = text() if callable(text) else text
    if not isinstance(text, str):
        text = str(result)
    error = bool(getattr(result, "is_error", False))
    if error:
        text = clean_error(text)
    shown = text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    edge = _ACCENTS["red"] if error else BORDER
    return (f'<pre class="nts-result{" nts-result-error" if error else ""}" style="max-height:16em;overflow:auto;margin:2px 0;'
            f'padding:4px 6px;background:{BOX};color:{FG};border-left:4px solid {edge};white-space:pre-wrap;'
            f'overflow-wrap:anywhere;font-size:12px">{html.escape(shown)}</pre>')


def unified(before: str | None, after: str | None, label: str, max_lines: int = 400) -> str:
    """The unified diff between two texts (None: the file does not exist on that side)."""
    old, new = (before or "").splitlines(), (after or "").splitlines()
    lines = list(difflib.unified_diff(old, new, "/dev/null" if before is None else f"a/{label}",
                                      "/dev/null" if after is None else f"b/{label}", n=3, lineterm=""))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… ({len(lines) - max_lines} more diff lines)"]
    return "\n".join(lines)


# -- the timeline ---------------------------------------------------------------------------------------
def nice_step(total: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks."""
    raw = max(total, 1e-6) / max(ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _tick_label(seconds: float, step: float) -> str:
    if step >= 1:
        return f"{seconds:g} s"
    if step >= 0.001:
        return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"
    return f"{seconds * 1e6:.0f} µs"


def timeline_html(states: Sequence[Any], labels: Sequence[str] | None = None) -> str:
    """Bars per call against time (waits for a person drawn apart), round ticks, a legend."""
    spans = [(i, s) for i, s in enumerate(states) if s.started_at is not None or s.asked_at is not None]
    if not spans:
        return f'<div class="nts-timeline" style="font-size:12px;color:{FG2}">no call has started yet</div>'
    times = [t for _, s in spans for t in (s.queued_at, s.started_at, s.asked_at, s.finished_at) if t is not None]
    t0 = min(times)
    end = max(times)
    step = nice_step(end - t0)
    total = max(step * math.ceil((end - t0) / step - 1e-9), step)

    def pct(t: float) -> float:
        return max(0.0, min(100.0, (t - t0) / total * 100))

    rows = []
    for index, state in spans:
        name = labels[index] if labels is not None else state.tool_name
        bars = []
        if state.started_at is not None:
            stop = state.finished_at if state.finished_at is not None else end
            accent = STATE_LABELS.get(state.status, ("", _ACCENTS["blue"]))[1]
            bars.append(_bar(pct(state.started_at), pct(stop), accent, f"{state.status}"))
        if state.asked_at is not None:
            stop = state.answered_at if state.answered_at is not None else (state.finished_at or end)
            bars.append(_bar(pct(state.asked_at), pct(stop), _ACCENTS["yellow"], "waiting for approval", hatched=True))
        rows.append(f'<div style="display:flex;align-items:center;height:18px"><div style="width:12em;flex:none;overflow:hidden;'
                    f'text-overflow:ellipsis;white-space:nowrap;color:{FG}">{html.escape(name)}</div>'
                    f'<div style="position:relative;flex:1;height:12px;border-left:1px solid {BORDER}">{"".join(bars)}</div></div>')
    count = int(round(total / step))
    ticks = "".join(
        f'<span style="position:absolute;left:{k / count * 100:.2f}%;transform:translateX(-50%);color:{FG2}">'
        f"{html.escape(_tick_label(k * step, step))}</span>" for k in range(count + 1))
    axis = (f'<div style="display:flex"><div style="width:12em;flex:none"></div><div style="position:relative;flex:1;height:14px;'
            f'border-top:1px solid {BORDER}">{ticks}</div></div>')
    legend_items = [("running / completed", _ACCENTS["green"], False), ("waiting for approval", _ACCENTS["yellow"], True),
                    ("error", _ACCENTS["red"], False), ("denied", _ACCENTS["orange"], False), ("cancelled", _ACCENTS["grey"], False)]
    legend = "".join(f'<span style="margin-right:12px;white-space:nowrap"><span style="display:inline-block;width:14px;height:9px;'
                     f'vertical-align:middle;{_fill(colour, hatched)}"></span> {html.escape(text)}</span>'
                     for text, colour, hatched in legend_items)
    return (f'<div class="nts-timeline" style="font-size:11px;color:{FG};padding:4px 0">{"".join(rows)}{axis}'
            f'<div class="nts-legend" style="margin-top:6px;color:{FG2}">{legend}</div></div>')


def _fill(colour: str, hatched: bool) -> str:
    if hatched:
        return f"background:repeating-linear-gradient(45deg,{colour} 0 3px,transparent 3px 6px);border:1px solid {colour}"
    return f"background:{colour}"


def _bar(start: float, stop: float, colour: str, title: str, hatched: bool = False) -> str:
    width = max(stop - start, 0.6)
    return (f'<div title="{html.escape(title)}" style="position:absolute;left:{start:.2f}%;width:{width:.2f}%;top:1px;bottom:1px;'
            f'border-radius:2px;{_fill(colour, hatched)}"></div>')
