"""Whether a shell line may change a tool's config or a shell's startup file.

The Bash check asks this of a whole line that is not read-only: does it name such a path
anywhere (``dd of=.git/hooks/x``, ``cd .git``, ``ln -s .git g``, a string ``sh -c``
runs, a here-string ``xargs`` reads, a variable, array or ``for`` list it sets, a glob
or brace that may make the name), or set git's configuration (``git config``, an alias
for it, ``--template``, ``--separate-git-dir``), also in code git runs later (a
``-c core.editor`` or ``GIT_EDITOR`` line, a ``rebase --exec`` step, ``--upload-pack``)? The caller then asks in every mode, as
Claude Code's safety check does for an Edit there. For cp and install only the
destination counts (``cp .claude/notes.md x`` changes x).

It over-approximates on purpose. What it cannot see: words the shell computes
(``cp x "$(printf .gi)t/hooks"``) and programs that open files by themselves
(``python -c``, ``make``, ``tar`` extracting links, ``git checkout``).
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Iterator, Sequence

from ._braces import brace_words
from ._flags import long_option_matches
from ._invocations import command_line
from ._parse import parse_command
from ._config_places import RISKY_DIRS, RISKY_FILES, risky_folder_at, safety_concern
from ._places import makes_links, unquoted
from ._programs import option_names, program, read_args
from ._reads import input_text

__all__ = ["config_write", "written_words"]


def written_words(head: str, args: list[str]) -> list[str]:
    """The words of a write command that may name what it changes: for a program whose
    row says it writes its destination (cp, install, ln) the last operand, or the value of
    a target-directory option (``-t``, bundled or attached too); an option's value is no
    operand, wherever it sits, as the row says which options take one (``cp x .git/hooks/h
    --no-preserve mode`` writes the hook). For the others every operand and option value."""
    row = program(head)
    if row.writes != "destination":
        return [a.partition("=")[2] if a.startswith("-") else a for a in args]
    reading = read_args(row, args)
    return reading.values_of(row.target_dir) or list(reading.operands[-1:])  # with -t, every operand is a source


def config_write(command: str, bases: Sequence[str] | None, _depth: int = 0) -> str | None:
    """Why ``command`` may change a tool's config or a shell's startup file, or None.

    Only meaningful for a line that is not read-only (``cat .git/config`` names one too)."""
    if _depth > _MAX_DEPTH:
        return "it nests shell code git runs too deep to follow"
    plain = unquoted(command)
    dots = "dotglob" in plain or "GLOBIGNORE" in plain  # then * and ? match a leading dot too

    places = bases if bases is not None else _named_places(command)

    judged: dict[str | None, str | None] = {}  # a word is judged once per line (runners repeat their words)

    def risky(word: str | None) -> str | None:
        if word not in judged:
            judged[word] = _risky_name(word, dots, places)
        return judged[word]

    literals = _line_literals(command)
    for invocation in command_line(command).invocations:
        found = (_git_config(invocation.words, plain) or next(filter(None, map(risky, _changed_words(invocation.words))), None)
                 or next(filter(None, map(risky, _env_split(invocation.words))), None)
                 or _renames_by_pattern(invocation.words)
                 or _git_config_later(invocation.words, plain)
                 or next(filter(None, (config_write(code, bases, _depth + 1) for code in _git_code(invocation.words))), None))
        if found is None and None in invocation.words:  # `.gi?/config`, `.gi{t,}`, `${u:-.git}`
            found = next(filter(None, map(risky, _made_names(invocation.text, literals))), None)
        if found:
            return found
    parsed = parse_command(command)
    if parsed.errors:  # after `shopt -s extglob`, `.gi@(t)/config` is one word to bash, three to the parser
        found = next(filter(None, map(risky, _raw_words(plain))), None)
        if found:
            return found
    assigned = [c.text.partition("=")[2].strip("'\"") for c in parsed.constructs if c.kind == "assignment"]
    found = next(filter(None, map(risky, [*assigned, *_loose_names(command)])), None)
    if found:
        return found
    for cmd in parsed.commands:
        values = [a.value.value for a in cmd.assignments if a.value is not None and a.value.is_static]
        head = os.path.basename(cmd.words[0].value) if cmd.words and cmd.words[0].is_static else None
        found = next(filter(None, (_git_config_later((v,), plain) for v in values)), None)  # GIT_EDITOR='git config ...'
        if found:
            return found
        values += input_text(cmd, head)  # what xargs or a shell reads as names; cat's input is data
        found = next(filter(None, (risky(w) for v in values for w in v.split())), None)
        if found:
            return found
    for base in bases or ():
        concern = safety_concern([base + os.sep])
        if concern:
            return f"it works in {base}, inside a folder whose files configure tools or can run code"
    return None


def _changed_words(words: Sequence[str | None]) -> Sequence[str | None]:
    """The words that may name what the program changes: for cp and install (when they
    make no links) their destination, as ``cp .claude/notes.md x`` changes only x; for
    the rest, every word (``ln -s .git g`` makes a way into .git)."""
    head = os.path.basename(words[0] or "")
    args = words[1:]
    if program(head).writes != "destination" or any(a is None for a in args) or makes_links(head, args, links_only=True):
        return words
    return written_words(head, [a for a in args if a is not None])


_GLOB = re.compile(r"[*?\[]|[?*+@!]\(")
_EXTGLOB = re.compile(r"[?*+@!]\([^)]*\)?")
_CLASS = re.compile(r"\[!?\^?\]?(?:\[:[a-z]+:\]|[^\]])*\]")
_WRITTEN_RUN = re.compile(r"[\w.~*?\[\]/]+")  # a path-like run inside a word the shell expands


def _risky_name(word: str | None, dots: bool = False, bases: Sequence[str] = ()) -> str | None:
    """Does the word name a tool's config folder or a shell's startup file, as written
    or as a glob may match (``.gi?``, ``.[g]it``; ``*`` when ``dots``: dotglob is on), or
    once joined to a folder the line may work in and its ``.`` and ``..`` resolved
    (``cd ~/.config && cp x git/config``)?"""
    if not word:
        return None
    candidates = [word, word.partition("=")[2]]
    if word.startswith("-") and not word.startswith("--"):
        candidates.append(word[2:])
    for candidate in filter(None, candidates):
        for form in [candidate, *(os.path.normpath(os.path.join(b, os.path.expanduser(candidate))) for b in bases)]:
            parts = form.split("/")
            if (any(_may_be(p, RISKY_DIRS, dots) or risky_folder_at(parts, i) for i, p in enumerate(parts))
                    or _may_be(parts[-1], RISKY_FILES, dots)):
                return f"it names {candidate}, in a tool's config folder or a shell's startup file"
    return None


# The options that name a folder a program works in, whichever program takes them.
_PLACE_OPTIONS = option_names("chdir")
_PLACE_LONG = tuple(sorted(o for o in _PLACE_OPTIONS if o.startswith("--")))


def _named_places(command: str) -> list[str]:
    """The folders the line names for a cd, pushd or a program's ``-C``, ``--chdir`` or
    ``--directory``: where its relative names may lead when the shell decides the rest
    (``cd ~/.config; cp ~-/x git/config``)."""
    places: list[str] = []
    for invocation in command_line(command).invocations:
        words = (*invocation.words, *_env_split(invocation.words))
        mover = os.path.basename(words[0] or "") in ("cd", "pushd")
        for i, word in enumerate(words[1:], 1):
            if word is None:
                continue
            if mover and not word.startswith("-"):
                places.append(word)
            elif words[i - 1] in _PLACE_OPTIONS or ("=" not in (words[i - 1] or "=") and long_option_matches(words[i - 1] or "", *_PLACE_LONG)):
                places.append(word)
            elif "=" in word and long_option_matches(word.partition("=")[0], *_PLACE_LONG):
                places.append(word.partition("=")[2])
    return [os.path.expanduser(p) for p in places]


def _renames_by_pattern(words: Sequence[str | None]) -> str | None:
    """An option after which which files the program writes cannot be told (the program
    table's unknown_writes: tar ``--transform``, ``--xform`` names what it extracts by a sed
    expression, so ``--transform 's/^x/./'`` makes .git)."""
    row = program(words[0] if words else None)
    for word in words[1:]:
        found = next((why for option, why in row.unknown_writes.items() if word is not None and long_option_matches(word, option)), None)
        if found:
            return found
    return None


def _env_split(words: Sequence[str | None]) -> list[str]:
    """The words env splits an ``-S`` / ``--split-string`` string into (its own options
    among them: ``env -S'-C .git' cp ../x hooks/pre-commit``), as blanks separate them."""
    row = program(words[0] if words else None)
    if not row.split_string:
        return []
    return [part for value in read_args(row, words[1:]).values_of(row.split_string) for part in value.split()]


def _may_be(part: str, names: frozenset[str], dots: bool) -> bool:
    if part in names:
        return True
    if not _GLOB.search(part):
        return False
    # Over-approximate: any case (nocaseglob), an extglob group or a [[:class:]] matches
    # anything; a leading dot must be written unless dotglob is on, as bash requires.
    pattern = _CLASS.sub(lambda m: "?" if "[:" in m.group() else m.group().replace("[^", "[!"), _EXTGLOB.sub("*", part))
    dot_ok = dots or part.startswith(".") or ("(" in part and "." in part)
    return any(fnmatch.fnmatchcase(name.lower(), pattern.lower()) for name in names if dot_ok or not name.startswith("."))


def _made_names(text: str, literals: Sequence[str] = ()) -> Iterator[str]:
    """What the words of a simple command the shell expands may become, as far as their
    literal parts tell: each brace expansion, with an expansion's visible default as its
    value (``${u:-.git}/config``) and any other expansion empty, or every variable one of
    the line's literal values (``v=gi; cp x .${v}t/config``, a ``for`` list). A word is
    judged by its ``/``-parts whole: ``"$(date) see .git/hooks"`` is a message, not a path
    into .git."""
    for cmd in parse_command(text).commands:
        for word in cmd.words:
            if not word.is_static:
                for value in brace_words(word.value) or [word.value]:
                    yield _DEFAULTED.sub(r"\1", value)
                    yield _EXPANSION.sub("", _DEFAULTED.sub(r"\1", value))
                for literal in literals:  # the text as written: in "$v"t the name is v
                    yield re.sub(r"[\"']", "", _EXPANSION.sub("", _VARIABLE.sub(lambda m: _expand(m, literal), word.text)))


_MAX_LITERALS = 24
# $v, ${v}, and ${v/x/y} (${v//x/y}): a replacement with literal parts.
_VARIABLE = re.compile(r"\$\{\w+(?:(//?)([^/{}$]*)/([^{}$]*))?\}|\$\w+")


def _expand(match: re.Match[str], literal: str) -> str:
    if match.group(1) is None or not match.group(2):
        return literal
    return literal.replace(match.group(2), match.group(3), -1 if match.group(1) == "//" else 1)


def _line_literals(command: str) -> list[str]:
    """The literal values the line may give a variable: what it assigns (``v=.gi``), a
    ``for`` list, a prefix assignment's value (at most _MAX_LITERALS of them)."""
    values = dict.fromkeys(_loose_names(command))
    for cmd in parse_command(command).commands:
        values.update(dict.fromkeys(a.value.value for a in cmd.assignments if a.value is not None and a.value.is_static))
    return list(values)[:_MAX_LITERALS]


_DEFAULTED = re.compile(r"\$\{#?\w+:?[-=+?]([^{}$]*)\}")
_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|`[^`]*`|\$[\w@*#?$!-]")


def _raw_words(plain: str) -> Iterator[str]:
    """The unquoted line cut only at blanks and at ``;&<>``, for a line the parser cannot
    read as bash does: an extended glob (``.+(g|i|t)``) stays whole, braces expanded."""
    for token in re.split(r"[\s;&<>]+", plain):
        yield from brace_words(token) or [token]


def _loose_names(command: str) -> Iterator[str]:
    """The path-like runs of the line outside the words of its simple commands and the
    input it gives them (which the caller judges one by one): a ``for`` or ``select``
    list, an array or a ``declare``, an assignment, a command whose name the shell computes."""
    chars = list(command)
    for cmd in parse_command(command).commands:
        spans = [(r.start, r.end) for r in cmd.redirects if r.is_heredoc or r.op == "<<<"]
        if cmd.words and cmd.words[0].is_static:
            spans += [(w.start, w.end) for w in cmd.words]
        for start, end in spans:
            chars[start:end] = " " * (end - start)
    for token in "".join(chars).split():
        for value in brace_words(token) or [token]:
            yield from _WRITTEN_RUN.findall(value)


_MAX_DEPTH = 4


def _git_code(words: Sequence[str | None]) -> list[str]:
    """The shell lines a git command runs later: a ``-c`` value (``core.editor``,
    ``core.pager``, ``sequence.editor``...), a ``rebase -x`` / ``--exec`` step, an
    ``--upload-pack`` / ``--receive-pack`` program, what ``submodule foreach`` runs (the
    program table's config_options, code_options and code_words columns)."""
    row = program(words[0] if words else None)
    if not (row.code_options or row.config_options or row.code_words):
        return []
    short = {o for o in row.code_options | row.config_options if len(o) == 2}
    longs = [o for o in row.code_options if o.startswith("--")]
    code: list[str] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else None
        if word is None:
            continue
        if word in row.code_words:
            code.append(" ".join(w for w in words[i + 1:] if w is not None))
        elif word in short and following is not None:
            code.append(following.partition("=")[2] if word in row.config_options else following)
        elif word[:2] in short and len(word) > 2 and word[:2] not in row.config_options:
            code.append(word[2:])
        elif longs and long_option_matches(word, *longs):
            code.append(word.partition("=")[2] if "=" in word else following or "")
    return code


def _git_config_later(words: Sequence[str | None], plain: str) -> str | None:
    """`git config` behind a runner the check does not peel (``flock f git config``,
    ``watch``, ``git bisect run git config``), or in a string a program may run later as
    a shell line (``core.editor=git config ...``, ``GIT_EDITOR='git config ...'``)."""
    for i, word in enumerate(words):
        if word is None:
            continue
        if i and os.path.basename(word) == "git":
            found = _git_config(words[i:], plain)
            if found:
                return found
        for text in {word, word.partition("=")[2]}:
            if len(text.split()) > 1:  # a word with blanks: a message, or a line something runs
                found = next(filter(None, (_git_config(i.words, plain) for i in command_line(text).invocations)), None)
                if found:
                    return found
    return None


def _git_config(words: Sequence[str | None], plain: str) -> str | None:
    """`git config` (unless the line is read-only), `--template`, `--separate-git-dir`
    (``git init --sep gd`` moves .git to gd, where a hook is then one cp away) and an alias the line
    gives git (`git -c alias.x=config x ...`, GIT_CONFIG_KEY_0=alias.x): git's own config."""
    if not words or words[0] is None or os.path.basename(words[0]) != "git":
        return None
    if any(w is not None and long_option_matches(w, "--template") for w in words):
        return "git copies a template's hooks into the repository"
    if any(w is not None and long_option_matches(w, "--separate-git-dir") for w in words):
        return "git moves the repository to a folder whose hooks nothing then guards"
    if "alias." in plain.lower():
        return "the line gives git an alias, which may run `git config`"
    rest = words[1:]
    reading = read_args(program("git"), rest)  # git's own options, then its subcommand
    subcommand = rest[reading.end] if reading.problem is None and reading.end < len(rest) else None
    if reading.problem is not None or subcommand == "config":
        return "`git config` changes git's configuration, which can run programs"
    return None
