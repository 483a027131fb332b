"""Pure rendering: a call row, a table of rows, badges and diffs as HTML or plain text.

No widgets here. Every function is a pure function of its input, so the same state
always renders the same string (which is also what keeps widget traffic low: setting
an equal value sends nothing).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

__all__ = [
    "RowView",
    "STATE_LABELS",
    "badge_html",
    "counts_text",
    "diff_html",
    "elapsed_text",
    "progress_text",
    "result_preview",
    "row_text",
    "rows_table_html",
    "short_input",
]

STATE_LABELS = {
    "queued": ("queued", "#6b7280", "#f3f4f6"),
    "awaiting_approval": ("awaiting approval", "#854d0e", "#fef9c3"),
    "executing": ("executing", "#1d4ed8", "#dbeafe"),
    "completed": ("completed", "#166534", "#dcfce7"),
    "cancelled": ("cancelled", "#4b5563", "#e5e7eb"),
    "error": ("error", "#991b1b", "#fee2e2"),
    "denied": ("denied", "#9a3412", "#ffedd5"),
    "deferred": ("deferred", "#6b21a8", "#f3e8ff"),
}
FINAL_STATES = frozenset({"completed", "cancelled", "error", "denied", "deferred"})
_COLUMNS = ("2.5em", "9em", "auto", "3.5em", "10em", "4.5em", "30%")
_CELL = "padding:2px 6px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:top"


@dataclass(frozen=True, slots=True)
class RowView:
    """Everything one panel row shows, already reduced to what is displayed."""

    number: int
    tool_use_id: str
    name: str
    input: str
    batch: int
    state: str
    elapsed: str
    progress: str

    @classmethod
    def from_state(cls, number: int, state: Any) -> "RowView":
        return cls(number, state.tool_use_id, state.tool_name, short_input(state.input), state.batch, state.status,
                   elapsed_text(state.elapsed, state.status in FINAL_STATES), progress_text(state.last_progress))


def short_input(data: Any, limit: int = 70) -> str:
    """``file_path=README.md, limit=3``: the input on one short line."""
    if isinstance(data, dict):
        text = ", ".join(f"{k}={_scalar(v)}" for k, v in data.items())
    else:
        text = _scalar(data)
    return _cut(" ".join(text.split()), limit)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def elapsed_text(seconds: float | None, final: bool) -> str:
    """Whole seconds while running (fewer updates), tenths once finished."""
    if seconds is None:
        return ""
    return f"{seconds:.1f} s" if final else f"{int(seconds)} s"


def progress_text(data: Any, limit: int = 90) -> str:
    """The latest progress report as one line: a shell line, a message, or compact JSON."""
    if data is None:
        return ""
    if isinstance(data, dict):
        for key in ("line", "message", "text", "status"):
            if isinstance(data.get(key), str):
                return _cut(data[key].strip(), limit)
    if isinstance(data, str):
        lines = [line for line in data.splitlines() if line.strip()]
        return _cut(lines[-1].strip() if lines else "", limit)
    return _cut(_scalar(data), limit)


def badge_html(state: str) -> str:
    label, fg, bg = STATE_LABELS.get(state, (state, "#374151", "#f3f4f6"))
    return (f'<span class="nts-badge nts-{html.escape(state)}" style="display:inline-block;padding:0 6px;border-radius:8px;'
            f'font-size:11px;color:{fg};background:{bg};border:1px solid {fg}33">{html.escape(label)}</span>')


def _row_html(row: RowView) -> str:
    cells = (
        f"{row.number}",
        f"<b>{html.escape(row.name)}</b>",
        f'<code title="{html.escape(row.input)}">{html.escape(row.input)}</code>',
        f"b{row.batch}" if row.batch else "",
        badge_html(row.state),
        html.escape(row.elapsed),
        f'<span style="color:#6b7280">{html.escape(row.progress)}</span>',
    )
    tds = "".join(f'<td style="{_CELL}">{c}</td>' for c in cells)
    return f'<tr class="nts-row" data-id="{html.escape(row.tool_use_id)}" data-state="{html.escape(row.state)}">{tds}</tr>'


def rows_table_html(rows: Sequence[RowView]) -> str:
    """Rows as one table with fixed columns, so tables split around approval rows line up."""
    cols = "".join(f'<col style="width:{w}">' for w in _COLUMNS)
    body = "".join(_row_html(r) for r in rows)
    return (f'<table class="nts-rows" style="table-layout:fixed;width:100%;border-collapse:collapse;font-size:12px">'
            f"<colgroup>{cols}</colgroup>{body}</table>")


def row_text(row: RowView) -> str:
    batch = f"b{row.batch}" if row.batch else "--"
    extra = f"  {row.progress}" if row.progress else ""
    return f"{row.number:>2}. {row.name} [{batch}] {row.state}  {row.input}{extra}"


def result_preview(result: Any, limit: int = 2000) -> str:
    """A tool_result's text, cut, as escaped HTML in a scrollable box."""
    text = getattr(result, "text", None)
    text = text() if callable(text) else text
    if not isinstance(text, str):
        text = str(result)
    error = bool(getattr(result, "is_error", False))
    shown = text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    colour = "#991b1b" if error else "#1f2328"
    return (f'<pre class="nts-result" style="max-height:16em;overflow:auto;margin:2px 0;padding:4px 6px;'
            f'background:#f6f8fa;color:{colour};white-space:pre-wrap;font-size:12px">{html.escape(shown)}</pre>')


def diff_html(diff: str) -> str:
    """A unified diff highlighted by pygments with inline styles (no page-wide CSS needed)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer

    body = highlight(diff, DiffLexer(), HtmlFormatter(noclasses=True, nowrap=True, style="friendly"))
    return (f'<pre class="nts-diff" style="max-height:24em;overflow:auto;margin:2px 0;padding:4px 6px;'
            f'background:#f8f8f8;color:#1f2328;font-size:12px;line-height:1.35">{body}</pre>')


def counts_text(states: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for state in states:
        counts[state] = counts.get(state, 0) + 1
    order = list(STATE_LABELS)
    parts = [f"{n} {STATE_LABELS[s][0] if s in STATE_LABELS else s}" for s, n in sorted(counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)]
    return ", ".join(parts)
