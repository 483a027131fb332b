"""A run's timeline as text: one row per call, bars against time, grouped by batch.

Safe calls (a batch that may run in parallel) show as bars that overlap; an unsafe call
runs alone, its bar after the others;
``?`` marks time spent waiting for a person's approval.
"""

from __future__ import annotations

from .._events import CallState
from ._trace import Trace

__all__ = ["render_text_timeline", "render_svg_timeline"]


def render_text_timeline(trace: Trace, width: int = 48) -> str:
    spans = [s for s in trace.states() if s.started_at is not None or s.finished_at is not None]
    if not spans:
        return "(no calls ran)"
    t0 = min(_first(s) for s in spans)
    t1 = max((s.finished_at or _first(s)) for s in spans)
    total = max(t1 - t0, 1e-9)
    label_width = max(len(_label(s)) for s in spans)
    lines = [f"{'':{label_width}}  0{'':{width - 1}}{total * 1000:.0f} ms"]
    batch = None
    for span in sorted(spans, key=lambda s: (s.batch, _first(s))):
        if span.batch != batch:
            batch = span.batch
            lines.append(f"-- batch {batch} ({_kind(span)})")
        lines.append(f"{_label(span):{label_width}} |{_bar(span, t0, total, width)}| {_duration(span)} {span.status}")
    return "\n".join(lines)


def _kind(span: CallState) -> str:
    """A batch by what its calls are, not by how many: safe calls may run in parallel."""
    return "unsafe, alone" if span.safe is False else "safe, parallel"


def _first(span: CallState) -> float:
    times = [t for t in (span.asked_at, span.started_at, span.finished_at) if t is not None]
    return min(times)


def _label(span: CallState) -> str:
    return f"{span.tool_name} {span.tool_use_id}"


def _cell(t: float, t0: float, total: float, width: int) -> int:
    return min(width - 1, max(0, int((t - t0) / total * width)))


def _bar(span: CallState, t0: float, total: float, width: int) -> str:
    cells = [" "] * width
    if span.started_at is not None:
        end = span.finished_at if span.finished_at is not None else span.started_at
        for i in range(_cell(span.started_at, t0, total, width), _cell(end, t0, total, width) + 1):
            cells[i] = "#"
    if span.asked_at is not None:  # waiting for a person, drawn over the running bar
        end = span.answered_at if span.answered_at is not None else (span.finished_at or span.asked_at)
        for i in range(_cell(span.asked_at, t0, total, width), _cell(end, t0, total, width) + 1):
            cells[i] = "?"
    return "".join(cells)


def _duration(span: CallState) -> str:
    return f"{span.duration * 1000:6.0f} ms" if span.duration is not None else "      --"


STATUS_COLOURS = {
    "completed": "#3b82f6",
    "executing": "#60a5fa",
    "error": "#ef4444",
    "denied": "#f97316",
    "cancelled": "#9ca3af",
    "deferred": "#a855f7",
    "queued": "#d1d5db",
}
WAIT_COLOUR = "#facc15"


def render_svg_timeline(trace: Trace, width: int = 640, row_height: int = 22, title: str = "") -> str:
    """The timeline as a standalone SVG: bars per call, batches as bands, waits in yellow."""
    spans = sorted((s for s in trace.states() if s.started_at is not None or s.asked_at is not None), key=lambda s: (s.batch, _first(s)))
    if not spans:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="24"><text x="4" y="16" font-size="12">no calls ran</text></svg>'
    t0 = min(_first(s) for s in spans)
    total = max(max((s.finished_at or _first(s)) for s in spans) - t0, 1e-6)
    label_w, top, axis_h = 170, 24 if title else 8, 26
    plot_w = width - label_w - 120  # the right margin holds the batch labels
    height = top + len(spans) * row_height + axis_h

    def x(t: float) -> float:
        return label_w + (t - t0) / total * plot_w

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="8" y="16" font-size="13" font-weight="bold">{_esc(title)}</text>')
    for i, span in enumerate(spans):
        y = top + i * row_height
        if i == 0 or spans[i - 1].batch != span.batch:
            rows = sum(1 for s in spans if s.batch == span.batch)
            shade = "#f3f4f6" if span.batch % 2 else "#ffffff"
            out.append(f'<rect x="0" y="{y}" width="{width}" height="{rows * row_height}" fill="{shade}"/>')
            out.append(f'<text x="{width - 8}" y="{y + 13}" text-anchor="end" fill="#6b7280">batch {span.batch} · {_kind(span)}</text>')
        out.append(f'<text x="8" y="{y + 15}">{_esc(span.tool_name)} <tspan fill="#6b7280">{_esc(span.tool_use_id[-8:])}</tspan></text>')
        if span.started_at is not None:
            end = span.finished_at if span.finished_at is not None else span.started_at
            colour = STATUS_COLOURS.get(span.status, "#3b82f6")
            out.append(f'<rect x="{x(span.started_at):.1f}" y="{y + 5}" width="{max(x(end) - x(span.started_at), 2):.1f}" height="{row_height - 10}" rx="3" fill="{colour}"><title>{_esc(span.tool_name)}: {span.status}, {(_dur(span))}</title></rect>')
        if span.asked_at is not None:
            end = span.answered_at if span.answered_at is not None else (span.finished_at or span.asked_at)
            out.append(f'<rect x="{x(span.asked_at):.1f}" y="{y + 5}" width="{max(x(end) - x(span.asked_at), 2):.1f}" height="{row_height - 10}" rx="3" fill="{WAIT_COLOUR}"><title>waiting for approval</title></rect>')
    axis_y = top + len(spans) * row_height + 4
    out.append(f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + plot_w}" y2="{axis_y}" stroke="#9ca3af"/>')
    for k in range(5):
        t = total * k / 4
        tx = label_w + plot_w * k / 4
        out.append(f'<text x="{tx:.1f}" y="{axis_y + 15}" text-anchor="middle" fill="#4b5563">{t * 1000:.0f} ms</text>')
    out.append("</svg>")
    return "".join(out)


def _dur(span: CallState) -> str:
    return f"{span.duration * 1000:.0f} ms" if span.duration is not None else "running"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
