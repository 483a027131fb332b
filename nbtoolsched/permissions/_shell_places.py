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

import fnmatch
import itertools
import os
import re
from typing import Iterator, Sequence

from ..shell._braces import brace_words
from ..shell._flags import long_option_matches
from ..shell._invocations import Invocation, command_line
from ..shell._parse import parse_command, subcommand_strings
from ._shell_reads import input_text
from ._paths import RISKY_DIRS, RISKY_FILES, links_under, risky_folder_at, safety_concern, shell_paths_for_check

__all__ = ["config_write", "relative_bases", "written_words"]

_MOVERS = frozenset({"cd", "pushd", "popd"})
_CD_OPTIONS = frozenset("LPe@")
_ROTATION = re.compile(r"[+-][0-9]+")  # pushd/popd +N, -N: a folder already on the stack
# ~+ is $PWD, ~- is $OLDPWD; BASH_ENV is a file a shell the line starts runs first (it may cd).
_SHELL_SET_PLACE = re.compile(r"CDPATH|BASHOPTS|BASH_ENV|~[+-]")
_MAX_BASES = 32
# cp options that make links, or copy the links it finds as links (-a, -d, -P, -r, -R).
_CP_LINK_SHORT = frozenset("slaPdrR")
_CP_LINK_LONG = ("--symbolic-link", "--link", "--archive", "--no-dereference", "--recursive")


def relative_bases(command: str, cwd: str) -> list[str] | None:
    """``cwd`` and every folder a move in ``command`` may lead to (None: the shell decides)."""
    plain = _plain(command)  # `export HO''ME=...` sets HOME too
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
        if index < len(invocations) - 1 and (_makes_links(name, invocation.words[1:])
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
    return _hop(bases, hops)


def _hop(bases: list[str], hops: list[list[str]]) -> list[str] | None:
    """``bases`` and the folders each chain of ``hops`` leads to from any of them."""
    for chain in hops:
        start = list(bases)
        for target in chain:
            for base in list(start):
                found = shell_paths_for_check(target, base)
                if found is None:
                    return None
                for place in (os.path.normpath(os.path.join(base, os.path.expanduser(target))), *found):
                    if place not in start:
                        start.append(place)
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
            if letter in _CHDIR_SHORT[name]:
                if name == "sudo" and letter == "R":
                    return None
                folders.append(value)
            break
    return folders


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


_COPIERS = frozenset({"cp", "install", "ln"})  # they write only their destination
# Their options that take a value as the next word (GNU: also after the operands).
_COPIER_VALUED_SHORT = {"cp": "St", "ln": "St", "install": "mogSt"}
_COPIER_VALUED_LONG = {"cp": ("--suffix", "--target-directory"), "ln": ("--suffix", "--target-directory"),
                       "install": ("--mode", "--owner", "--group", "--suffix", "--target-directory", "--strip-program")}


def written_words(head: str, args: list[str]) -> list[str]:
    """The words of a write command that may name what it changes: for cp, install and
    ln the destination (the last operand, or a -t / --target-directory folder, bundled or
    attached too; an option's value is no operand, wherever it sits, and every word
    after ``--`` is one); for the others every operand and option value."""
    if head not in _COPIERS:
        return [a.partition("=")[2] if a.startswith("-") else a for a in args]
    operands: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        value: str | None = None
        if arg.startswith("--"):
            flag, eq, attached = arg.partition("=")
            if not long_option_matches(flag, *_COPIER_VALUED_LONG[head]):
                continue
            value = attached if eq else (args[i] if i < len(args) else "")
            i += 0 if eq else 1
            if long_option_matches(flag, "--target-directory"):
                targets.append(value)
            continue
        for j, letter in enumerate(arg[1:], 1):
            if letter in _COPIER_VALUED_SHORT[head]:
                value = arg[j + 1:] or (args[i] if i < len(args) else "")
                i += 0 if arg[j + 1:] else 1
                if letter == "t":
                    targets.append(value)
                break
    return targets or operands[-1:]  # with -t, every operand is a source


def config_write(command: str, bases: Sequence[str] | None) -> str | None:
    """Why ``command`` may change a tool's config or a shell's startup file, or None.

    Only meaningful for a line that is not read-only (``cat .git/config`` names one too)."""
    plain = _plain(command)
    dots = "dotglob" in plain or "GLOBIGNORE" in plain  # then * and ? match a leading dot too

    def risky(word: str | None) -> str | None:
        return _risky_name(word, dots)

    for invocation in command_line(command).invocations:
        found = _git_config(invocation, plain) or next(filter(None, map(risky, _changed_words(invocation.words))), None)
        if found is None and None in invocation.words:  # `.gi?/config`, `.gi{t,}`, `${u:-.git}`
            found = next(filter(None, map(risky, _made_names(invocation.text))), None)
        if found:
            return found
    parsed = parse_command(command)
    assigned = [c.text.partition("=")[2].strip("'\"") for c in parsed.constructs if c.kind == "assignment"]
    found = next(filter(None, map(risky, [*assigned, *_loose_names(command)])), None)
    if found:
        return found
    for cmd in parsed.commands:
        values = [a.value.value for a in cmd.assignments if a.value is not None and a.value.is_static]
        head = os.path.basename(cmd.words[0].value) if cmd.words and cmd.words[0].is_static else None
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
    if head not in ("cp", "install") or any(a is None for a in args) or (head == "cp" and _makes_links(head, args, links_only=True)):
        return words
    return written_words(head, [a for a in args if a is not None])


_GLOB = re.compile(r"[*?\[]|[?*+@!]\(")
_EXTGLOB = re.compile(r"[?*+@!]\([^)]*\)?")
_CLASS = re.compile(r"\[!?\^?\]?(?:\[:[a-z]+:\]|[^\]])*\]")
_WRITTEN_RUN = re.compile(r"[\w.~*?\[\]/]+")  # a path-like run inside a word the shell expands


def _risky_name(word: str | None, dots: bool = False) -> str | None:
    """Does the word name a tool's config folder or a shell's startup file, as written
    or as a glob may match (``.gi?``, ``.[g]it``; ``*`` when ``dots``: dotglob is on)?"""
    if not word:
        return None
    candidates = [word, word.partition("=")[2]]
    if word.startswith("-") and not word.startswith("--"):
        candidates.append(word[2:])
    for candidate in candidates:
        parts = candidate.split("/")
        if (any(_may_be(p, RISKY_DIRS, dots) or risky_folder_at(parts, i) for i, p in enumerate(parts))
                or _may_be(parts[-1], RISKY_FILES, dots)):
            return f"it names {candidate}, in a tool's config folder or a shell's startup file"
    return None


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


def _made_names(text: str) -> Iterator[str]:
    """What the words of a simple command the shell expands may become, as far as their
    literal parts tell: each brace expansion, with an expansion's visible default as its
    value (``${u:-.git}/config``) and any other expansion empty. A word is judged by its
    ``/``-parts whole: ``"$(date) see .git/hooks"`` is a message, not a path into .git."""
    for cmd in parse_command(text).commands:
        for word in cmd.words:
            if not word.is_static:
                for value in brace_words(word.value) or [word.value]:
                    yield _DEFAULTED.sub(r"\1", value)
                    yield _EXPANSION.sub("", _DEFAULTED.sub(r"\1", value))


_DEFAULTED = re.compile(r"\$\{#?\w+:?[-=+?]([^{}$]*)\}")
_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|`[^`]*`|\$[\w@*#?$!-]")


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


def _plain(command: str) -> str:
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


def _git_config(invocation: Invocation, plain: str) -> str | None:
    """`git config` (unless the line is read-only), `--template`, `--separate-git-dir`
    (``git init --sep gd`` moves .git to gd, where a hook is then one cp away) and an alias the line
    gives git (`git -c alias.x=config x ...`, GIT_CONFIG_KEY_0=alias.x): git's own config."""
    words = invocation.words
    if not words or words[0] is None or os.path.basename(words[0]) != "git":
        return None
    if any(w is not None and long_option_matches(w, "--template") for w in words):
        return "git copies a template's hooks into the repository"
    if any(w is not None and long_option_matches(w, "--separate-git-dir") for w in words):
        return "git moves the repository to a folder whose hooks nothing then guards"
    if "alias." in plain.lower():
        return "the line gives git an alias, which may run `git config`"
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in ("-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            skip = True
        elif word is None or not word.startswith("-"):
            return "`git config` changes git's configuration, which can run programs" if word in (None, "config") else None
    return None
