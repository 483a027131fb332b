"""Where a shell line's relative names lead: the folders a relative name may start from.

A line may move the shell before it reads (``cd a && cd b``, ``pushd a``, ``cd -P a``,
``builtin cd a``), or tell a program where to work (``env -C a``, ``tar -C a``,
``git -C a``), so ``../../secrets/key.txt`` is judged from every folder the line may be
in by then. When the shell decides that, the answer is None: ``cd "$D"``, ``cd -``,
``~+``, ``$OLDPWD`` after a move, a ``HOME`` or ``CDPATH`` the line sets, cdable_vars, a move in a loop, a
substitution or a string another shell runs, a program name the shell computes (it may
be ``cd``), ``find -execdir``, or links the line makes or moves before it goes on (a
name through them leads wherever the link points). A Read rule then makes the line
ask, even in bypass mode.

It over-approximates on purpose. What it cannot see: words the shell computes, code a
shell reads from a pipe or a file, and programs that open files by themselves
(``python -c``, ``make``, ``tar`` extracting links).
"""

from __future__ import annotations

import itertools
import os
import re
from typing import Sequence

from ._invocations import Invocation, command_line
from ._lexical import lexical_paths
from ._parse import parse_command, subcommand_strings
from ._paths import links_under, shell_paths_for_check
from ._programs import program, read_args
from ._reads import input_text

__all__ = ["makes_links", "relative_bases", "unquoted"]

_MOVERS = frozenset({"cd", "pushd", "popd"})
_CD_OPTIONS = frozenset("LPe@")
_ROTATION = re.compile(r"[+-][0-9]+")  # pushd/popd +N, -N: a folder already on the stack
# ~+ is $PWD, ~- is $OLDPWD; BASH_ENV is a file a shell the line starts runs first (it may cd).
_SHELL_SET_PLACE = re.compile(r"CDPATH|BASHOPTS|BASH_ENV|~[+-]|(?:^|[\s=:;&|(<>])~[0-9]")  # not HEAD~1
# After a move: the folder bash is in, the one it left, its folder stack (~+, ~-, ~1 by name).
_MOVED_PLACE = re.compile(r"\$\{?(?:PWD|OLDPWD|DIRSTACK)\b")
_MAX_BASES = 32


def relative_bases(command: str, cwd: str) -> list[str] | None:
    """``cwd`` and every folder a move in ``command`` may lead to (None: the shell decides)."""
    plain = unquoted(command)  # `export HO''ME=...` sets HOME too
    if _SHELL_SET_PLACE.search(plain):
        return None
    line = command_line(command)
    if line.computes_code:
        return None  # `c=cd; $c a`
    invocations = line.invocations
    moves = False
    hops: list[list[str]] = []  # folders a runner or program is told to work in (env -C, tar -C)
    moving = any(_name(i) in _MOVERS for i in invocations)  # then a mv's names are judged from elsewhere
    for index, invocation in enumerate(invocations):
        name = _name(invocation)
        if name in ("source", ".", "shopt") or any(w is not None and "cdable" in w for w in invocation.words):
            return None  # a file run in this shell may cd; cdable_vars: `cd D` goes to $D
        if index < len(invocations) - 1 and (makes_links(name, invocation.words[1:])
                                             or _moves_links(name, invocation.words[1:], cwd, moving)):
            return None
        if name in _MOVERS:
            if invocation.nested:
                return None
            moves = True
        hop = _elsewhere(name, invocation.words[1:])
        if hop is None:
            return None
        if hop:
            hops.append(hop)
    for cmd in parse_command(command).commands:  # `bash <<< 'cd a; cat ../x'`: a move in code fed to a shell
        head = os.path.basename(cmd.words[0].value) if cmd.words and cmd.words[0].is_static else None
        if any(relative_bases(text, cwd) != [cwd] for text in input_text(cmd, head)):
            return None
    home_changed = "HOME" in plain
    if home_changed and "~" in command:
        return None
    if not moves:
        return _hop([cwd], hops)
    if _MOVED_PLACE.search(plain):
        return None  # `cd a/b && cat $OLDPWD/.env`
    if subcommand_strings(command) is None:
        return None  # a move in a loop, a function or a substitution: how often, the shell decides
    bases = [cwd]
    for cmd in parse_command(command).commands:  # in order; each runs at most once
        stage = next((i for i in command_line(cmd.text).invocations if _name(i) in _MOVERS), None)
        targets = _move_targets(_name(stage), stage.words[1:], home_changed) if stage else []
        if targets is None:
            return None
        if not all(_move(bases, target) for target in targets) or len(bases) > _MAX_BASES:
            return None
    return _hop(bases, hops)


def _move(bases: list[str], target: str) -> bool:
    """Add to ``bases`` where ``target`` leads from each of them: both the folder bash's
    logical PWD names and the one the process is in (False: a path resolved in the
    command's own process, /proc/self...)."""
    for base in list(bases):
        found = shell_paths_for_check(target, base)
        if found is None:
            return False
        for place in (os.path.normpath(os.path.join(base, os.path.expanduser(target))), *found):
            if place not in bases:
                bases.append(place)
    return True


def _hop(bases: list[str], hops: list[list[str]]) -> list[str] | None:
    """``bases`` and the folders each chain of ``hops`` leads to from any of them."""
    for chain in hops:
        start = list(bases)
        if not all(_move(start, target) for target in chain):
            return None
        bases.extend(p for p in start if p not in bases)
        if len(bases) > _MAX_BASES:
            return None
    return bases


def _elsewhere(name: str, args: Sequence[str | None]) -> list[str] | None:
    """The folders, in order, a runner or program is told to work in, each from the last
    (``env -C a``, ``sudo -D a``, ``tar -C a -C b``, ``git -C a``: the program table's
    chdir column); None when it decides (``find -execdir`` runs in the folder of each file
    it finds, ``sudo -R`` changes the root, a computed folder, an ``env -S`` string
    holding options)."""
    row = program(name)
    if row.runs_in_found_folder:
        for i, arg in enumerate(args):
            if arg in row.runs_in_found_folder:
                inner = itertools.takewhile(lambda w: w not in (";", "+"), args[i + 2:])
                if any(w is None or not (w.startswith("-") or "{}" in w) for w in inner):
                    return None  # `-execdir cat ../x`; `-execdir rm {} +` names nothing itself
        return []
    if not row.chdir:
        return []
    first = args[0] if args else None
    if row.old_style_letters and first is not None and not first.startswith("-") and any(
            len(o) == 2 and o[1] in first for o in row.chdir):
        return None  # `tar Cxf dir ...`: old-style letters, their values in order
    reading = read_args(row, args)
    if reading.problem is not None or reading.uses(row.new_root):
        return None
    if any(_starts_with_option(value) for value in reading.values_of(row.split_string)):
        return None
    return reading.values_of(row.chdir)


def _starts_with_option(split_string: str) -> bool:
    """Does an ``env -S`` string start with options? env reads them as its own (``-S '-C
    a/b cat ../x'``), so where it runs the command the shell's words no longer tell."""
    return split_string.lstrip(" \t\n\"'\\").startswith("-")


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


def makes_links(name: str, args: Sequence[str | None], *, links_only: bool = False) -> bool:
    """Does the command make links (``links_only``), or copy links as links too (the
    program table's always_links, makes_links and copies_links columns)? A word the
    shell computes among its options may be such an option."""
    row = program(name)
    if row.always_links:
        return True
    options = row.makes_links if links_only else row.makes_links | row.copies_links
    if not options:
        return False
    reading = read_args(row, args)
    return reading.problem is not None or reading.uses(options)


def _moves_links(name: str, args: Sequence[str | None], cwd: str, after_cd: bool) -> bool:
    """Does the command move or copy links that exist already (``mv a/b/s a/s``: a link
    ``../secrets`` leads elsewhere from its new folder)? rsync may copy links as links;
    after a cd (``after_cd``) or with a computed or glob name, which files mv moves
    cannot be told here."""
    row = program(name)
    if row.copies_links_always:
        return True
    if not row.moves_files:
        return False
    for arg in args:
        if arg is None or any(ch in arg for ch in "*?[") or after_cd:
            return True  # which files it moves cannot be told here
        path = os.path.join(cwd, os.path.expanduser(arg))
        if lexical_paths.active:  # a replay: no link is known (_lexical)
            continue
        if not arg.startswith("-") and (os.path.islink(path) or (os.path.isdir(path) and links_under(path) != [])):
            return True
    return False


def unquoted(command: str) -> str:
    """The line with quotes, backslashes and line continuations removed and ``$'...'``
    escapes decoded: how a name such as HOME reads once the shell has unquoted it
    (``HO''ME``, ``HO\\ME``, ``$'HO\\x4dE'``)."""
    def decode(match: re.Match[str]) -> str:
        try:
            return match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return match.group(1)
    text = re.sub(r"\$'((?:[^'\\]|\\.)*)'", decode, command.replace("\\\n", ""))
    return re.sub(r"[\\'\"]", "", text)
