"""Helpers the teaching notebooks share: scratch projects, facts read off a trace, pictures.

Everything here that prints is deterministic (orders, batches, overlaps, states, never
raw times), so nbval can compare the notebooks' stored outputs on any machine.
"""

from __future__ import annotations

import atexit
import html
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from IPython.display import SVG

from nbtoolsched import Trace
from nbtoolsched.internals import render_svg_timeline
from nbtoolsched import CallState

__all__ = [
    "scratch_project", "spans", "overlapped", "start_order", "finish_order", "describe_run", "timeline", "flow_diagram",
    "sequence_diagram", "tree_diagram",
]

PREFIX = "nbtoolsched-nb-"  # sanitize.cfg replaces paths with this prefix by <TMP>
_made: list[Path] = []


def scratch_project(files: dict[str, str] | None = None) -> Path:
    """A temporary project folder with ``files`` (relative path -> text); removed at exit."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX)).resolve()
    _made.append(root)
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@atexit.register
def _clean_up() -> None:
    for root in _made:
        shutil.rmtree(root, ignore_errors=True)


def spans(trace: Trace) -> dict[str, CallState]:
    """One span per call, by tool_use_id."""
    return {s.tool_use_id: s for s in trace.states()}


def overlapped(trace: Trace, a: str, b: str) -> bool:
    """Did calls ``a`` and ``b`` run at the same time (each started before the other finished)?"""
    s, t = spans(trace)[a], spans(trace)[b]
    if None in (s.started_at, s.finished_at, t.started_at, t.finished_at):
        return False
    return s.started_at < t.finished_at and t.started_at < s.finished_at  # type: ignore[operator]


def _ordered(trace: Trace, kind: str) -> list[str]:
    return [e.tool_use_id for e in trace.events if e.kind == kind and e.tool_use_id]


def start_order(trace: Trace) -> list[str]:
    return _ordered(trace, "started")


def finish_order(trace: Trace) -> list[str]:
    return _ordered(trace, "finished")


def describe_run(trace: Trace, ids: Iterable[str] | None = None) -> str:
    """A line per call: batch, id, tool, final status, progress count (times left out)."""
    by_id = spans(trace)
    keys = list(ids or by_id)
    id_w = max(len(k) for k in keys)
    name_w = max(len(by_id[k].tool_name) for k in keys)
    lines = []
    for key in keys:
        s = by_id[key]
        lines.append(f"batch {s.batch}  {s.tool_use_id:<{id_w}}  {s.tool_name:<{name_w}}  {s.status:<10} progress x{s.progress_count}")
    return "\n".join(lines)


def timeline(trace: Trace, title: str = "") -> SVG:
    """The run as a picture: one bar per call, batches as bands (times vary run to run)."""
    return SVG(render_svg_timeline(trace, title=title))


def flow_diagram(steps: list[str], highlight: Iterable[str] = (), title: str = "") -> SVG:
    """A left-to-right chain of boxes; ``highlight`` names the boxes to colour."""
    marked = set(highlight)
    box_w, gap, h, top = 108, 18, 44, 30 if title else 8
    width = len(steps) * (box_w + gap) + gap
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + h + 12}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{top + h + 12}" fill="white"/>']
    if title:
        out.append(f'<text x="{gap}" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    for i, step in enumerate(steps):
        x = gap + i * (box_w + gap)
        fill = "#fde68a" if step in marked else "#dbeafe"
        out.append(f'<rect x="{x}" y="{top}" width="{box_w}" height="{h}" rx="6" fill="{fill}" stroke="#1e3a8a"/>')
        lines = step.split("\n")
        for j, line in enumerate(lines):
            y = top + h / 2 + 4 + 13 * (j - (len(lines) - 1) / 2)
            out.append(f'<text x="{x + box_w / 2}" y="{y:.1f}" text-anchor="middle">{html.escape(line)}</text>')
        if i:
            out.append(f'<line x1="{x - gap}" y1="{top + h / 2}" x2="{x - 3}" y2="{top + h / 2}" stroke="#1e3a8a" stroke-width="2"/>'
                       f'<polygon points="{x - 3},{top + h / 2 - 4} {x},{top + h / 2} {x - 3},{top + h / 2 + 4}" fill="#1e3a8a"/>')
    out.append("</svg>")
    return SVG("".join(out))


def sequence_diagram(items: list[tuple[str, str]], title: str = "", squares: str = "result",
                     legend: str = "circles: progress, squares: results") -> SVG:
    """What a consumer received, in order: one lane per source, one mark per item.

    ``items`` are ``(lane, label)`` pairs in arrival order; x is the arrival *rank*, not a
    time, so the picture is the same on every machine. Labels starting with ``squares``
    are drawn as green squares, the rest as blue circles.
    """
    lanes = list(dict.fromkeys(lane for lane, _ in items))
    step, lane_h, left, top = 46, 34, 90, 30 if title else 10
    width, height = left + step * len(items) + 20, top + lane_h * len(lanes) + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="10">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="8" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    for row, lane in enumerate(lanes):
        y = top + row * lane_h + lane_h / 2
        out.append(f'<text x="8" y="{y + 4}" font-size="11">{html.escape(lane)}</text>')
        out.append(f'<line x1="{left}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#d1d5db"/>')
    for i, (lane, label) in enumerate(items):
        x, y = left + step * i + step / 2, top + lanes.index(lane) * lane_h + lane_h / 2
        result = label.startswith(squares)
        fill = "#16a34a" if result else "#3b82f6"
        shape = (f'<rect x="{x - 6}" y="{y - 6}" width="12" height="12" fill="{fill}"/>' if result
                 else f'<circle cx="{x}" cy="{y}" r="6" fill="{fill}"/>')
        out.append(shape + f'<text x="{x}" y="{y - 9}" text-anchor="middle">{html.escape(label)}</text>')
    out.append(f'<text x="{left}" y="{height - 6}" fill="#6b7280">arrival order \u2192 ({html.escape(legend)})</text>')
    out.append("</svg>")
    return SVG("".join(out))


def tree_diagram(nodes: list[tuple[str, str | None]], marked: Iterable[str] = (), title: str = "") -> SVG:
    """A small tree, top-down: ``nodes`` are ``(name, parent)``, parents listed first.

    Marked nodes are drawn red (used for "this signal is aborted").
    """
    red = set(marked)
    parent = dict(nodes)
    depth: dict[str, int] = {}
    for name, up in nodes:
        depth[name] = 0 if up is None else depth[up] + 1
    levels: dict[int, list[str]] = {}
    for name, _ in nodes:
        levels.setdefault(depth[name], []).append(name)
    box_w, box_h, row_h, top = 150, 30, 64, 30 if title else 10
    width = max(len(row) for row in levels.values()) * (box_w + 20) + 20
    height = top + len(levels) * row_h
    where = {}
    for level, row in levels.items():
        gap = width / len(row)
        for i, name in enumerate(row):
            where[name] = (gap * i + gap / 2, top + level * row_h)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width:.0f}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="8" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    for name, up in nodes:
        if up is not None:
            (x1, y1), (x2, y2) = where[up], where[name]
            out.append(f'<line x1="{x1:.0f}" y1="{y1 + box_h}" x2="{x2:.0f}" y2="{y2}" stroke="#6b7280"/>')
    for name, _ in nodes:
        x, y = where[name]
        fill, stroke = ("#fee2e2", "#b91c1c") if name in red else ("#dcfce7", "#166534")
        out.append(f'<rect x="{x - box_w / 2:.0f}" y="{y}" width="{box_w}" height="{box_h}" rx="5" fill="{fill}" stroke="{stroke}"/>'
                   f'<text x="{x:.0f}" y="{y + 19}" text-anchor="middle">{html.escape(name)}</text>')
    out.append("</svg>")
    return SVG("".join(out))
