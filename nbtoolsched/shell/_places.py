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

from ._flags import long_option_matches
from ._invocations import Invocation, command_line
from ._parse import parse_command, subcommand_strings
from ._paths import links_under, shell_paths_for_check
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
# cp options that make links, or copy the links it finds as links (-a, -d, -P, -r, -R).
_CP_LINK_SHORT = frozenset("slaPdrR")
_CP_LINK_LONG = ("--symbolic-link", "--link", "--archive", "--no-dereference", "--recursive")


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


# Runners and programs told which folder to work in, and how: their options that take a
# value (short letters, long names), and the ones among them that change the folder.
_ENV_VALUED = ("uCS", ("--unset", "--chdir", "--split-string"))
_SUDO_VALUED = ("CDghpRrtTUu", ("--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role",
                                "--type", "--command-timeout", "--other-user", "--user"))
_TAR_VALUED = ("fCbTXKNVgHILF", ("--directory",))
_CHDIR_SHORT = {"env": "C", "sudo": "DR", "tar": "C"}
_CHDIR_LONG = {"env": ("--chdir",), "sudo": ("--chdir",), "tar": ("--directory",)}
_GIT_VALUED = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--attr-source"})


def _elsewhere(name: str, args: Sequence[str | None]) -> list[str] | None:
    """The folders, in order, a runner or program is told to work in, each from the last
    (``env -C a``, ``sudo -D a``, ``tar -C a -C b``, ``git -C a``); None when it decides
    (``find -execdir`` runs in the folder of each file it finds, ``sudo -R`` changes the
    root, a computed folder)."""
    if name == "find":
        for i, arg in enumerate(args):
            if arg in ("-execdir", "-okdir"):
                inner = itertools.takewhile(lambda w: w not in (";", "+"), args[i + 2:])
                if any(w is None or not (w.startswith("-") or "{}" in w) for w in inner):
                    return None  # `-execdir cat ../x`; `-execdir rm {} +` names nothing itself
        return []
    if name == "git":
        return _git_folders(args)
    if name not in _CHDIR_SHORT:
        return []
    if name == "tar" and args and args[0] is not None and not args[0].startswith("-") and "C" in args[0]:
        return None  # `tar Cxf dir ...`: old-style letters, their values in order
    short, long = {"env": _ENV_VALUED, "sudo": _SUDO_VALUED, "tar": _TAR_VALUED}[name]
    folders: list[str] = []
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg is None:
            return None
        if arg == "--" or not arg.startswith("-") or arg == "-":
            if name == "tar" and arg != "--":
                continue  # GNU tar takes options after its operands too
            break
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            if not long_option_matches(flag, *long):
                continue
            if not eq:
                if i >= len(args) or args[i] is None:
                    return None
                value, i = str(args[i]), i + 1
            if name == "sudo" and long_option_matches(flag, "--chroot"):
                return None
            if name == "env" and long_option_matches(flag, "--split-string") and _starts_with_option(value):
                return None
            if long_option_matches(flag, *_CHDIR_LONG[name]):
                folders.append(value)
            continue
        for j, letter in enumerate(arg[1:], 1):
            if letter not in short:
                continue
            value = arg[j + 1:]
            if not value:
                if i >= len(args) or args[i] is None:
                    return None
                value, i = str(args[i]), i + 1
            if name == "env" and letter == "S" and _starts_with_option(value):
                return None
            if letter in _CHDIR_SHORT[name]:
                if name == "sudo" and letter == "R":
                    return None
                folders.append(value)
            break
    return folders


def _starts_with_option(split_string: str) -> bool:
    """Does an ``env -S`` string start with options? env reads them as its own (``-S '-C
    a/b cat ../x'``), so where it runs the command the shell's words no longer tell."""
    return split_string.lstrip(" \t\n\"'\\").startswith("-")


def _git_folders(args: Sequence[str | None]) -> list[str] | None:
    """The ``-C`` folders of git's own options, before its subcommand."""
    folders: list[str] = []
    words = iter(args)
    for arg in words:
        if arg is None:
            return None
        if arg in _GIT_VALUED or arg == "-C":
            value = next(words, "")
            if value is None:
                return None
            if arg == "-C":
                folders.append(value)
        elif not arg.startswith("-"):
            break
    return folders


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


def _moves_links(name: str, args: Sequence[str | None], cwd: str, after_cd: bool) -> bool:
    """Does the command move or copy links that exist already (``mv a/b/s a/s``: a link
    ``../secrets`` leads elsewhere from its new folder)? rsync may copy links as links;
    after a cd (``after_cd``) or with a computed or glob name, which files mv moves
    cannot be told here."""
    if name == "rsync":
        return True
    if name not in ("mv", "rename"):
        return False
    for arg in args:
        if arg is None or any(ch in arg for ch in "*?[") or after_cd:
            return True  # which files it moves cannot be told here
        path = os.path.join(cwd, os.path.expanduser(arg))
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
