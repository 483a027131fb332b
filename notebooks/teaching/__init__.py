"""Helpers the teaching notebooks share: scratch projects, facts read off a trace, pictures.

Everything here that prints is deterministic (orders, batches, overlaps, states, never
raw times), so nbval can compare the notebooks' stored outputs on any machine.

Pictures are SVG, and carry a PNG copy of themselves when one can be rendered (with
``cairosvg``, else a headless Chromium), because GitHub does not show SVG outputs of a
notebook. nbval compares the SVG and the one-line text of a picture, never the PNG.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import fnmatch
import html
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import nbtoolsched as nts
from nbtoolsched import Trace
from nbtoolsched.events import CallStarted, CallState, ResultEvent

__all__ = [
    "Picture", "scratch_project", "spans", "overlapped", "start_order", "finish_order", "describe_run", "timeline",
    "flow_diagram", "sequence_diagram", "tree_diagram", "layers_diagram", "check_setup",
    "make_whiteout", "make_opaque", "is_whiteout", "is_opaque", "real_marks", "tree_state",
]

PREFIX = "nbtoolsched-nb-"  # sanitize.cfg replaces paths with this prefix by <TMP>
_made: list[Path] = []


# -- setup --------------------------------------------------------------------------------
def check_setup(*modules: str) -> None:
    """Print, for each module a chapter needs, whether it can be imported here."""
    for name in modules:
        found = importlib.util.find_spec(name) is not None
        print(f"{name:16} {'installed' if found else 'MISSING: see the setup notes above'}")


# -- scratch folders ------------------------------------------------------------------------
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


# -- overlayfs's marks, made by hand (chapter 08) ----------------------------------------------
# Where the OS cannot make them (not Linux, or a file system without extended attributes),
# the marks are kept here instead, so the chapter's lookup exercise runs everywhere; the
# library's lookup reads only the real marks.
_stand_in_marks: dict[str, str] = {}
# The mark a mount made by this user reads: root's mounts read trusted.*, unprivileged ones
# (the userxattr option) user.*.
OPAQUE_XATTR = "trusted.overlay.opaque" if hasattr(os, "geteuid") and os.geteuid() == 0 else "user.overlay.opaque"


def make_whiteout(path: str | Path) -> None:
    """What overlayfs leaves in the upper folder for a deleted entry: a character device 0/0
    (Linux lets anyone make that one device since 5.8)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))
    except (OSError, AttributeError):
        Path(path).touch()
        _stand_in_marks[str(path)] = "whiteout"


def make_opaque(folder: str | Path) -> None:
    """What overlayfs puts on an upper folder that replaced a real one: the xattr
    ``overlay.opaque = y`` (the real folder's entries are then hidden)."""
    try:
        os.setxattr(folder, OPAQUE_XATTR, b"y")
    except (OSError, AttributeError):
        _stand_in_marks[str(folder)] = "opaque"


def is_whiteout(path: str | Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISCHR(info.st_mode) and info.st_rdev == 0) or _stand_in_marks.get(str(path)) == "whiteout"


def is_opaque(folder: str | Path) -> bool:
    try:
        if os.getxattr(folder, OPAQUE_XATTR, follow_symlinks=False) == b"y":
            return True
    except (OSError, AttributeError):
        pass
    return _stand_in_marks.get(str(folder)) == "opaque"


def real_marks() -> bool:
    """Were all the marks made so far overlayfs's own (so the library's lookup can read them)?"""
    return not _stand_in_marks


def tree_state(root: str | Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under ``root``: its kind, mode and bytes (a link: its target), by relative path."""
    state: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                entry = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                entry = ("folder", stat.S_IMODE(info.st_mode), b"")
            elif stat.S_ISREG(info.st_mode):
                entry = ("file", stat.S_IMODE(info.st_mode), Path(path).read_bytes())
            else:
                entry = ("other", stat.S_IMODE(info.st_mode), str(info.st_rdev).encode())
            state[os.path.relpath(path, root)] = entry
    return state


# -- slow stand-ins for four built-ins: their timelines are wide enough to see ---------------------
def _walk(root: str) -> list[str]:
    found = []
    for folder, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(found)


@nts.tool(read_only=True)
async def Grep(pattern: str, ctx: nts.ToolContext) -> str:
    """Search file contents with a regular expression (a slow teaching version)."""
    hits = []
    for rel in _walk(ctx.cwd):
        ctx.progress(f"scanning {rel}")
        await asyncio.sleep(0.05)
        text = Path(ctx.cwd, rel).read_text()
        hits += [f"{rel}:{n}: {line}" for n, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
    return "\n".join(hits)


@nts.tool(read_only=True)
async def Read(file_path: str, ctx: nts.ToolContext) -> str:
    """Read a file (a slow teaching version)."""
    await asyncio.sleep(0.15)
    path = ctx.resolve_path(file_path)
    ctx.file_state.record(path)
    return Path(path).read_text()


@nts.tool(read_only=True)
async def Glob(pattern: str, ctx: nts.ToolContext) -> str:
    """Find files by name pattern (a slow teaching version)."""
    await asyncio.sleep(0.1)
    return "\n".join(f for f in _walk(ctx.cwd) if fnmatch.fnmatch(f, pattern))


@nts.tool
async def Edit(file_path: str, old_string: str, new_string: str, ctx: nts.ToolContext) -> str:
    """Replace text in a file (a slow teaching version; not read-only, so it runs alone)."""
    await asyncio.sleep(0.2)
    path = Path(ctx.resolve_path(file_path))
    text = path.read_text()
    if text.count(old_string) != 1:
        raise ValueError(f"old_string must occur exactly once in {file_path}")
    path.write_text(text.replace(old_string, new_string))
    return f"Edited {file_path}"


# -- facts read off a trace (matched by event class) ------------------------------------------
def spans(trace: Trace) -> dict[str, CallState]:
    """One state per call, by tool_use_id."""
    return {s.tool_use_id: s for s in trace.states()}


def overlapped(trace: Trace, a: str, b: str) -> bool:
    """Did calls ``a`` and ``b`` run at the same time (each started before the other finished)?"""
    s, t = spans(trace)[a], spans(trace)[b]
    if None in (s.started_at, s.finished_at, t.started_at, t.finished_at):
        return False
    return s.started_at < t.finished_at and t.started_at < s.finished_at  # type: ignore[operator]


def start_order(trace: Trace) -> list[str]:
    return [e.tool_use_id for e in trace.events if isinstance(e, CallStarted)]


def finish_order(trace: Trace) -> list[str]:
    return [e.tool_use_id for e in trace.events if isinstance(e, ResultEvent)]


def _safety(state: CallState) -> str:
    return "safe" if state.safe else "unsafe"


def describe_run(trace: Trace, ids: Iterable[str] | None = None) -> str:
    """A line per call: batch and its safety, id, tool, final status, progress count (no times)."""
    by_id = spans(trace)
    keys = list(ids or by_id)
    id_w = max(len(k) for k in keys)
    name_w = max(len(by_id[k].tool_name) for k in keys)
    lines = []
    for key in keys:
        s = by_id[key]
        lines.append(f"batch {s.batch} ({_safety(s):6})  {s.tool_use_id:<{id_w}}  {s.tool_name:<{name_w}}  "
                     f"{s.status:<10} progress x{s.progress_count}")
    return "\n".join(lines)


# -- pictures -------------------------------------------------------------------------------
class Picture:
    """An SVG picture with a PNG copy for viewers that do not show SVG (GitHub).

    Its text form is one stable line (nbval compares it); the PNG is never compared.
    """

    def __init__(self, svg: str, title: str = "") -> None:
        self.svg = svg
        self.title = title

    def __repr__(self) -> str:
        return f"<picture: {self.title or 'untitled'}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"image/svg+xml": self.svg, "text/plain": repr(self)}
        png = svg_to_png(self.svg)
        if png is not None:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle


def svg_to_png(svg: str) -> bytes | None:
    """The picture as PNG: with cairosvg if it is installed, else a headless Chromium, else None."""
    return _png_with_cairosvg(svg) or _png_with_chromium(svg)


def _png_with_cairosvg(svg: str) -> bytes | None:
    try:
        import cairosvg  # type: ignore[import-not-found]

        return cairosvg.svg2png(bytestring=svg.encode("utf-8"))
    except Exception:  # not installed, or no cairo library on this machine
        return None


@lru_cache(maxsize=1)
def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _png_with_chromium(svg: str) -> bytes | None:
    browser = _chromium()
    size = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', svg)
    if browser is None or size is None:
        return None
    width, height = (int(float(v)) + 1 for v in size.groups())
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder, "picture.svg"), Path(folder, "picture.png")
        source.write_text(svg, encoding="utf-8")
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={folder}/profile", f"--window-size={width},{height}", f"--screenshot={target}"]
        try:
            subprocess.run([browser, *flags, source.as_uri()], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return target.read_bytes() if target.exists() else None


def _svg_open(width: float, height: float, font_size: int = 11) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'font-family="DejaVu Sans, sans-serif" font-size="{font_size}">',
            f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']


def _title(out: list[str], title: str, x: float = 8) -> None:
    if title:
        out.append(f'<text x="{x}" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')


STATUS_COLOURS = {"completed": "#3b82f6", "error": "#ef4444", "denied": "#f97316", "cancelled": "#9ca3af",
                  "deferred": "#a855f7", "executing": "#60a5fa"}


def timeline(trace: Trace, title: str = "", *, arrivals: Sequence[tuple[float, str]] = (),
             stream_start: float | None = None, stream_end: float | None = None, width: int = 760) -> Picture:
    """The run as a picture: one bar per call, batches as bands labelled by safety.

    ``arrivals`` (time, tool_use_id), ``stream_start`` and ``stream_end`` draw the model's
    stream above the bars: a line from its first event, a tick when each block was complete
    and handed over, a dashed line where the answer ended. Times are real (they vary run to run), so a timeline is never compared.
    """
    rows = sorted((s for s in trace.states() if s.started_at is not None or s.finished_at is not None),
                  key=lambda s: (s.batch, s.started_at if s.started_at is not None else s.finished_at))
    if not rows:
        return Picture('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="24"><text x="4" y="16">no calls ran</text></svg>', title)
    times = [t for s in rows for t in (s.started_at, s.finished_at, s.asked_at) if t is not None]
    times += [t for t, _ in arrivals] + [t for t in (stream_start, stream_end) if t is not None]
    t0, t1 = min(times), max(times)
    total = max(t1 - t0, 1e-6)
    row_h, label_w, right_w = 22, 150, 210
    top = (26 if title else 8) + (30 if arrivals else 0)
    plot_w = width - label_w - right_w
    height = top + len(rows) * row_h + 28
    out = _svg_open(width, height)
    _title(out, title)

    def x(t: float) -> float:
        return label_w + (t - t0) / total * plot_w

    if arrivals:
        lane = top - 18
        out.append(f'<text x="8" y="{lane + 4}">model stream</text>')
        end_x = x(stream_end) if stream_end is not None else x(t1)
        start_x = x(stream_start) if stream_start is not None else label_w
        out.append(f'<line x1="{start_x:.1f}" y1="{lane}" x2="{end_x:.1f}" y2="{lane}" stroke="#6b7280" stroke-width="3"/>')
        for t, key in arrivals:
            out.append(f'<line x1="{x(t):.1f}" y1="{lane - 7}" x2="{x(t):.1f}" y2="{lane + 7}" stroke="#111827" stroke-width="2"/>'
                       f'<text x="{x(t):.1f}" y="{lane - 9}" text-anchor="middle" font-size="9">{html.escape(key)}</text>')
    if stream_end is not None:
        out.append(f'<line x1="{x(stream_end):.1f}" y1="{top - 26 if arrivals else top}" x2="{x(stream_end):.1f}" '
                   f'y2="{top + len(rows) * row_h}" stroke="#111827" stroke-dasharray="4 3"/>'
                   f'<text x="{x(stream_end) + 3:.1f}" y="{top + len(rows) * row_h + 24}" font-size="9">stream ended</text>')
    for i, span in enumerate(rows):
        y = top + i * row_h
        if i == 0 or rows[i - 1].batch != span.batch:
            count = sum(1 for s in rows if s.batch == span.batch)
            shade = "#f3f4f6" if span.batch % 2 else "#ffffff"
            out.append(f'<rect x="0" y="{y}" width="{width}" height="{count * row_h}" fill="{shade}" fill-opacity="0.8"/>')
            kind = "safe: may run together" if span.safe else "unsafe: runs alone"
            out.append(f'<text x="{width - 8}" y="{y + 14}" text-anchor="end" fill="#374151">batch {span.batch} · {kind}</text>')
        out.append(f'<text x="8" y="{y + 15}">{html.escape(span.tool_name)} '
                   f'<tspan fill="#6b7280">{html.escape(span.tool_use_id[-10:])}</tspan></text>')
        if span.started_at is not None:
            end = span.finished_at if span.finished_at is not None else span.started_at
            colour = STATUS_COLOURS.get(span.status, "#3b82f6")
            out.append(f'<rect x="{x(span.started_at):.1f}" y="{y + 5}" width="{max(x(end) - x(span.started_at), 2):.1f}" '
                       f'height="{row_h - 10}" rx="3" fill="{colour}"/>')
        if span.asked_at is not None:
            end = span.answered_at if span.answered_at is not None else (span.finished_at or span.asked_at)
            out.append(f'<rect x="{x(span.asked_at):.1f}" y="{y + 5}" width="{max(x(end) - x(span.asked_at), 2):.1f}" '
                       f'height="{row_h - 10}" rx="3" fill="#facc15"/>')
    axis = top + len(rows) * row_h + 4
    out.append(f'<line x1="{label_w}" y1="{axis}" x2="{label_w + plot_w}" y2="{axis}" stroke="#9ca3af"/>')
    for k in range(5):
        out.append(f'<text x="{label_w + plot_w * k / 4:.1f}" y="{axis + 14}" text-anchor="middle" fill="#4b5563" '
                   f'font-size="9">{total * 1000 * k / 4:.0f} ms</text>')
    out.append("</svg>")
    return Picture("".join(out), title)


def flow_diagram(steps: list[str], highlight: Iterable[str] = (), title: str = "") -> Picture:
    """A left-to-right chain of boxes; ``highlight`` names the boxes to colour."""
    marked = set(highlight)
    box_w, gap, h, top = 108, 18, 44, 30 if title else 8
    width = len(steps) * (box_w + gap) + gap
    out = _svg_open(width, top + h + 12)
    _title(out, title, gap)
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
    return Picture("".join(out), title)


def sequence_diagram(items: list[tuple[str, str]], title: str = "", squares: str = "result",
                     legend: str = "circles: progress, squares: results") -> Picture:
    """What a consumer received, in order: one lane per source, one mark per item.

    ``items`` are ``(lane, label)`` pairs in arrival order; x is the arrival *rank*, not a
    time, so the picture is the same on every machine. Labels starting with ``squares``
    are drawn as green squares, the rest as blue circles.
    """
    lanes = list(dict.fromkeys(lane for lane, _ in items))
    step, lane_h, left, top = 46, 34, 90, 30 if title else 10
    width, height = left + step * len(items) + 20, top + lane_h * len(lanes) + 24
    out = _svg_open(width, height, 10)
    _title(out, title)
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
    return Picture("".join(out), title)


def layers_diagram(columns: list[str], layers: list[tuple[str, dict[str, str]]], merged: dict[str, tuple[str, str | None]],
                   title: str = "", merged_name: str = "merged") -> Picture:
    """overlayfs's layers, one column per path: ``layers`` top to bottom as ``(name, {path: label})``,
    then the merged view, ``{path: (label, name of the layer it comes from)}``. A path a row
    leaves out is absent there (a dashed slot; in the merged row a layer of None draws the
    slot with its label, saying why); a label starting with "whiteout" or "opaque" is drawn
    as that mark."""
    palette = ["#fde68a", "#dbeafe", "#e9d5ff"]
    colour = {name: palette[i % len(palette)] for i, (name, _) in enumerate(layers)}
    left, col_w, gap, row_h, box_h = 150, 100, 8, 46, 34
    top = 30 if title else 8
    header = 20
    rows = [(name, {p: (label, name) for p, label in cells.items()}) for name, cells in layers] + [(merged_name, merged)]
    width = left + len(columns) * (col_w + gap) + gap
    height = top + header + len(rows) * row_h + 14
    out = _svg_open(width, height, 10)
    _title(out, title)
    for c, path in enumerate(columns):
        x = left + gap + c * (col_w + gap) + col_w / 2
        out.append(f'<text x="{x:.0f}" y="{top + 13}" text-anchor="middle" font-family="DejaVu Sans Mono, monospace" '
                   f'font-weight="bold">{html.escape(path)}</text>')
    for r, (name, cells) in enumerate(rows):
        y = top + header + r * row_h + (10 if r == len(rows) - 1 else 0)
        if r == len(rows) - 1:
            out.append(f'<line x1="8" y1="{y - 6}" x2="{width - 8}" y2="{y - 6}" stroke="#1e3a8a" stroke-dasharray="4 3"/>')
        out.append(f'<text x="8" y="{y + box_h / 2 + 4}" font-size="11" font-weight="bold">{html.escape(name)}</text>')
        for c, path in enumerate(columns):
            x = left + gap + c * (col_w + gap)
            if path not in cells:
                out.append(f'<rect x="{x}" y="{y}" width="{col_w}" height="{box_h}" rx="5" fill="none" stroke="#d1d5db" '
                           f'stroke-dasharray="3 3"/>')
                continue
            label, source = cells[path]
            fill, stroke, dash, ink = colour.get(source, "#f3f4f6"), "#1e3a8a", "", "#000000"
            if source is None:  # absent, with a word on why
                fill, stroke, dash, ink = "none", "#d1d5db", ' stroke-dasharray="3 3"', "#6b7280"
            elif label.startswith("whiteout"):
                fill, stroke, dash = "#e5e7eb", "#374151", ' stroke-dasharray="5 2"'
            elif label.startswith("opaque"):
                fill, stroke = "#fdba74", "#9a3412"
            out.append(f'<rect x="{x}" y="{y}" width="{col_w}" height="{box_h}" rx="5" fill="{fill}" stroke="{stroke}"{dash}/>')
            lines = label.split("\n")
            for j, line in enumerate(lines):
                ty = y + box_h / 2 + 4 + 12 * (j - (len(lines) - 1) / 2)
                out.append(f'<text x="{x + col_w / 2}" y="{ty:.1f}" text-anchor="middle" fill="{ink}">{html.escape(line)}</text>')
    out.append("</svg>")
    return Picture("".join(out), title)


def tree_diagram(nodes: list[tuple[str, str | None]], marked: Iterable[str] = (), title: str = "",
                 notes: dict[str, str] | None = None) -> Picture:
    """A small tree, top-down: ``nodes`` are ``(name, parent)``, parents listed first.

    Marked nodes are drawn red (used for "this signal is aborted"); ``notes`` adds a
    second line under a node's name (its abort reason, say).
    """
    red, notes = set(marked), notes or {}
    depth: dict[str, int] = {}
    for name, up in nodes:
        depth[name] = 0 if up is None else depth[up] + 1
    levels: dict[int, list[str]] = {}
    for name, _ in nodes:
        levels.setdefault(depth[name], []).append(name)
    box_w, box_h, row_h, top = 150, 36 if notes else 30, 66, 30 if title else 10
    width = max(len(row) for row in levels.values()) * (box_w + 20) + 20
    height = top + len(levels) * row_h
    where = {}
    for level, row in levels.items():
        gap = width / len(row)
        for i, name in enumerate(row):
            where[name] = (gap * i + gap / 2, top + level * row_h)
    out = _svg_open(width, height)
    _title(out, title)
    for name, up in nodes:
        if up is not None:
            (x1, y1), (x2, y2) = where[up], where[name]
            out.append(f'<line x1="{x1:.0f}" y1="{y1 + box_h}" x2="{x2:.0f}" y2="{y2}" stroke="#6b7280"/>')
    for name, _ in nodes:
        x, y = where[name]
        fill, stroke = ("#fee2e2", "#b91c1c") if name in red else ("#dcfce7", "#166534")
        first = y + (15 if name in notes else 19)
        out.append(f'<rect x="{x - box_w / 2:.0f}" y="{y}" width="{box_w}" height="{box_h}" rx="5" fill="{fill}" stroke="{stroke}"/>'
                   f'<text x="{x:.0f}" y="{first}" text-anchor="middle">{html.escape(name)}</text>')
        if name in notes:
            out.append(f'<text x="{x:.0f}" y="{first + 13}" text-anchor="middle" font-size="9" fill="#374151">'
                       f'{html.escape(notes[name])}</text>')
    out.append("</svg>")
    return Picture("".join(out), title)
