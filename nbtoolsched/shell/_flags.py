"""Validate a command's words against a per-command flag allowlist.

Unknown flags are refused: an allowlist of harmless options is the only way to be sure
that no option writes a file or runs a program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ._allowlists import (
    BRACES, CHAR, EOF, NONE, NUMBER, OPTIONAL, STRING, WRITE_FLAGS, FlagSpec,
)

_DIGITS = re.compile(r"\d+")


def long_option_matches(word: str, *names: str) -> bool:
    """Could ``word`` be one of the long options ``names`` (``--name`` or ``--name=value``)?

    GNU tools (getopt_long, git's parse-options) accept any unambiguous prefix of a long
    option: ``grep --recur`` is ``--recursive``. A prefix of a name counts as that name
    here whatever else it might abbreviate (a tool would refuse an ambiguous one), so
    a check for a dangerous option cannot be stepped around by abbreviating it.
    """
    if not word.startswith("--") or len(word) < 3:
        return False
    flag = word.partition("=")[0]
    return any(name.startswith(flag) for name in names)


class FlagError(ValueError):
    """A word the allowlist does not accept; the message names it."""


@dataclass(frozen=True, slots=True)
class ParsedArgs:
    """Flags and positional words after the command key, as the allowlist read them."""

    flags: tuple[tuple[str, str | None], ...]
    positionals: tuple[str, ...]
    consumed: int  # words read; with stop_at_positional, the index of the first positional

    def has_flag(self, *names: str) -> bool:
        return any(name in names for name, _ in self.flags)


def parse_flags(
    command: str, args: Sequence[str], spec: FlagSpec, *, stop_at_positional: bool = False,
) -> ParsedArgs:
    """Read ``args`` with ``spec``; raise FlagError at the first word it refuses.

    ``command`` names the tool in messages ("git log"). With ``stop_at_positional``
    reading stops before the first positional word (xargs: the command it runs).
    """
    flags: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    i, n = 0, len(args)
    options_done = False
    while i < n:
        word = args[i]
        if stop_at_positional and (options_done or word == "-" or not word.startswith("-")):
            break
        i += 1
        if options_done or word == "-" or not word.startswith("-"):
            positionals.append(word)
        elif word == "--":
            options_done = spec.respects_double_dash
        elif word.startswith("--"):
            i = _long_flag(command, word, args, i, spec, flags)
        elif word in spec.flags:
            i = _take_value(command, word, None, args, i, spec, flags)
        elif spec.numeric_shorthand and _DIGITS.fullmatch(word, 1):
            flags.append((word, None))
        else:
            i = _short_bundle(command, word, args, i, spec, flags)
    return ParsedArgs(tuple(flags), tuple(positionals), i)


def _refuse(command: str, flag: str) -> FlagError:
    reason = WRITE_FLAGS.get((command.split(" ", 1)[0], flag))
    return FlagError(reason or f"{command} option {flag} is not on the read-only allowlist")


def _long_flag(
    command: str, word: str, args: Sequence[str], i: int, spec: FlagSpec,
    flags: list[tuple[str, str | None]],
) -> int:
    name, eq, inline = word.partition("=")
    if name not in spec.flags:
        raise _refuse(command, name)
    return _take_value(command, name, inline if eq else None, args, i, spec, flags)


def _short_bundle(
    command: str, word: str, args: Sequence[str], i: int, spec: FlagSpec,
    flags: list[tuple[str, str | None]],
) -> int:
    """-nr (all valueless) or, getopt style, -A3 / -rk2,2n (value attached at the end)."""
    if "=" in word:
        raise _refuse(command, word)
    for pos in range(1, len(word)):
        flag = "-" + word[pos]
        kind = spec.flags.get(flag)
        if kind is None:
            raise _refuse(command, flag if len(word) > 2 else word)
        if kind == NONE:
            flags.append((flag, None))
            continue
        if not spec.attached_values:
            raise _refuse(command, word)
        rest = word[pos + 1:]
        if kind == OPTIONAL:
            flags.append((flag, rest or None))
            return i
        return _take_value(command, flag, rest or None, args, i, spec, flags)
    return i


def _take_value(
    command: str, flag: str, inline: str | None, args: Sequence[str], i: int,
    spec: FlagSpec, flags: list[tuple[str, str | None]],
) -> int:
    """Record ``flag`` and its value (inline or the next word); return the next index."""
    kind = spec.flags[flag]
    if kind == NONE:
        if inline is not None:
            raise FlagError(f"{command} option {flag} takes no value")
        flags.append((flag, None))
        return i
    if kind == OPTIONAL:
        flags.append((flag, inline))
        return i
    if inline is None:
        if i >= len(args):
            raise FlagError(f"{command} option {flag} is missing its value")
        inline = args[i]
        i += 1
        if inline.startswith("-") and inline != "-" and not _dash_ok(flag, spec):
            raise FlagError(f"{command} option {flag} is followed by another option")
    _check_value(command, flag, kind, inline, spec)
    flags.append((flag, inline))
    return i


def _dash_ok(flag: str, spec: FlagSpec) -> bool:
    return flag in spec.dash_values


def _check_value(command: str, flag: str, kind: str, value: str, spec: FlagSpec) -> None:
    if kind == NUMBER:
        ok = _DIGITS.fullmatch(value) is not None
    elif kind == STRING:
        ok = not value.startswith("-") or value == "-" or _dash_ok(flag, spec)
    elif kind == CHAR:
        ok = len(value) == 1
    elif kind == BRACES:
        ok = value == "{}"
    else:
        ok = kind == EOF and value == "EOF"
    if not ok:
        raise FlagError(f"{command} option {flag} has an unexpected value {value!r}")
