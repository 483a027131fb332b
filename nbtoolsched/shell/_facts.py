"""One typed facts record per command line: what every rule and check is matched against.

``line_facts(command, cwd)`` states, once per decision, what the line is: the spellings
rules are tried on, the programs it runs (runners peeled: env, sudo, timeout, xargs,
find -exec, sh -c, eval, substitutions), the parts the splitter cuts it into and, for
each, its program's row of the program table read over its words (the names it is given,
what it changes, whether it makes links); the folders its relative names may start from;
its redirections; what it reads and names; whether it may change a tool's configuration;
whether git may print history; and its structure (how many parts, how many ``cd``).

What needs only the text is computed from caches shared by every decision; what looks
at the file system (symlinks, folders, repositories) is computed on first use and kept
for the decision only, as the tree may change between two decisions. The permissions
layer reads these fields and matches them: it never parses a command itself.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Callable

from ._braces import brace_words
from ._candidates import allow_candidates, deny_candidates, first_word, rule_prefix
from ._flags import long_option_matches
from ._invocations import CommandLine, command_line
from ._lexical import lexical_paths
from ._network import network_use
from ._parse import MAX_COMMAND_CHARS, parse_command, subcommand_strings
from ._paths import shell_paths_for_check
from ._places import relative_bases
from ._reach import reach_outside
from ._programs import Program, program, read_args
from ._readonly import ReadOnlyVerdict, analyze
from ._reads import ReadTargets, line_names, read_targets, shows_repository_content
from ._sed import sed_script_problem
from ._writes import config_write, written_words

__all__ = ["LineFacts", "PartFacts", "Redirection", "Splitter", "default_split", "line_facts", "MAX_PARTS"]

Splitter = Callable[[str], "list[str] | None"]
MAX_PARTS = 50  # more parts than this: a line too long to judge part by part
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def default_split(command: str) -> list[str] | None:
    """The shell layer's splitter: the simple commands of the line; None when it cannot
    be split safely (so every check that needs parts asks)."""
    try:
        return subcommand_strings(command)
    except Exception:  # noqa: BLE001 - a parser failure means "cannot tell": fail closed
        return None


@dataclass(frozen=True, slots=True)
class Redirection:
    """A redirection to or from a file (not a heredoc, a here-string or a descriptor copy)."""

    text: str  # as written
    output: bool  # it writes the file (>, >>, &>...); else it reads it (<)
    computed: bool  # the shell computes the path (an expansion, a substitution; not a brace)
    paths: tuple[str, ...] | None  # the paths it names, braces expanded; None: more than can be checked


@dataclass(frozen=True, slots=True)
class PartFacts:
    """One part of the line as the splitter cut it, read through its program's row."""

    text: str
    deny_forms: tuple[str, ...]  # the spellings deny and ask rules are tried on (runners peeled)
    allow_forms: tuple[str, ...]  # the spellings allow rules are tried on (safe variables peeled)
    program: str  # the program of the last deny form, as written (a path's last part is the row's name)
    row: Program
    words: tuple[str, ...] | None  # the last deny form's words (None: quotes the split cannot read)
    names: tuple[str, ...]  # the names it is given, through its row (patterns, option values left out)
    written: tuple[str, ...]  # what it may change: its destination, or every name and option value
    has_options: bool  # some word is an option
    edits_stream_only: bool  # sed: its script only edits the stream (no w file, e command, r file); others: True
    rule_prefix: str | None  # the words a prefix rule for it would name (``git log``), or None

    @property
    def peeled(self) -> str:
        return self.deny_forms[-1]


@lru_cache(maxsize=4096)
def part_facts(text: str) -> PartFacts:
    """The facts of one part (text only: shared by every decision)."""
    deny = tuple(deny_candidates(text))
    allow = tuple(allow_candidates(text))
    peeled = deny[-1]
    try:
        words: tuple[str, ...] | None = tuple(shlex.split(peeled))
    except ValueError:
        words = None
    head = words[0] if words else first_word(peeled)  # shlex could not read it: the shell words' fallback
    row = program(head)
    args = list(words[1:]) if words else []
    return PartFacts(text, deny, allow, head, row, words, _names(row, args), tuple(written_words(row.name, args)),
                     any(a.startswith("-") for a in args), row.name != "sed" or _edits_stream_only(peeled), rule_prefix(text))


def _edits_stream_only(sed: str) -> bool:
    parsed = parse_command(sed)
    if parsed.errors or len(parsed.commands) != 1 or parsed.commands[0].is_dynamic:
        return False
    return sed_script_problem(parsed.commands[0].argv) is None


def _names(row: Program, args: list[str]) -> tuple[str, ...]:
    """The names a program is given, its row read over its words: no option, and no
    option's value where the row knows the option takes one; not the pattern of a program
    that takes one first (unless an option gives it); find's starting points only; the
    program's default when none is named (``ls``: ``.``, ``cd``: ``~``)."""
    if row.expression_after_operands:
        names = args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]
    elif row.options:
        reading = read_args(row, args)
        names = [a for a in reading.operands if not a.startswith("-")] + reading.values_of(row.target_dir)
    else:
        names = [a for a in args if not a.startswith("-")]
    if row.pattern_first and names and not any(_names_pattern(a) for a in args):
        names = names[1:]
    if not names and row.default_operand is not None:
        names = [row.default_operand]
    return tuple(names)


def _names_pattern(arg: str) -> bool:
    """-e/-f (alone, bundled or with the value attached) or --regexp/--expression/--file,
    abbreviated too: the pattern or script is then not the first operand."""
    if arg.startswith("--"):
        return long_option_matches(arg, "--regexp", "--expression", "--file")
    return arg.startswith("-") and bool({"e", "f"} & set(arg[1:]))


class LineFacts:
    """The facts of one command line run in ``cwd`` (see the module's docstring)."""

    def __init__(self, command: str, cwd: str, split: Splitter = default_split) -> None:
        self.command = command
        self.cwd = cwd
        self._split = split
        # Facts that look at the file system, kept for this decision only.
        self._paths: dict[tuple[str, str], list[str] | None] = {}
        self._reads: dict[tuple[str, tuple[str, ...]], ReadTargets] = {}
        self._names: dict[tuple[str, ...], ReadTargets] = {}
        self._config: dict[tuple[str, ...] | None, str | None] = {}

    def paths(self, name: str, base: str) -> list[str] | None:
        """Where a name the line uses leads from ``base``: its normalised and its resolved
        forms (None: through /proc/self or /dev/fd, resolved in the command's own process).
        Looked up once per decision: the checks ask about the same names many times."""
        key = (name, base)
        if key not in self._paths:
            self._paths[key] = shell_paths_for_check(name, base)
        return self._paths[key]

    @property
    def too_long(self) -> bool:
        """Longer than anything below may look at in bounded time."""
        return len(self.command) > MAX_COMMAND_CHARS

    @cached_property
    def deny_forms(self) -> tuple[str, ...]:
        return tuple(deny_candidates(self.command))

    @cached_property
    def allow_forms(self) -> tuple[str, ...]:
        return tuple(allow_candidates(self.command))

    @cached_property
    def rule_prefix(self) -> str | None:
        """The words a prefix rule for the whole line would name (``git log``), or None."""
        return rule_prefix(self.command)

    @cached_property
    def runs(self) -> CommandLine:
        """Every program the line runs, with its words, however it is spelled; and why some
        cannot be told."""
        return command_line(self.command)

    @cached_property
    def parts(self) -> tuple[PartFacts, ...] | None:
        """The simple commands of the line (the line itself when it has one); None when it
        cannot be split safely."""
        subs = self._split(self.command)
        if subs is None:
            return None
        texts = [s.strip() for s in subs if s.strip()] or [self.command]
        return tuple(part_facts(text) for text in texts)

    def is_compound(self, text: str) -> bool:
        """Is ``text`` (a spelling of a part) more than one simple command to the splitter?"""
        parts = self._split(text)
        return parts is None or len(parts) != 1

    @cached_property
    def structure(self) -> tuple[str, str] | None:
        """(what, why) when the shape of the line needs a person: too many parts, several
        ``cd``, a ``cd`` beside git (which could then run in an unexpected repository)."""
        parts = self.parts or ()
        heads = [p.program for p in parts]
        if len(parts) > MAX_PARTS:
            return "too many subcommands", f"The command has {len(parts)} parts (more than {MAX_PARTS})."
        if heads.count("cd") > 1:
            return "several cd", "The command changes directory more than once."
        if "cd" in heads and "git" in heads:
            return "cd with git", ("A command that combines cd and git needs approval (it could run git in an "
                                   "unexpected repository).")
        return None

    @cached_property
    def bases(self) -> tuple[str, ...] | None:
        """``cwd`` and every folder a move in the line may lead to (None: the shell decides)."""
        found = relative_bases(self.command, self.cwd)
        return None if found is None else tuple(found)

    @cached_property
    def redirections(self) -> tuple[Redirection, ...]:
        found: list[Redirection] = []
        for cmd in parse_command(self.command).commands:
            for redirect in cmd.redirects:
                target = redirect.target
                if redirect.is_heredoc or redirect.op == "<<<" or target is None:
                    continue
                if redirect.op in (">&", "<&") and (target.value.isdigit() or target.value == "-"):
                    continue  # a file-descriptor copy such as 2>&1, or a close (>& -); "> -" is a file
                output = redirect.op in _OUTPUT_OPS
                if output and target.value in _SAFE_SINKS:
                    continue
                braced = bool(target.issues) and all(issue.startswith("brace expansion") for issue in target.issues)
                # bash brace-expands a redirection's word too (`cat < .e{n..n}v` reads .env); more
                # than one word is an "ambiguous redirect" that opens nothing, but each is judged.
                words = brace_words(target.value)
                found.append(Redirection(redirect.text, output, not target.is_static and not braced,
                                         None if words is None else tuple(words)))
        return tuple(found)

    @cached_property
    def shows_history(self) -> bool:
        """May git print file content out of the repository's history (``git log -p``)?"""
        return shows_repository_content(self.command)

    @cached_property
    def network(self) -> str | None:
        """The first program of the line that goes to the network (as written), or None."""
        return network_use(self.command)

    def reaches_outside(self, folder: str) -> str | None:
        """Why the line (run in ``folder``) may read outside ``folder``, or None."""
        return reach_outside(self.command, folder)

    def read_only(self) -> ReadOnlyVerdict:
        """The read-only verdict, with its reason (git commands judged in ``cwd``)."""
        return analyze(self.command, self.cwd)

    def reads(self, part: PartFacts, bases: tuple[str, ...]) -> ReadTargets:
        """What one part may read, its relative names judged from ``bases``."""
        key = (part.peeled, bases)
        if key not in self._reads:
            self._reads[key] = read_targets(part.peeled, bases)
        return self._reads[key]

    def names(self, bases: tuple[str, ...]) -> ReadTargets:
        """Every file the whole line names, wherever it sits (loops, substitutions, code
        strings, code fed to a shell's input)."""
        if bases not in self._names:
            self._names[bases] = line_names(self.command, bases)
        return self._names[bases]

    def config_write(self, bases: tuple[str, ...] | None) -> str | None:
        """Why the line may change a tool's config or a shell's startup file, or None."""
        if bases not in self._config:
            self._config[bases] = config_write(self.command, bases)
        return self._config[bases]


def line_facts(command: str, cwd: str, split: Splitter = default_split) -> LineFacts:
    """The facts record of ``command`` run in ``cwd`` (parts cut by ``split``).

    A new record per decision, since the file system it looks at may change between two;
    when paths are judged as written (``lexical_paths``: a replay) it looks at nothing
    but the text, so one record serves every decision about the same line and folder."""
    if not lexical_paths.active:
        return LineFacts(command, cwd, split)
    key = (command, cwd, split)
    found = _LEXICAL_FACTS.get(key)
    if found is None:
        found = _LEXICAL_FACTS[key] = LineFacts(command, cwd, split)
        if len(_LEXICAL_FACTS) > _MAX_LEXICAL_FACTS:
            try:  # the oldest goes (a worker thread judging a long line may be at it too)
                _LEXICAL_FACTS.pop(next(iter(_LEXICAL_FACTS)))
            except (StopIteration, RuntimeError, KeyError):
                pass
    return found


_LEXICAL_FACTS: dict[tuple[str, str, Splitter], LineFacts] = lexical_paths.cache()
_MAX_LEXICAL_FACTS = 2048
