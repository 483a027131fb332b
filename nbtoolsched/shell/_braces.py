"""The words bash's brace expansion makes of one word (``.en{v,}`` is ``.env`` and ``.en``).

Unlike a glob, brace expansion does not look at the disk: every word it makes is passed
to the command, whether a file of that name exists or not. So a check of the files a
command names must see each of them. The expansion here over-approximates: a ``{`` that
quoting or a backslash kept literal in bash (the word's value no longer tells) is
expanded too, which only adds words to check.
"""

from __future__ import annotations

import re

__all__ = ["MAX_BRACE_WORDS", "brace_words"]

MAX_BRACE_WORDS = 512  # more than this: the caller cannot check them one by one
_MAX_LENGTH = 1024  # a longer word with a brace is not expanded either (None)
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def brace_words(value: str, limit: int = MAX_BRACE_WORDS) -> list[str] | None:
    """Every word brace expansion makes of ``value`` (itself when it has none), and in
    odd cases a few more; None when there would be more than ``limit``."""
    if len(value) > _MAX_LENGTH and "{" in value:
        return None  # finding the groups takes time quadratic in the length
    try:
        return list(dict.fromkeys(_expand(value, limit)))
    except _TooMany:
        return None


class _TooMany(Exception):
    pass


def _expand(value: str, limit: int) -> list[str]:
    """As bash: the text before the first group, times each choice expanded on its own,
    times the rest expanded on its own (a group never spans a choice and the rest)."""
    found = _first_group(value)
    if found is None:
        return [value]
    start, end, choices, literal = found
    rest = _expand(value[end + 1 :], limit)
    middles = [value[start : end + 1]] if literal else []  # the group as text
    middles.extend(m for choice in choices for m in _expand(choice, limit))
    out: list[str] = []
    for middle in middles:
        out.extend(value[:start] + middle + tail for tail in rest)
        if len(out) > limit:
            raise _TooMany
    return out


def _first_group(value: str) -> tuple[int, int, list[str], bool] | None:
    """The first ``{...}`` bash expands: (index of ``{``, index of its ``}``, choices,
    whether the group may also stay as text). A group closed after a ``..`` that is no
    valid sequence (``{1..x}``, ``{1...{a,b}}``) stays as text or, in some bash
    versions, loses its braces: both are listed."""
    for start, char in enumerate(value):
        if char != "{" or (start and value[start - 1] == "$"):  # ${x} is a parameter
            continue
        if (start == 0 or value[start - 1].isspace()) and value[start + 1 : start + 2] in ("}", " ", "\t", "\n"):
            continue  # bash leaves a leading "{}" (find's) and "{ " alone
        end, commas = _closing(value, start)
        if end is None:
            continue
        inner = value[start + 1 : end]
        if commas:
            return start, end, _split_commas(inner), False
        sequence = _sequence(inner)
        return (start, end, sequence, False) if sequence is not None else (start, end, [inner], True)
    return None


def _closing(value: str, start: int) -> tuple[int | None, bool]:
    """The ``}`` matching the ``{`` at ``start``, and whether a comma sits at its top level.

    As bash's brace_gobbler: a ``}`` at the top level closes only once a comma or a
    ``..`` was seen there (``z{a.},b}`` is ``za.}`` and ``zb``); an inner ``}`` closes
    an inner ``{``, never more of them than were opened."""
    depth, commas, seen = 0, False, False
    for index in range(start + 1, len(value)):
        char = value[index]
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "}" and seen:
            return index, commas
        elif depth == 0 and char == ",":
            commas = seen = True
        elif depth == 0 and value.startswith("..", index) and value[index + 2 : index + 3] != "}":
            seen = True
    return None, commas


def _split_commas(inner: str) -> list[str]:
    parts, depth, last = [], 0, 0
    for index, char in enumerate(inner):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[last:index])
            last = index + 1
    parts.append(inner[last:])
    return parts


def _sequence(inner: str) -> list[str] | None:
    """``1..3``, ``a..e``, ``10..1..2``, ``01..10`` (padded); None if not a sequence."""
    match = _SEQUENCE.fullmatch(inner)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    if first.lstrip("-").isdigit():
        low, high = int(first), int(last)
        if abs(high - low) // step > MAX_BRACE_WORDS:
            raise _TooMany  # before making a single one of them
        numbers = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
        if not any(len(end.lstrip("-")) > 1 and end.lstrip("-").startswith("0") for end in (first, last)):
            return [str(n) for n in numbers]
        width = max(len(first), len(last))  # 01..10: bash pads every number to one width
        return [f"{n:0{width}d}" for n in numbers]
    low, high = ord(first), ord(last)
    codes = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
    return [chr(code) for code in codes]
