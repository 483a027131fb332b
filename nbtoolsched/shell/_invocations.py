"""The programs a command line runs, as argv: what deny and ask rules are matched on.

A deny rule such as ``Bash(rm:*)`` must hold however rm is spelled: quoted (``"rm"``,
``r''m``, ``\\rm``), by path (``/bin/rm``), behind a runner (``command``, ``exec``,
``env -i X=1``, ``builtin``, ``nice``, ``timeout``, ``nohup``, ``time``, ``stdbuf``,
``setsid``, ``sudo``, ``doas``, ``busybox``, ``xargs -n1``, ``find -exec``), inside ``sh -c '...'``,
``eval``, ``trap`` or ``mapfile -C`` with a fixed string, or in a command substitution. Every simple
command of the parse is peeled runner by runner, and each stage is an invocation the
rules are tried on (the words with quotes removed, and the name as a path's last part).

When what runs cannot be told, a problem says why: a command name the shell computes,
a runner's options that cannot be read, a runner that takes its command from elsewhere
(``bash script.sh``, ``source``, ``ssh``, ``watch``...), an alias or ``hash -p`` that
renames a program. The caller then asks instead of trusting a rule's silence.

Deny rules match programs by name: a copy or a link of rm under another name is not
rm to them. Programs that run other programs by themselves (interpreters, make) are
not looked into.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Mapping

from ._allowlists import TIMEOUT_DURATION
from ._parse import SimpleCommand, parse_command
from ._programs import Reading, program, read_args

__all__ = ["CommandLine", "Invocation", "Words", "command_line"]

Words = tuple["str | None", ...]  # None: a word the shell computes
_MAX_DEPTH = 4  # sh -c 'eval "..."' and the like, nested
_MAX_RUNNERS = 32  # command command ... rm


@dataclass(frozen=True, slots=True)
class Invocation:
    """One program a simple command runs, after some of its runners are peeled."""

    words: Words
    text: str  # the simple command as written (rules with quotes match on that)
    nested: bool = False  # in a string another command runs as code (sh -c, eval, trap, find -exec sh)


_COMPUTED = "is computed by the shell"


@dataclass(frozen=True, slots=True)
class CommandLine:
    invocations: tuple[Invocation, ...]
    problems: tuple[str, ...]  # why some program it runs cannot be told (then: ask)

    @property
    def computes_code(self) -> bool:
        """Is some program name or code string it runs computed by the shell (``$c a``,
        ``eval "$x"``)? That code may do anything, ``cd`` included."""
        return any(_COMPUTED in problem for problem in self.problems)


@lru_cache(maxsize=2048)
def command_line(command: str) -> CommandLine:
    """Every invocation of ``command`` (substitutions, ``sh -c`` strings... included)."""
    found: list[Invocation] = []
    problems: list[str] = []
    _collect(command, 0, found, problems)
    return CommandLine(tuple(dict.fromkeys(found)), tuple(dict.fromkeys(problems)))


def _collect(command: str, depth: int, found: list[Invocation], problems: list[str]) -> None:
    if depth > _MAX_DEPTH:
        problems.append("commands nest too deep to follow")
        return
    parsed = parse_command(command)
    if parsed.errors:
        problems.append(f"the command cannot be parsed: {parsed.errors[0]}")
    if "BASH_ALIASES" in command:
        problems.append("BASH_ALIASES can rename a command")
    for cmd in parsed.commands:
        _Peeler(cmd, depth, found, problems).run(_words(cmd))


def _words(cmd: SimpleCommand) -> Words:
    return tuple(word.value if word.is_static else None for word in cmd.words)


class _Peeler:
    """Peels the runners off one simple command, recording each stage."""

    def __init__(self, cmd: SimpleCommand, depth: int, found: list[Invocation], problems: list[str]) -> None:
        self.text = " ".join([a.text for a in cmd.assignments] + [w.text for w in cmd.words])
        self.depth = depth
        self.found = found
        self.problems = problems

    def run(self, words: Words) -> None:
        for _ in range(_MAX_RUNNERS):
            if not words:
                return
            name = words[0]
            if name is None:
                self.problems.append(f"the name of the command in `{_short(self.text)}` {_COMPUTED} (or read from input)")
                return
            self.add(words)
            if "/" in name:
                name = name.rstrip("/").rsplit("/", 1)[-1]
                words = (name, *words[1:])
                self.add(words)
            runs = program(name).runs
            if runs is None:
                return
            if runs == "unseen":
                self.problems.append(f"{name} runs a command the rules cannot see (`{_short(self.text)}`)")
                return
            handler = _PEELERS[runs]
            rest = handler(self, words)
            if rest is None:
                return
            words = rest
        self.fail(f"more than {_MAX_RUNNERS} runners in a row")

    def add(self, words: Words) -> None:
        self.found.append(Invocation(words, self.text, self.depth > 0))

    def fail(self, why: str) -> None:
        self.problems.append(f"{why} (`{_short(self.text)}`)")

    def nested(self, source: str | None, what: str) -> None:
        """A command string the runner parses as shell code (sh -c, eval, trap)."""
        if source is None:
            self.fail(f"{what} runs a command string that {_COMPUTED}")
        else:
            _collect(source, self.depth + 1, self.found, self.problems)


# ------------------------------------------------------------------ options
def _options(peeler: _Peeler, words: Words, *, first: int = 1) -> Reading | None:
    """A runner's own options, read through its row of the program table (every one must
    be read to find its command); None, with the problem, when they cannot be."""
    found = read_args(program(words[0]), words, first=first, strict=True)
    if found.problem is not None:
        peeler.fail(found.problem)
        return None
    return found


# ------------------------------------------------------------------------ runners
Handler = Callable[[_Peeler, Words], "Words | None"]


def _simple(*, assignments: bool = False) -> Handler:
    """A runner whose command follows its options (after ``NAME=value`` words, for env
    and sudo)."""
    def peel(peeler: _Peeler, words: Words) -> Words | None:
        found = _options(peeler, words)
        if found is None:
            return None
        if found.uses(program(words[0]).prints_only):
            return None  # command -v only says what would run
        i = found.end
        if words[0] == "env" and i < len(words) and words[i] == "-":
            i += 1  # "env -" is env -i
        while assignments and i < len(words):
            word = words[i]
            if word is None:
                peeler.fail(f"{words[0]} has a word the shell computes where an assignment or the command goes")
                return None
            head, eq, _ = word.partition("=")
            if not eq or not head or head.startswith("-"):
                break
            i += 1
        return words[i:]
    return peel


def _timeout(peeler: _Peeler, words: Words) -> Words | None:
    found = _options(peeler, words)
    if found is None:
        return None
    i = found.end
    if i >= len(words) or words[i] is None or not TIMEOUT_DURATION.fullmatch(str(words[i])):
        peeler.fail("timeout has no readable duration")
        return None
    return words[i + 1:]


def _xargs(peeler: _Peeler, words: Words) -> Words | None:
    found = _options(peeler, words)
    if found is None:
        return None
    rest = words[found.end:] or ("echo",)
    replace = next((dict(found.values).get(k) or "{}" for k in ("-I", "-i", "--replace") if k in found.flags), None)
    if replace is not None:  # words holding the replace string get the input lines
        return tuple(None if w is not None and replace in w else w for w in rest)
    return (*rest, None)  # the input's words are appended


def _find(peeler: _Peeler, words: Words) -> Words | None:
    """find runs the commands of -exec/-execdir/-ok/-okdir, up to ";" or "+"."""
    actions = program("find").exec_actions
    i = 1
    while i < len(words):
        if words[i] in actions:
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            inner = tuple(None if w is not None and "{}" in w else w for w in words[i + 1:end])
            if inner:
                _Peeler.run(peeler, inner)
            i = end
        elif words[i] is None:
            peeler.fail("find has a word the shell computes, which may be -exec and a command")
            return None
        i += 1
    return None


def _shell(peeler: _Peeler, words: Words) -> Words | None:
    """sh -c STRING runs STRING: parsed like the line itself. Without -c: a script or
    the input, which no rule can see."""
    i, reads_string = 1, False
    while i < len(words):
        word = words[i]
        if word is None:
            if reads_string:
                break  # the command string itself is computed
            peeler.fail(f"{words[0]} has a word the shell computes among its options")
            return None
        if word in ("--", "-"):
            i += 1
            break
        if program(words[0]).options.get(word):  # -o name, -O shopt, --rcfile file
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            reads_string = reads_string or (word[0] == "-" and "c" in word)
            # A bundle's letters that take a value take the next words, in order: in
            # `bash -oc posix 'rm x'` posix is -o's, and the command string comes after.
            i += 1 + sum(1 for letter in word[1:] if program(words[0]).options.get(word[0] + letter))
            continue
        break
    if not reads_string:
        peeler.fail(f"{words[0]} runs a script or its input, which the rules cannot see")
        return None
    peeler.nested(words[i] if i < len(words) else "", f"{words[0]} -c")
    return None


def _eval(peeler: _Peeler, words: Words) -> Words | None:
    args = words[1:]
    peeler.nested(None if None in args else " ".join(str(a) for a in args), "eval")
    return None


def _trap(peeler: _Peeler, words: Words) -> Words | None:
    args = list(words[1:])
    if args and args[0] == "--":
        args = args[1:]
    if not args or args[0] in ("-l", "-p", "-P") or len(args) == 1:
        return None  # lists, prints, or resets a signal: runs nothing
    peeler.nested(args[0], "trap")
    return None


def _mapfile(peeler: _Peeler, words: Words) -> Words | None:
    """mapfile -C CODE (readarray too) runs CODE in this shell every -c lines it reads."""
    args, i = words[1:], 0
    while i < len(args):
        word, i = args[i], i + 1
        if word is None:
            peeler.fail(f"{words[0]} has a word the shell computes among its options")
            return None
        if word == "--" or not word.startswith("-") or word == "-":
            break
        for j, letter in enumerate(word[1:], 1):
            if program(words[0]).options.get("-" + letter):
                value: str | None = word[j + 1:]
                if not value:
                    value, i = (args[i] if i < len(args) else ""), i + 1
                if letter == "C":
                    peeler.nested(value, f"{words[0]} -C")
                break
    return None


def _builtin(peeler: _Peeler, words: Words) -> Words | None:
    """builtin NAME, busybox NAME: the next word is what runs."""
    return words[1:]


def _renames(reason: str) -> Handler:
    def peel(peeler: _Peeler, words: Words) -> Words | None:
        if len(words) > 1:
            peeler.fail(reason)
        return None
    return peel


def _hash(peeler: _Peeler, words: Words) -> Words | None:
    if any(w is None or (w.startswith("-") and "p" in w) for w in words[1:]):
        peeler.fail("hash -p makes a name run another program")
    return None


# How each kind of runner (the program table's ``runs`` column) gives up its command.
_PEELERS: dict[str, Handler] = {
    "after options": _simple(), "after assignments": _simple(assignments=True), "after a duration": _timeout,
    "input appended": _xargs, "exec clauses": _find, "next word": _builtin, "code string": _shell, "eval": _eval,
    "trap": _trap, "mapfile": _mapfile, "renames": _renames("alias can make a name run another command"), "hash": _hash,
}


def _short(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
