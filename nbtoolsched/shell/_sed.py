"""Decide whether a sed invocation only prints.

sed is the one common tool whose script language can write files (``w``, ``s///w``) and
run programs (``e``, ``s///e``), so the script itself is read, command by command, and
only stream commands are accepted.

Claude Code accepts only ``sed -n`` with ``Np`` scripts, or one ``s/a/b/`` with ``/``
delimiters and no file; reading the script lets ``sed 's|a|b|' f`` and ``sed -e 5q``
count too (a deliberate difference).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ._allowlists import FLAG_COMMANDS, NONE, OPTIONAL, SED_REFUSED, SED_S_FLAGS, SED_STREAM_COMMANDS, FlagSpec
from ._flags import FlagError, ParsedArgs, parse_flags

_SPEC = FLAG_COMMANDS[("sed",)]
# The options of a sed that edits its files in place: they change where its output goes,
# never what its script may read or run (``-f``, a script in a file, stays unknown).
_IN_PLACE_SPEC = dataclasses.replace(
    _SPEC, flags={**_SPEC.flags, "-i": OPTIONAL, "--in-place": OPTIONAL, "--follow-symlinks": NONE, "-b": NONE, "--binary": NONE}
)
_SEPARATORS = " \t\n;"


class _SedError(ValueError):
    pass


def sed_problem(argv: Sequence[str]) -> str | None:
    """Why ``sed ...`` is not read-only, or None if it only prints."""
    return _problem(argv, _SPEC)


def sed_script_problem(argv: Sequence[str]) -> str | None:
    """Why the script of ``sed ...`` may do more than edit the stream (run a program, read
    or write a file it names itself, come from a file), or None. Unlike ``sed_problem``
    it accepts ``-i``: what matters here is what the script may open, not where output goes."""
    return _problem(argv, _IN_PLACE_SPEC)


def _problem(argv: Sequence[str], spec: FlagSpec) -> str | None:
    """Both ways GNU sed may read its words: options anywhere (getopt's default), or,
    with POSIXLY_CORRECT in its environment (set by the caller, the line or a profile),
    options only before the first other word. In ``sed '1e cmd' -e p f`` the script is
    ``p`` for the first and ``1e cmd`` for the second, so each reading is checked."""
    args = list(argv[1:])
    try:
        permuted = parse_flags("sed", args, spec)
        leading = parse_flags("sed", args, spec, stop_at_positional=True)
    except FlagError as exc:
        return str(exc)
    posix = ParsedArgs(leading.flags, tuple(args[leading.consumed :]), len(args))
    return _scripts_problem(permuted) or _scripts_problem(posix)


def _scripts_problem(parsed: ParsedArgs) -> str | None:
    scripts = [value or "" for flag, value in parsed.flags if flag in ("-e", "--expression")]
    if not scripts:
        if not parsed.positionals:
            return "sed without a script"
        scripts = [parsed.positionals[0]]
    for script in scripts:
        try:
            _check_script(script)
        except _SedError as exc:
            return f"sed script {script!r}: {exc}"
    return None


def _check_script(script: str) -> None:
    pos, end = 0, len(script)
    while True:
        while pos < end and script[pos] in _SEPARATORS:
            pos += 1
        if pos >= end:
            return
        if script[pos] == "}":
            pos += 1
            continue
        pos = _address_range(script, pos)
        while pos < end and script[pos] in " \t":
            pos += 1
        if pos < end and script[pos] == "!":
            pos += 1
            while pos < end and script[pos] in " \t":
                pos += 1
        if pos >= end:
            raise _SedError("address without a command")
        pos = _command(script, pos)


def _command(script: str, pos: int) -> int:
    """Check one command starting at ``pos``; return the index after it."""
    cmd = script[pos]
    pos += 1
    if cmd == "{":
        return pos
    if cmd in SED_STREAM_COMMANDS:
        while pos < len(script) and script[pos].isdigit() and cmd in "qQl":
            pos += 1
        return _end_of_command(script, pos, cmd)
    if cmd == "s":
        pos = _delimited(script, pos, parts=2)
        start = pos
        while pos < len(script) and script[pos] not in _SEPARATORS + "}":
            pos += 1
        flags = script[start:pos]
        for flag in flags:
            if flag in "ewW":
                raise _SedError(f"s///{flag} {SED_REFUSED[flag]}")
            if flag not in SED_S_FLAGS:
                raise _SedError(f"unknown s/// flag {flag!r}")
        return pos
    if cmd == "y":
        return _end_of_command(script, _delimited(script, pos, parts=2), cmd)
    reason = SED_REFUSED.get(cmd, "is not a known stream command")
    raise _SedError(f"command {cmd!r} {reason}")


def _end_of_command(script: str, pos: int, cmd: str) -> int:
    if pos < len(script) and script[pos] not in _SEPARATORS + "}":
        raise _SedError(f"unexpected {script[pos]!r} after command {cmd!r}")
    return pos


def _delimited(script: str, pos: int, parts: int) -> int:
    """Skip ``<d>pat<d>rep<d>`` (s and y); the delimiter is the next character."""
    if pos >= len(script) or script[pos] in "\\\n":
        raise _SedError("bad delimiter")
    delim = script[pos]
    pos += 1
    for _ in range(parts):
        pos = _until(script, pos, delim)
    return pos


def _until(script: str, pos: int, delim: str) -> int:
    """Index after the next unescaped ``delim``."""
    while pos < len(script):
        char = script[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "\n":
            raise _SedError("newline inside an expression")
        pos += 1
        if char == delim:
            return pos
    raise _SedError(f"unterminated expression (missing {delim!r})")


def _address_range(script: str, pos: int) -> int:
    pos = _address(script, pos, first=True)
    if pos < len(script) and script[pos] == ",":
        pos = _address(script, pos + 1, first=False)
    return pos


def _address(script: str, pos: int, *, first: bool) -> int:
    end = len(script)
    if pos < end and script[pos] in "+~" and not first:
        pos += 1
        if pos >= end or not script[pos].isdigit():
            raise _SedError("bad address offset")
    if pos < end and script[pos].isdigit():
        while pos < end and (script[pos].isdigit() or script[pos] == "~"):
            pos += 1
    elif pos < end and script[pos] == "$":
        pos += 1
    elif pos < end and script[pos] == "/":
        pos = _until(script, pos + 1, "/")
        while pos < end and script[pos] in "IM":
            pos += 1
    elif pos < end and script[pos] == "\\":
        raise _SedError("custom address delimiters are not analysed")
    elif not first:
        raise _SedError("missing second address")
    return pos
