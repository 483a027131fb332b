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

from ._allowlists import COMMAND_RUNNERS, TIMEOUT_DURATION
from ._parse import SimpleCommand, parse_command

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
            handler = _HANDLERS.get(name)
            if handler is None:
                if name in COMMAND_RUNNERS or name in _OTHER_RUNNERS:
                    self.problems.append(f"{name} runs a command the rules cannot see (`{_short(self.text)}`)")
                return
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


# ------------------------------------------------------------------ option tables
# Option tables of the runners, complete (long options may be abbreviated, so a prefix
# is resolved against the whole table, as getopt_long does). Value: takes a value
# (True), no value (False), or the reason the option makes the command unreadable.
_Table = Mapping[str, "bool | str"]

_ENV: _Table = {
    "-i": False, "--ignore-environment": False, "-0": False, "--null": False, "-u": True,
    "--unset": True, "-C": True, "--chdir": True, "-v": False, "--debug": False,
    "-S": "env -S splits a string into a command", "--split-string": "env -S splits a string into a command",
    "--block-signal": False, "--default-signal": False, "--ignore-signal": False,
    "--list-signal-handling": False, "--help": False, "--version": False,
}
_TIMEOUT: _Table = {
    "-k": True, "--kill-after": True, "-s": True, "--signal": True, "--preserve-status": False,
    "--foreground": False, "-v": False, "--verbose": False, "--help": False, "--version": False,
}
_NICE: _Table = {"-n": True, "--adjustment": True, "--help": False, "--version": False}
_STDBUF: _Table = {
    "-i": True, "--input": True, "-o": True, "--output": True, "-e": True, "--error": True,
    "--help": False, "--version": False,
}
_TIME: _Table = {
    "-p": False, "--portability": False, "-f": True, "--format": True, "-o": True, "--output": True,
    "-a": False, "--append": False, "-v": False, "--verbose": False, "-q": False, "--quiet": False,
    "--help": False, "--version": False,
}
_NOHUP: _Table = {"--help": False, "--version": False}
_EXEC: _Table = {"-c": False, "-l": False, "-a": True}
_COMMAND: _Table = {"-p": False, "-v": False, "-V": False}
_SETSID: _Table = {"-c": False, "--ctty": False, "-f": False, "--fork": False, "-w": False, "--wait": False,
                   "--help": False, "--version": False}
_SUDO: _Table = {
    "-A": False, "--askpass": False, "-b": False, "--background": False, "-B": False, "--bell": False,
    "-C": True, "--close-from": True, "-D": True, "--chdir": True, "-E": False, "--preserve-env": False,
    "-e": "sudo -e edits files", "--edit": "sudo -e edits files", "-g": True, "--group": True,
    "-H": False, "--set-home": False, "-h": True, "--host": True, "-i": False, "--login": False,
    "-K": False, "--remove-timestamp": False, "-k": False, "--reset-timestamp": False, "-l": False,
    "--list": False, "-n": False, "--non-interactive": False, "-P": False, "--preserve-groups": False,
    "-p": True, "--prompt": True, "-R": True, "--chroot": True, "-r": True, "--role": True, "-S": False,
    "--stdin": False, "-s": False, "--shell": False, "-t": True, "--type": True, "-T": True,
    "--command-timeout": True, "-U": True, "--other-user": True, "-u": True, "--user": True,
    "-V": False, "--version": False, "-v": False, "--validate": False, "--help": False,
}
_DOAS: _Table = {"-n": False, "-s": False, "-L": False, "-u": True, "-C": True}
_IONICE: _Table = {"-c": True, "--class": True, "-n": True, "--classdata": True, "-t": False,
                   "--ignore": False, "--help": False, "--version": False,
                   "-p": "ionice -p changes other processes", "--pid": "ionice -p changes other processes",
                   "-P": "ionice -P changes other processes", "--pgid": "ionice -P changes other processes",
                   "-u": "ionice -u changes other processes", "--uid": "ionice -u changes other processes"}
_XARGS: _Table = {
    "-0": False, "--null": False, "-a": True, "--arg-file": True, "-d": True, "--delimiter": True,
    "-E": True, "--eof": False, "-e": False, "-I": True, "--replace": False, "-i": False, "-L": True,
    "--max-lines": False, "-l": False, "-n": True, "--max-args": True, "-P": True, "--max-procs": True,
    "-p": False, "--interactive": False, "--process-slot-var": True, "-r": False,
    "--no-run-if-empty": False, "-s": True, "--max-chars": True, "--show-limits": False, "-t": False,
    "--verbose": False, "-x": False, "--exit": False, "-o": False, "--open-tty": False, "--help": False,
    "--version": False,
}
# Options that take an optional value attached to them only (-i[R], --replace[=R]...).
_OPTIONAL_VALUE = frozenset({"-e", "-i", "-l", "--eof", "--replace", "--max-lines", "--block-signal",
                             "--default-signal", "--ignore-signal", "--preserve-env"})


@dataclass(slots=True)
class _Options:
    """What reading a runner's options found."""

    next: int  # index of the first word after the options
    seen: dict[str, str | None]  # option (as in the table) -> its value


def _options(peeler: _Peeler, words: Words, table: _Table, *, first: int = 1) -> _Options | None:
    """Read getopt-style options from ``words[first:]``; None (with a problem) if unreadable."""
    name = words[0]
    seen: dict[str, str | None] = {}
    i = first
    while i < len(words):
        word = words[i]
        if word is None:
            peeler.fail(f"{name} has a word the shell computes among its options")
            return None
        if word == "--":
            return _Options(i + 1, seen)
        if not word.startswith("-") or word == "-":
            break
        i += 1
        if word.startswith("--"):
            flag, eq, value = word.partition("=")
            full = _resolve_long(flag, table)
            if full is None:
                peeler.fail(f"{name} option {flag} is unknown or ambiguous")
                return None
            kind = table[full]
            if isinstance(kind, str):
                peeler.fail(kind)
                return None
            if kind and not eq:
                if i >= len(words) or words[i] is None:
                    peeler.fail(f"{name} option {flag} has no readable value")
                    return None
                value, i = str(words[i]), i + 1
            seen[full] = value if eq or kind else None
            continue
        if name == "nice" and word[1:].isdigit():
            seen["-n"] = word[1:]
            continue
        j = 1
        while j < len(word):
            flag = "-" + word[j]
            if flag not in table:
                peeler.fail(f"{name} option {flag} is unknown")
                return None
            kind = table[flag]
            if isinstance(kind, str):
                peeler.fail(kind)
                return None
            rest = word[j + 1:]
            if kind or flag in _OPTIONAL_VALUE:
                if rest or not kind:
                    seen[flag] = rest or None
                elif i < len(words) and words[i] is not None:
                    seen[flag], i = words[i], i + 1
                else:
                    peeler.fail(f"{name} option {flag} has no readable value")
                    return None
                break
            seen[flag] = None
            j += 1
    return _Options(i, seen)


def _resolve_long(flag: str, table: _Table) -> str | None:
    """getopt_long: an exact name, or a prefix of exactly one (None: unknown, ambiguous)."""
    if flag in table:
        return flag
    matches = [name for name in table if name.startswith("--") and name.startswith(flag) and len(flag) > 2]
    return matches[0] if len(matches) == 1 else None


# ------------------------------------------------------------------------ runners
Handler = Callable[[_Peeler, Words], "Words | None"]


def _simple(table: _Table, *, assignments: bool = False) -> Handler:
    """A runner whose options are all in ``table`` and whose command follows them
    (after ``NAME=value`` words, for env and sudo)."""
    def peel(peeler: _Peeler, words: Words) -> Words | None:
        found = _options(peeler, words, table)
        if found is None:
            return None
        if words[0] == "command" and ("-v" in found.seen or "-V" in found.seen):
            return None  # command -v only says what would run
        i = found.next
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
    found = _options(peeler, words, _TIMEOUT)
    if found is None:
        return None
    i = found.next
    if i >= len(words) or words[i] is None or not TIMEOUT_DURATION.fullmatch(str(words[i])):
        peeler.fail("timeout has no readable duration")
        return None
    return words[i + 1:]


def _xargs(peeler: _Peeler, words: Words) -> Words | None:
    found = _options(peeler, words, _XARGS)
    if found is None:
        return None
    rest = words[found.next:] or ("echo",)
    replace = next((found.seen[k] or "{}" for k in ("-I", "-i", "--replace") if k in found.seen), None)
    if replace is not None:  # words holding the replace string get the input lines
        return tuple(None if w is not None and replace in w else w for w in rest)
    return (*rest, None)  # the input's words are appended


def _find(peeler: _Peeler, words: Words) -> Words | None:
    """find runs the commands of -exec/-execdir/-ok/-okdir, up to ";" or "+"."""
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
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


# Shell options that take a value (-o name, -O shopt, --rcfile file...).
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


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
        if word in _SHELL_VALUED:
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            reads_string = reads_string or (word[0] == "-" and "c" in word)
            i += 1
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
            if letter in "dnOsuC":  # the options that take a value
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


_HANDLERS: dict[str, Handler] = {
    "command": _simple(_COMMAND), "exec": _simple(_EXEC), "builtin": _builtin, "busybox": _builtin,
    "toybox": _builtin, "nice": _simple(_NICE),
    "nohup": _simple(_NOHUP), "time": _simple(_TIME), "stdbuf": _simple(_STDBUF), "setsid": _simple(_SETSID),
    "sudo": _simple(_SUDO, assignments=True), "doas": _simple(_DOAS), "ionice": _simple(_IONICE),
    "env": _simple(_ENV, assignments=True),
    "timeout": _timeout, "xargs": _xargs, "find": _find, "eval": _eval, "trap": _trap,
    "mapfile": _mapfile, "readarray": _mapfile,
    "alias": _renames("alias can make a name run another command"), "hash": _hash,
    **{shell: _shell for shell in ("sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh")},
}
# Runners beyond COMMAND_RUNNERS whose command the rules cannot see.
_OTHER_RUNNERS = frozenset({"flock", "chrt", "taskset", "unbuffer", "fakeroot", "firejail",
                            "strace", "ltrace", "systemd-run", "dbus-run-session", "xvfb-run", "entr"})


def _short(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
