"""Where a shell line's relative names lead, and whether it names a tool's config.

Two questions the Bash check asks of a whole line, not of one simple command:

* ``relative_bases``: the folders a relative name in the line may start from. A line
  may move the shell before it reads (``cd a && cd b``, ``pushd a``, ``cd -P a``,
  ``builtin cd a``), so ``../../secrets/key.txt`` is judged from every folder the line
  may be in by then. When the shell decides that, the answer is None: ``cd "$D"``,
  ``cd -``, ``~+``, a ``HOME`` or ``CDPATH`` the line sets, cdable_vars, a move in a
  loop, a substitution or a string another shell runs, a program name the shell
  computes (it may be ``cd``), or links the line makes before it goes on (a name
  through them leads wherever the link points). A Read rule then makes the line ask,
  even in bypass mode.
* ``config_write``: why a line that changes files may change a tool's config or a
  shell's startup file: it names such a path anywhere (``dd of=.git/hooks/x``,
  ``cd .git``, ``ln -s .git g``, a string ``sh -c`` runs, a here-string ``xargs`` reads,
  a variable it sets), or it sets git's configuration. The caller asks, in every mode,
  as Claude Code's safety check does for an Edit there.

Both over-approximate on purpose. What neither can see: words the shell computes
(``cp x "$(printf .gi)t/hooks"``), and programs that open files by themselves
(``python -c``, ``make``, ``tar`` extracting links, ``git checkout``).
"""

from __future__ import annotations

import os
import re
from typing import Sequence

from ..shell._flags import long_option_matches
from ..shell._invocations import Invocation, command_line
from ..shell._parse import parse_command, subcommand_strings
from ._paths import RISKY_DIRS, RISKY_FILES, safety_concern, shell_paths_for_check

__all__ = ["config_write", "relative_bases", "written_words"]

_MOVERS = frozenset({"cd", "pushd", "popd"})
_CD_OPTIONS = frozenset("LPe@")
_ROTATION = re.compile(r"[+-][0-9]+")  # pushd/popd +N, -N: a folder already on the stack
_SHELL_SET_PLACE = re.compile(r"CDPATH|BASHOPTS|~[+-]")  # ~+ is $PWD, ~- is $OLDPWD
_MAX_BASES = 32
# cp options that make links, or copy the links it finds as links (-a, -d, -P, -r, -R).
_CP_LINK_SHORT = frozenset("slaPdrR")
_CP_LINK_LONG = ("--symbolic-link", "--link", "--archive", "--no-dereference", "--recursive")


def relative_bases(command: str, cwd: str) -> list[str] | None:
    """``cwd`` and every folder a move in ``command`` may lead to (None: the shell decides)."""
    if _SHELL_SET_PLACE.search(command):
        return None
    line = command_line(command)
    if line.computes_code:
        return None  # `c=cd; $c a`
    invocations = line.invocations
    moves = False
    for index, invocation in enumerate(invocations):
        name = _name(invocation)
        if name in ("source", ".", "shopt") or any(w is not None and "cdable" in w for w in invocation.words):
            return None  # a file run in this shell may cd; cdable_vars: `cd D` goes to $D
        if index < len(invocations) - 1 and _makes_links(name, invocation.words[1:]):
            return None
        if name in _MOVERS:
            if invocation.nested:
                return None
            moves = True
    home_changed = "HOME" in command
    if home_changed and "~" in command:
        return None
    if not moves:
        return [cwd]
    if subcommand_strings(command) is None:
        return None  # a move in a loop, a function or a substitution: how often, the shell decides
    bases = [cwd]
    for cmd in parse_command(command).commands:  # in order; each runs at most once
        stage = next((i for i in command_line(cmd.text).invocations if _name(i) in _MOVERS), None)
        targets = _move_targets(_name(stage), stage.words[1:], home_changed) if stage else []
        if targets is None:
            return None
        for target in targets:
            for base in list(bases):
                found = shell_paths_for_check(target, base)
                if found is None:
                    return None
                # Both the folder bash's logical PWD names and the one the process is in.
                for place in (os.path.normpath(os.path.join(base, os.path.expanduser(target))), *found):
                    if place not in bases:
                        bases.append(place)
        if len(bases) > _MAX_BASES:
            return None
    return bases


def _name(invocation: Invocation) -> str:
    return os.path.basename(invocation.words[0] or "")


def _move_targets(name: str, args: Sequence[str | None], home_changed: bool) -> list[str] | None:
    """The folders a cd, pushd or popd may move to that are not already on the stack."""
    if any(a is None for a in args):
        return None
    operands: list[str] = []
    for i, arg in enumerate(args):
        assert arg is not None
        if arg == "--":
            operands.extend(a for a in args[i + 1:] if a is not None)
            break
        if len(arg) > 1 and arg.startswith("-") and not _ROTATION.fullmatch(arg):
            if (name == "cd" and set(arg[1:]) <= _CD_OPTIONS) or (name == "popd" and arg == "-n"):
                continue
            # pushd -n keeps the name as written, and a later popd resolves it from
            # wherever the shell is by then: the shell decides, as for any other option.
            return None  # an option bash would refuse, or one we do not know
        operands = [a for a in args[i:] if a is not None]
        break
    if name == "popd" or (name == "pushd" and (not operands or _ROTATION.fullmatch(operands[0]))):
        return [] if all(_ROTATION.fullmatch(o) for o in operands) else None
    target = operands[0] if operands else "~"
    if target == "-" or any(ch in target for ch in "*?["):
        return None
    if target.startswith("~") and (home_changed or not (target == "~" or target.startswith("~/"))):
        return None
    return [target]


def _makes_links(name: str, args: Sequence[str | None], *, links_only: bool = False) -> bool:
    """Does the command make links (``links_only``), or copy links as links too?"""
    if name in ("ln", "link"):
        return True
    if name != "cp":
        return False
    short, long = (_CP_LINK_SHORT, _CP_LINK_LONG) if not links_only else (frozenset("sl"), _CP_LINK_LONG[:2])
    for arg in args:
        if arg is None or arg == "--":
            return arg is None
        if arg.startswith("--"):
            if long_option_matches(arg.partition("=")[0], *long):
                return True
        elif arg.startswith("-") and short & set(arg[1:]):
            return True
    return False


_COPIERS = frozenset({"cp", "install", "ln"})  # they write only their destination


def written_words(head: str, args: list[str]) -> list[str]:
    """The words of a write command that may name what it changes: for cp, install and
    ln the destination (the last operand, or a -t / --target-directory folder, bundled or
    attached too); for the others every operand and option value."""
    if head not in _COPIERS:
        return [a.partition("=")[2] if a.startswith("-") else a for a in args]
    operands = [a for a in args if not a.startswith("-")]
    written = operands[-1:]
    for i, arg in enumerate(args):
        if arg.startswith("--t"):  # --target-directory, or any abbreviation of it
            written.append(arg.partition("=")[2] or (args[i + 1] if i + 1 < len(args) else ""))
        elif arg.startswith("-") and not arg.startswith("--") and "t" in arg:
            rest = arg[arg.index("t") + 1:]
            written.append(rest or (args[i + 1] if i + 1 < len(args) else ""))
    return written


def config_write(command: str, bases: Sequence[str] | None) -> str | None:
    """Why ``command`` may change a tool's config or a shell's startup file, or None.

    Only meaningful for a line that is not read-only (``cat .git/config`` names one too)."""
    for invocation in command_line(command).invocations:
        found = _git_config(invocation) or next(filter(None, map(_risky_name, _changed_words(invocation.words))), None)
        if found:
            return found
    parsed = parse_command(command)
    assigned = [c.text.partition("=")[2].strip("'\"") for c in parsed.constructs if c.kind == "assignment"]
    found = next(filter(None, map(_risky_name, assigned)), None)
    if found:
        return found
    for cmd in parsed.commands:
        values = [a.value.value for a in cmd.assignments if a.value is not None and a.value.is_static]
        values += [r.target.value for r in cmd.redirects if (r.is_heredoc or r.op == "<<<") and r.target is not None]
        found = next(filter(None, (_risky_name(w) for v in values for w in v.split())), None)
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
    if head not in ("cp", "install") or any(a is None for a in args) or (head == "cp" and _makes_links(head, args, links_only=True)):
        return words
    return written_words(head, [a for a in args if a is not None])


def _risky_name(word: str | None) -> str | None:
    if not word:
        return None
    candidates = [word, word.partition("=")[2]]
    if word.startswith("-") and not word.startswith("--"):
        candidates.append(word[2:])
    for candidate in candidates:
        parts = candidate.split("/")
        if any(p in RISKY_DIRS for p in parts) or parts[-1] in RISKY_FILES:
            return f"it names {candidate}, in a tool's config folder or a shell's startup file"
    return None


def _git_config(invocation: Invocation) -> str | None:
    """`git config` (unless the line is read-only) and `--template`: git's own config."""
    words = invocation.words
    if not words or words[0] is None or os.path.basename(words[0]) != "git":
        return None
    if any(w is not None and w.startswith("--template") for w in words):
        return "git copies a template's hooks into the repository"
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            skip = True
        elif word is None or not word.startswith("-"):
            return "`git config` changes git's configuration, which can run programs" if word in (None, "config") else None
    return None
