"""Gitignore-style globs as compiled regexes, the way ripgrep's globset reads them.

Shared by the pure-Python walker (``.gitignore`` files, ``--glob`` overrides, file
types) so that it filters exactly like ``rg`` does: ``*`` and ``?`` stop at ``/``,
``**`` spans directories, ``{a,b}`` alternates, ``[...]`` is a class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["GlobRule", "GlobSyntaxError", "parse_rule", "path_matcher", "glob_regex", "split_glob_argument"]


class GlobSyntaxError(ValueError):
    """A glob that cannot be compiled (an unclosed ``[`` or ``{``)."""


@dataclass(frozen=True, slots=True)
class GlobRule:
    """One line of a .gitignore (or one ``--glob``): what it matches and what it means."""

    source: str
    regex: re.Pattern[str]
    negated: bool  # "!pattern"
    dir_only: bool  # "pattern/"

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.regex.fullmatch(rel) is not None


def parse_rule(line: str) -> GlobRule | None:
    """A gitignore line as a rule; None for blanks and comments."""
    text = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    elif text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dir_only = text.endswith("/") and not text.endswith("\\/")
    if dir_only:
        text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    if text.startswith("/"):
        text = text[1:]
    if not anchored and not text.startswith("**"):
        text = "**/" + text
    return GlobRule(line, glob_regex(text), negated, dir_only)


def path_matcher(pattern: str) -> GlobRule:
    """A Glob tool pattern as a rule for file paths: gitignore syntax, but a leading
    ``!`` or ``#`` is literal (there is nothing to negate, and no comments)."""
    rule = parse_rule("\\" + pattern if pattern[:1] in ("!", "#") else pattern)
    if rule is None:
        raise GlobSyntaxError(f"the glob {pattern!r} matches nothing")
    return rule


def _strip_trailing_spaces(text: str) -> str:
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


@lru_cache(maxsize=4096)
def glob_regex(glob: str) -> re.Pattern[str]:
    """Compile a glob matched against a whole '/'-separated relative path."""
    return re.compile(_translate(glob, 0, len(glob), top=True)[0], re.DOTALL)


def _translate(glob: str, i: int, end: int, *, top: bool, in_brace: bool = False) -> tuple[str, int]:
    """Translate glob[i:end] (stopping at ',' or '}' inside braces); returns (regex, index)."""
    out: list[str] = []
    while i < end:
        c = glob[i]
        if in_brace and c in ",}":
            return "".join(out), i
        if c == "*":
            i = _star(glob, i, out)
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            piece, i = _char_class(glob, i)
            out.append(piece)
            continue
        elif c == "{":
            piece, i = _brace(glob, i, end)
            out.append(piece)
            continue
        elif c == "\\" and i + 1 < end:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    if in_brace:
        raise GlobSyntaxError(f"unclosed '{{' in glob {glob!r}")
    return "".join(out), i


def _star(glob: str, i: int, out: list[str]) -> int:
    """'*' or one of the '**' forms; returns the index after them."""
    if not glob.startswith("**", i):
        out.append("[^/]*")
        return i + 1
    at_start = i == 0 or glob[i - 1] == "/"
    after = i + 2
    if at_start and after == len(glob):
        out.append(".*")
        return after
    if at_start and glob.startswith("/", after):
        out.append("(?:.*/)?")
        return after + 1
    out.append("[^/]*")  # '**' glued to other characters acts like '*'
    return after


def _char_class(glob: str, i: int) -> tuple[str, int]:
    j = i + 1
    if j < len(glob) and glob[j] in "!^":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1
    close = glob.find("]", j)
    if close < 0:
        raise GlobSyntaxError(f"unclosed '[' in glob {glob!r}")
    body = glob[i + 1 : close]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    body = body.replace("\\", "\\\\").replace("[", "\\[")
    return ("[^/" + body + "]" if negate else "[" + body + "]"), close + 1


def _brace(glob: str, i: int, end: int) -> tuple[str, int]:
    options: list[str] = []
    i += 1
    while True:
        piece, i = _translate(glob, i, end, top=False, in_brace=True)
        options.append(piece)
        if glob[i] == "}":
            return "(?:" + "|".join(options) + ")", i + 1
        i += 1  # skip ','


def split_glob_argument(text: str) -> list[str]:
    """A Grep ``glob`` argument as separate globs: split on whitespace, and on commas
    outside braces (``*.{ts,tsx}`` stays one glob, ``*.py,*.md`` becomes two)."""
    globs: list[str] = []
    for word in text.split():
        if "{" in word:
            globs.append(word)
        else:
            globs.extend(part for part in word.split(",") if part)
    return globs
