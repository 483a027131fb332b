"""The immutable result of parsing a shell command (see _parse.py)."""

from __future__ import annotations

from .._errors import NbtoolschedError

from dataclasses import dataclass
from typing import Sequence

__all__ = [
    "Assignment", "Construct", "ParsedCommand", "Redirect", "ShellParseError",
    "SimpleCommand", "Word",
]


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: as written, and its value once quotes and escapes are removed.

    ``issues`` says why the value bash computes at run time may differ from ``value``
    (expansions, substitutions, globs...); a word without issues is a fixed string.
    ``~`` and ``~/...`` stay as written (the home directory) and are not issues.
    ``start``/``end`` are character offsets in the parsed command, as for every node.
    """

    text: str
    value: str
    issues: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    runs_code: bool = False  # a command or process substitution, or an expansion bash evaluates as code

    @property
    def is_static(self) -> bool:
        return not self.issues


@dataclass(frozen=True, slots=True)
class Assignment:
    """A ``NAME=value`` prefix of a command (or a bare assignment)."""

    name: str
    value: Word | None
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``op`` is the operator (``>``, ``2>&1`` has op ``>&``, fd 2)."""

    op: str
    fd: int | None
    target: Word | None  # file, fd number, here-string or heredoc body
    text: str
    start: int
    end: int

    @property
    def is_heredoc(self) -> bool:
        return self.op in ("<<", "<<-")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command of a compound command: env prefixes, words and redirections."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...]
    redirects: tuple[Redirect, ...]
    text: str
    start: int
    end: int

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(word.value for word in self.words)

    @property
    def name(self) -> str | None:
        return self.words[0].value if self.words else None

    @property
    def issues(self) -> tuple[str, ...]:
        """Every reason a word, assignment value or redirect target is not fixed."""
        found: list[str] = []
        for word in self._all_words():
            found.extend(word.issues)
        return tuple(found)

    @property
    def is_dynamic(self) -> bool:
        return any(not word.is_static for word in self._all_words())

    @property
    def runs_code(self) -> bool:
        return any(word.runs_code for word in self._all_words())

    @property
    def display(self) -> str:
        """Assignments and words as written, joined by single spaces, no redirections."""
        return " ".join([a.text for a in self.assignments] + [w.text for w in self.words])

    def _all_words(self) -> list[Word]:
        words = list(self.words)
        words.extend(a.value for a in self.assignments if a.value is not None)
        words.extend(r.target for r in self.redirects if r.target is not None)
        return words


@dataclass(frozen=True, slots=True)
class Construct:
    """Shell structure beyond a plain list of commands, e.g. a subshell or a loop.

    kind is one of: subshell, group, negation, if, for, while, until, select, case,
    function, arithmetic, background, declaration, unset, assignment, unsupported.
    """

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """The result of parsing a whole command string."""

    source: str
    commands: tuple[SimpleCommand, ...]
    errors: tuple[str, ...]
    constructs: tuple[Construct, ...]
    status_index: int | None  # the command whose exit status the shell returns

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def status_command(self) -> SimpleCommand | None:
        return None if self.status_index is None else self.commands[self.status_index]


class ShellParseError(NbtoolschedError, ValueError):
    """The command has syntax tree-sitter could not parse; never guess around it."""

    def __init__(self, command: str, errors: Sequence[str]) -> None:
        super().__init__(f"cannot parse shell command: {'; '.join(errors)}")
        self.command = command
        self.errors = tuple(errors)
