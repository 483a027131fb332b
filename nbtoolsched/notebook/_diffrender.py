"""A unified diff drawn as GitHub draws one: old and new line numbers, the changed words
marked, long unchanged stretches folded (``<details>`` that open without a kernel).

Pure functions of their input, no widgets: the speculation view and the approval prompt
both draw their diffs with ``file_diff_html``.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, field
from typing import Sequence

from ._render import BORDER, BOX, FG, plural

__all__ = ["DiffLine", "Hunk", "ParsedDiff", "TINT_ADDED", "TINT_REMOVED", "file_diff_html", "parse_diff"]

TINT_ADDED, TINT_REMOVED, _TINT_HUNK = "rgba(46,160,67,0.18)", "rgba(248,81,73,0.18)", "rgba(56,139,253,0.14)"
_WORD_ADDED, _WORD_REMOVED = "rgba(46,160,67,0.45)", "rgba(248,81,73,0.45)"
_MONO = "var(--jp-code-font-family, monospace)"


# -- parsing a unified diff ---------------------------------------------------------------------------
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


@dataclass(slots=True)
class DiffLine:
    kind: str  # "context" | "added" | "removed" | "marker" (the "\ No newline at end of file" line)
    old: int | None  # its number in the old file (None: not there)
    new: int | None
    text: str


@dataclass(slots=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str  # what follows the second @@ (a function name, say)
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def old_first(self) -> int:
        """The first old line it covers (for an insertion, the line after the one it follows)."""
        return self.old_start if self.old_count else self.old_start + 1

    @property
    def new_first(self) -> int:
        return self.new_start if self.new_count else self.new_start + 1

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@" + (f" {self.section}" if self.section else "")


@dataclass(slots=True)
class ParsedDiff:
    hunks: list[Hunk]
    notes: list[str]  # lines that are no unified diff ("Binary file x differs", "folder deleted")
    added: int = 0
    removed: int = 0


def parse_diff(diff: str) -> ParsedDiff:
    """A one-file unified diff as hunks of numbered lines (file headers dropped)."""
    parsed = ParsedDiff([], [])
    hunk: Hunk | None = None
    old = new = old_left = new_left = 0
    for line in diff.splitlines():
        if hunk is not None and line.startswith("\\"):
            hunk.lines.append(DiffLine("marker", None, None, line[1:].strip()))
            continue
        if hunk is not None and (old_left or new_left):
            tag, body = line[:1], line[1:]
            if tag in (" ", "") and old_left and new_left:
                hunk.lines.append(DiffLine("context", old, new, body))
                old, new, old_left, new_left = old + 1, new + 1, old_left - 1, new_left - 1
                continue
            if tag == "-" and old_left:
                hunk.lines.append(DiffLine("removed", old, None, body))
                old, old_left, parsed.removed = old + 1, old_left - 1, parsed.removed + 1
                continue
            if tag == "+" and new_left:
                hunk.lines.append(DiffLine("added", None, new, body))
                new, new_left, parsed.added = new + 1, new_left - 1, parsed.added + 1
                continue
            old_left = new_left = 0  # not what the header promised: the rest is shown as notes
        found = _HUNK.match(line)
        if found:
            a, b, c, d, section = found.groups()
            hunk = Hunk(int(a), int(b) if b is not None else 1, int(c), int(d) if d is not None else 1, section.strip())
            parsed.hunks.append(hunk)
            old, new, old_left, new_left = hunk.old_first, hunk.new_first, hunk.old_count, hunk.new_count
            continue
        if line.startswith(("--- ", "+++ ")) and (hunk is None or not (old_left or new_left)):
            continue
        if line.strip():
            parsed.notes.append(line)
    return parsed


def _matches(parsed: ParsedDiff, source: Sequence[str]) -> bool:
    """Does ``source`` (the old file's lines) hold what each hunk says the old side held?"""
    for hunk in parsed.hunks:
        old_side = [line.text for line in hunk.lines if line.kind in ("context", "removed")]
        start = hunk.old_first - 1
        if start < 0 or list(source[start:start + hunk.old_count]) != old_side:
            return False
    return True


# -- rendering a diff ---------------------------------------------------------------------------------
_FOLD_AT = 8  # unchanged lines in a row beyond which the middle folds
_KEEP = 3  # unchanged lines shown on each side of a fold
_MAX_ROWS = 2000  # diff lines shown per file; the rest is counted
_MAX_GAP_SHOWN = 1000  # unchanged lines a fold may hold (beyond: counted, not shown)
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")


def _word_pair(old: str, new: str) -> tuple[str, str] | None:
    """The two lines as HTML with the changed words marked, or None when they have too
    little in common for word marks to help (or are too long to compare)."""
    if len(old) > 2000 or len(new) > 2000:
        return None
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    opcodes = matcher.get_opcodes()
    # How much of the lines' visible text (spaces aside) they share
    same = sum(len("".join("".join(a[i1:i2]).split())) for op, i1, i2, _j1, _j2 in opcodes if op == "equal")
    visible = max(len("".join(old.split())), len("".join(new.split())), 1)
    if same / visible < 0.4:
        return None
    left, right = [], []
    for op, i1, i2, j1, j2 in opcodes:
        gone, came = html.escape("".join(a[i1:i2])), html.escape("".join(b[j1:j2]))
        if op == "equal":
            left.append(gone)
            right.append(came)
            continue
        if gone:
            left.append(f'<span class="nts-word-removed" style="background:{_WORD_REMOVED};border-radius:2px">{gone}</span>')
        if came:
            right.append(f'<span class="nts-word-added" style="background:{_WORD_ADDED};border-radius:2px">{came}</span>')
    return "".join(left), "".join(right)


def _bodies(lines: list[DiffLine]) -> list[str]:
    """Each line's text as HTML; in a block of removed lines followed by added ones, each
    removed line is paired with the first added line after the last pair that is close
    enough to it, and their changed words are marked."""
    out = [html.escape(line.text) for line in lines]
    i = 0
    while i < len(lines):
        if lines[i].kind != "removed":
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].kind in ("removed", "marker"):
            i += 1
        removed = [k for k in range(start, i) if lines[k].kind == "removed"]
        begin = i
        while i < len(lines) and lines[i].kind in ("added", "marker"):
            i += 1
        added = [k for k in range(begin, i) if lines[k].kind == "added"]
        if len(removed) * len(added) > 2500:  # a rewrite, not an edit: the line tints say it
            continue
        after = 0
        for r in removed:
            for position in range(after, len(added)):
                pair = _word_pair(lines[r].text, lines[added[position]].text)
                if pair is not None:
                    out[r], out[added[position]] = pair
                    after = position + 1
                    break
    return out


def _ln_style(width: int) -> str:
    return (f"flex:none;box-sizing:content-box;width:{width}ch;padding:0 6px 0 4px;text-align:right;color:{FG};font-size:11px;"
            f"user-select:none;-webkit-user-select:none;border-right:1px solid {BORDER}")


def _row(kind: str, old: int | None, new: int | None, body: str, width: int) -> str:
    tint = {"added": TINT_ADDED, "removed": TINT_REMOVED}.get(kind)
    sign = {"added": "+", "removed": "-"}.get(kind, " ")
    ln = _ln_style(width)
    return (f'<div class="nts-line nts-line-{kind}" style="display:flex;{f"background:{tint}" if tint else ""}">'
            f'<span class="nts-ln" data-side="old" style="{ln}">{old if old is not None else ""}</span>'
            f'<span class="nts-ln" data-side="new" style="{ln}">{new if new is not None else ""}</span>'
            f'<span class="nts-sign" style="flex:none;width:1.5ch;padding-left:4px;color:{FG};user-select:none;'
            f'-webkit-user-select:none">{sign}</span>'
            f'<span class="nts-code" style="flex:1 1 auto;min-width:0;white-space:pre-wrap;overflow-wrap:anywhere;'
            f'padding-right:6px">{body or " "}</span></div>')


def _plain_row(css: str, text: str, width: int, style: str = "") -> str:
    """A row without numbers: a hunk header, a marker, a count of lines not shown."""
    ln = _ln_style(width)
    return (f'<div class="{css}" style="display:flex;color:{FG};{style}"><span class="nts-ln" style="{ln}"></span>'
            f'<span class="nts-ln" style="{ln}"></span><span style="flex:1 1 auto;min-width:0;padding:0 6px;'
            f'white-space:pre-wrap;overflow-wrap:anywhere">{text}</span></div>')


def _unchanged(old: int, new: int, texts: Sequence[str] | None, count: int, width: int, fold: bool) -> str:
    """``count`` unchanged lines from old line ``old`` (new line ``new``): shown, folded
    into a closed ``<details>``, or (their text unknown) counted."""
    last_old, last_new = old + count - 1, new + count - 1
    where = f"{old}–{last_old}" if old == new else f"old {old}–{last_old}, new {new}–{last_new}"
    if texts is None or count > _MAX_GAP_SHOWN:
        return _plain_row("nts-fold nts-fold-hidden", f"⋯ {plural(count, 'unchanged line')} ({where}) not shown", width,
                          f"background:{_TINT_HUNK}")
    rows = "".join(_row("context", old + k, new + k, html.escape(texts[k]), width) for k in range(count))
    if not fold:
        return rows
    return (f'<details class="nts-fold"><summary style="display:block;cursor:pointer;list-style:none;color:{FG};'
            f'background:{_TINT_HUNK};padding:0 6px 0 calc({2 * width}ch + 22px)">⋯ {plural(count, "unchanged line")} '
            f'({where})</summary>{rows}</details>')


def file_diff_html(diff: str, source: Sequence[str] | None = None, *, max_height: str = "28em") -> str:
    """A file's unified diff as HTML, inline styles only: old and new line numbers
    (``.nts-ln``), changed words marked (``.nts-word-added``/``.nts-word-removed``), long
    unchanged stretches folded. ``source``, the old file's lines, lets the stretches
    between hunks be unfolded; without it (or if it no longer matches) they are counted.
    """
    parsed = parse_diff(diff)
    if not parsed.hunks and not parsed.notes:
        return ""
    src = source if source is not None and _matches(parsed, source) else None
    highest = max([h.old_first + h.old_count for h in parsed.hunks] + [h.new_first + h.new_count for h in parsed.hunks]
                  + [len(src) if src is not None else 0, 1])
    width = max(3, len(str(highest)))
    out: list[str] = []
    shown = 0
    after_old = after_new = 1
    for hunk in parsed.hunks:
        if shown >= _MAX_ROWS:
            break
        gap = hunk.old_first - after_old
        if gap > 0:
            texts = src[after_old - 1:hunk.old_first - 1] if src is not None else None
            out.append(_unchanged(after_old, hunk.new_first - gap, texts, gap, width, fold=gap > _KEEP))
        if src is None:  # with the whole file the lines run on (folds say what is left out)
            out.append(_plain_row("nts-hunk", html.escape(hunk.header), width, f"background:{_TINT_HUNK}"))
        lines, bodies = hunk.lines, _bodies(hunk.lines)
        k = 0
        while k < len(lines) and shown < _MAX_ROWS:
            line = lines[k]
            end = k
            while end < len(lines) and lines[end].kind == "context":
                end += 1
            if end - k > _FOLD_AT:  # a long unchanged run inside the hunk: its middle folds
                head, tail = k + _KEEP, end - _KEEP
                out.extend(_row("context", lines[j].old, lines[j].new, bodies[j], width) for j in range(k, head))
                first = lines[head]
                assert first.old is not None and first.new is not None
                out.append(_unchanged(first.old, first.new, [lines[j].text for j in range(head, tail)], tail - head,
                                      width, fold=True))
                out.extend(_row("context", lines[j].old, lines[j].new, bodies[j], width) for j in range(tail, end))
                shown += end - k
                k = end
                continue
            if line.kind == "marker":
                out.append(_plain_row("nts-line nts-line-marker", f"\\ {html.escape(line.text)}", width))
            else:
                out.append(_row(line.kind, line.old, line.new, bodies[k], width))
                shown += 1
            k += 1
        after_old, after_new = hunk.old_first + hunk.old_count, hunk.new_first + hunk.new_count
    total = sum(1 for h in parsed.hunks for line in h.lines if line.kind != "marker")
    if shown < total:
        out.append(_plain_row("nts-fold nts-fold-hidden", f"… {plural(total - shown, 'more diff line')} not shown", width))
    elif src is not None and parsed.hunks and len(src) >= after_old:
        tail_count = len(src) - after_old + 1
        out.append(_unchanged(after_old, after_new, src[after_old - 1:], tail_count, width, fold=tail_count > _KEEP))
    for note in parsed.notes:
        out.append(f'<div class="nts-diff-note" style="color:{FG};font-style:italic;padding:0 6px">{html.escape(note)}</div>')
    return (f'<pre class="nts-diff" style="max-height:{max_height};overflow:auto;margin:2px 0;padding:2px 0;'
            f'background:{BOX};color:{FG};font-family:{_MONO};font-size:12px;line-height:1.4;white-space:normal">'
            f'{"".join(out)}</pre>')
