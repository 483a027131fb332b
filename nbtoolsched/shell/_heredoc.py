"""Read here-documents the way bash does, from the command text itself.

tree-sitter-bash's heredoc nodes cannot be trusted on their own: a body whose first
line is indented starts after the blanks and has no expansion children, ``<< EOF``
accepts an indented delimiter line, a line continuation hides a delimiter, and several
heredocs on one line get misread. So the parser reads every heredoc again here and
compares: any disagreement is a parse error (fail closed). Nothing here uses the tree;
the caller hands over where tree-sitter says each heredoc operator is.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HeredocError", "HeredocOp", "HeredocBody", "scan_line", "read_body", "body_expansions"]

_WORD_END = frozenset(" \t\n;&|<>()")
_OPERATORS = frozenset(";&|<>")


class HeredocError(ValueError):
    """The text cannot be read with certainty; the message says where."""


@dataclass(frozen=True, slots=True)
class HeredocOp:
    """A ``<<`` or ``<<-`` operator and its delimiter word, as bash reads them."""

    start: int  # offset of "<<"
    op: str
    word_start: int
    word_end: int
    delimiter: str  # after quote removal
    quoted: bool  # any quoting in the word: the body is not expanded


@dataclass(frozen=True, slots=True)
class HeredocBody:
    """Where one body lies: ``start``..``end`` is the body, then the delimiter line."""

    start: int
    end: int
    delimiter_start: int  # the delimiter itself (after the tabs ``<<-`` strips)
    delimiter_end: int
    next: int  # where bash goes on reading (after the delimiter line's newline)
    value: str  # the body bash feeds the command, before any expansion


def read_delimiter(text: str, op_start: int) -> HeredocOp:
    """The operator at ``op_start`` and the word after it (its delimiter)."""
    op = "<<-" if text.startswith("<<-", op_start) else "<<"
    i = op_start + len(op)
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    start = i
    parts: list[str] = []
    quoted = False
    while i < n and text[i] not in _WORD_END:
        char = text[i]
        if char == "'":
            close = text.find("'", i + 1)
            if close == -1:
                raise HeredocError("unterminated quote in a heredoc delimiter")
            parts.append(text[i + 1:close])
            quoted, i = True, close + 1
        elif char == '"':
            close = i + 1
            while close < n and text[close] != '"':
                if text[close] in "$`":
                    raise HeredocError("expansion in a heredoc delimiter")
                if text[close] == "\\" and close + 1 < n and text[close + 1] in '$`"\\':
                    close += 1
                parts.append(text[close])
                close += 1
            if close >= n:
                raise HeredocError("unterminated quote in a heredoc delimiter")
            quoted, i = True, close + 1
        elif char == "\\":
            if i + 1 >= n or text[i + 1] == "\n":
                raise HeredocError("line continuation in a heredoc delimiter")
            parts.append(text[i + 1])
            quoted, i = True, i + 2
        elif char in "$`":
            raise HeredocError("expansion in a heredoc delimiter")
        else:
            parts.append(char)
            i += 1
    delimiter = "".join(parts)
    if not delimiter or "\n" in delimiter:
        raise HeredocError("empty or multi-line heredoc delimiter")
    return HeredocOp(op_start, op, start, i, delimiter, quoted)


def scan_line(text: str, pos: int, *, nested: bool) -> tuple[int, list[HeredocOp]]:
    """From ``pos`` (just after a heredoc delimiter) to the newline that ends the line.

    Returns that newline's offset and the further heredoc operators on the way, whose
    bodies follow in order. ``nested``: the heredoc sits inside a substitution, where a
    ``)`` would hand the rest of the line back to an outer context this scan cannot see.
    Anything that could carry the line over a newline in a way not modelled here
    (substitutions, ``((``) is refused.
    """
    ops: list[HeredocOp] = []
    n = len(text)
    i = pos
    depth = 0
    word_start = True
    while i < n:
        char = text[i]
        if char == "\n":
            return i, ops
        if char in " \t":
            i += 1
            word_start = True
        elif char == "\\":
            if i + 1 >= n:
                break
            word_start = word_start and text[i + 1] == "\n"
            i += 2
        elif char == "#" and word_start:
            end = text.find("\n", i)
            if end == -1:
                break
            return end, ops
        elif char == "'":
            i = _after_single(text, i + 1)
            word_start = False
        elif char == '"':
            i = _after_double(text, i + 1)
            word_start = False
        elif char == "`":
            raise HeredocError("backtick on the line of a heredoc")
        elif char == "$":
            nxt = text[i + 1:i + 2]
            if nxt and nxt in "({[":
                raise HeredocError("substitution or expansion on the line of a heredoc")
            if nxt == "'":
                i = _after_ansi_c(text, i + 2)
            elif nxt == '"':
                i = _after_double(text, i + 2)
            else:
                i += 1
            word_start = False
        elif text.startswith("<<<", i):
            i += 3
            word_start = True
        elif text.startswith("<<", i):
            found = read_delimiter(text, i)
            ops.append(found)
            i = found.word_end
            word_start = True
        elif char == "(":
            if text.startswith("((", i):
                raise HeredocError("arithmetic on the line of a heredoc")
            depth += 1
            i += 1
            word_start = True
        elif char == ")":
            if depth == 0 and nested:
                raise HeredocError("the line of a heredoc closes a substitution")
            depth = max(0, depth - 1)
            i += 1
            word_start = True
        else:
            word_start = char in _OPERATORS
            i += 1
    raise HeredocError("no newline before the heredoc body")


def _after_single(text: str, i: int) -> int:
    close = text.find("'", i)
    if close == -1:
        raise HeredocError("unterminated quote on the line of a heredoc")
    return close + 1


def _after_double(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        char = text[i]
        if char == '"':
            return i + 1
        if char == "\\":
            i += 2
            continue
        if char == "`" or (char == "$" and text[i + 1:i + 2] in ("(", "{", "[")):
            raise HeredocError("substitution or expansion on the line of a heredoc")
        i += 1
    raise HeredocError("unterminated quote on the line of a heredoc")


def _after_ansi_c(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == "'":
            return i + 1
        else:
            i += 1
    raise HeredocError("unterminated quote on the line of a heredoc")


def read_body(text: str, start: int, op: HeredocOp) -> HeredocBody:
    """The body starting at ``start`` and its delimiter line, as bash finds them.

    A line is the delimiter when it equals it exactly (``<<-`` first strips leading
    tabs, never spaces). In an unquoted body a backslash-newline joins lines before the
    comparison; that is refused rather than modelled. No delimiter: refused (bash would
    warn and read to the end of the input).
    """
    strip = op.op == "<<-"
    n = len(text)
    pos = start
    lines: list[str] = []
    while pos < n:
        newline = text.find("\n", pos)
        end = n if newline == -1 else newline
        line = text[pos:end]
        check = line.lstrip("\t") if strip else line
        if check == op.delimiter:
            return HeredocBody(
                start, pos, end - len(check), end, end + 1 if newline != -1 else n, "".join(lines),
            )
        if not op.quoted and newline != -1 and _odd_backslashes(line):
            raise HeredocError("line continuation in an unquoted heredoc body")
        if newline == -1:
            break
        lines.append(check + "\n")
        pos = newline + 1
    raise HeredocError(f"heredoc without its delimiter line {op.delimiter!r}")


def _odd_backslashes(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def body_expansions(body: str) -> tuple[str | None, bool]:
    """The first expansion bash performs in an unquoted heredoc body, and whether code may run.

    A backslash quotes the next character; every other ``$`` and backtick counts (even
    a lone ``$`` that bash would keep: cheaper to refuse than to model). ``$(``, ``${``,
    ``$[`` and backticks may run code (``${x:-$(cmd)}``, ``$((a[$(cmd)]))``).
    """
    issue: str | None = None
    i, n = 0, len(body)
    while i < n:
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if char == "`" or char == "$":
            nxt = body[i + 1:i + 2]
            code = char == "`" or (nxt != "" and nxt in "({[")
            if issue is None:
                end = body.find("\n", i)
                kind = (
                    "command substitution" if char == "`" or nxt == "("
                    else "arithmetic expansion" if nxt == "[" else "parameter expansion"
                )
                issue = f"{kind} {_short(body[i:end if end != -1 else n])}"
            if code:
                return issue, True
        i += 1
    return issue, False


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
