"""What one simple shell command may read, as far as its words can tell.

Read deny and ask rules must hold in Bash too: ``cat .env`` names the file, ``grep -r x .``
reads everything under ``.``, ``cat .e*`` reads whatever the glob expands to, ``rg x`` and
``git diff`` read the working tree without naming it, ``xargs cat`` reads the files named
on its input; git shows content from its whole repository, wherever in it it runs (the
one fact looked up on disk). The answer over-approximates on purpose: a word is taken
for a path whenever it could be one, and a folder a command may descend into stands for
everything that may ever be inside it. The rules are matched in the permissions layer (permissions/_shell_exposure.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Sequence

from ._braces import MAX_BRACE_WORDS, brace_words
from ._parse import SimpleCommand, parse_command
from ._programs import program, read_args
from ._allowlists import FLAG_COMMANDS
from ._flags import long_option_matches, parse_flags
from ._gitrepo import RepositoryError, find_repository
from ._invocations import command_line
from ._jq import jq_loads_files
from ._lexical import lexical_paths
from ._sed import sed_script_problem

__all__ = ["shows_repository_content", "ReadTargets", "command_reads", "input_text", "line_names", "read_targets"]

# What a program reads through its names (nothing, the files, or what is inside a folder),
# whether its input is only data (else a heredoc may hold names or code: a shell, python,
# xargs, git cat-file --batch, tar -T -) and whether it reads the working tree when no path
# is named: the program table's reads, input_is_data and tree_by_default columns.
# git subcommands that show names and history but no file content (unless a flag adds a patch).
_GIT_NAMES_ONLY = frozenset(
    "status branch describe for-each-ref ls-files ls-remote merge-base remote rev-list rev-parse shortlog tag "
    "version worktree config log reflog".split()
)
# Options that make them show file content: short ones (also inside a bundle), long ones
# (also with a suffix, --patch-with-stat, or abbreviated).
_GIT_CONTENT_SHORT = frozenset("puUcmSGLW")
_GIT_CONTENT_LONG = (
    "--patch", "--unified", "--cc", "--dd", "--word-diff", "--color-words", "--pickaxe", "--full-diff",
    "--ext-diff", "--textconv", "--binary", "--diff-merges", "--remerge-diff", "--function-context", "--check",
    "--combined-all-paths",
)
# git status -v shows the staged diff, -vv the working tree's too.
_GIT_STATUS_SHORT = frozenset("v")
_GIT_STATUS_LONG = ("--verbose",)
# Options that name a file holding the names of the files to read.
_FILE_LISTS = ("--files-from", "--files0-from")
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_FILE_OPTIONS = ("--file", "--include", "--load", "--exec")
_AWK_FILE_WORDS = re.compile(r"getline|ARGV|ARGC|@include|@load|system|PROCINFO|ENVIRON|\|")
_GLOB_CHARS = frozenset("*?[{")
_MAX_NESTING = 4  # heredocs holding code holding heredocs...
_PATHISH = re.compile(r"[\w./~-]+")
_PATTERN_FLAGS = frozenset({"-e", "--regexp", "-f", "--file", "--files", "--type-list"})


@dataclass(frozen=True, slots=True)
class ReadTargets:
    files: tuple[str, ...] = ()  # words that may name a file it reads (as written)
    trees: tuple[str, ...] = ()  # folders whose whole content it may read
    unknown: str | None = None  # why what it reads cannot be told from its words
    # May it follow symlinks inside the trees (grep -R, diff -r, a glob)? git never does:
    # it shows a link's target path, not the file the link leads to.
    follows_links: bool = True
    # Why some words may name files that cannot be listed one by one (a brace expansion
    # making thousands of words): a check for named files cannot pass it.
    unlisted: str | None = None
    # git showing content: the trees are repositories, whose history holds copies of files
    # (a protected one too, once committed) that no path rule and no sandbox mask covers.
    history: bool = False


def read_targets(command: str, bases: Sequence[str]) -> ReadTargets:
    """The paths one simple command (wrappers and env prefixes already peeled) may read.

    ``bases`` are the folders its relative paths may be relative to (cwd, and the
    folder a ``cd`` earlier in the same command line moves to)."""
    parsed = parse_command(command)
    if parsed.errors or len(parsed.commands) != 1:
        return ReadTargets(unknown="cannot be split into one simple command")
    return command_reads(parsed.commands[0], bases)


def command_reads(cmd: SimpleCommand, bases: Sequence[str]) -> ReadTargets:
    """What one parsed simple command may read (see read_targets). The files its words
    name are listed even when what else it reads is unknown: ``tac .env $X`` and
    ``xargs cat .env`` name .env whatever $X or the input holds."""
    words = cmd.words
    if not words:
        return ReadTargets()
    head = os.path.basename(words[0].value) if words[0].is_static else None
    if program(head).reads == "nothing":
        return ReadTargets()
    argv = [w.value for w in words[1:]]
    unknown: str | None = None
    if head is None:
        unknown = "runs a command the shell computes"
    elif head == "xargs" or any("files-from" in a or "files0-from" in a or long_option_matches(a, *_FILE_LISTS) for a in argv):
        unknown = "reads the names of its files from its input"
    else:
        unknown = _computed_reads(head, [head, *argv])
    descends = head is None or _descends(head, argv)
    files: list[str] = []
    trees: list[str] = []
    unlisted: str | None = None
    for word in words[1:]:
        values = [word.value]
        if not word.is_static:
            expanded = brace_words(word.value)  # every word it makes is passed on, like a name
            if expanded is None:
                unlisted = f"{word.text!r} makes more than {MAX_BRACE_WORDS} words"
            else:
                values = expanded
            if "$" in word.text or "`" in word.text or word.runs_code:
                unknown = unknown or f"uses {word.text!r}, which the shell expands"
            elif any(_GLOB_CHARS & set(v) for v in values):
                trees.extend(_glob_root(v) for v in values)  # a glob reads whatever it matches under its fixed part
            elif values == [word.value]:
                unknown = unknown or f"uses {word.text!r}, which the shell expands"
        for value in values:
            for candidate in _path_candidates(value):
                files.append(candidate)
                if descends and _is_folder(candidate, bases):
                    trees.append(candidate)
    for text in input_text(cmd, head):  # `git cat-file --batch <<< HEAD:.env`
        files.extend(_path_candidates(text))
    history = False
    if head is not None and unknown is None and _reads_tree_unnamed(head, argv):
        if head != "git":
            trees.append(".")
        else:
            tops = _repository_trees(bases)
            if tops is None:
                unknown = "runs git in a repository that cannot be told"
            else:
                trees.extend(tops)
                history = next((a for a in argv if not a.startswith("-")), None) not in _GIT_WRITES_QUIETLY
    return ReadTargets(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(trees)), unknown,
                       follows_links=head != "git", unlisted=unlisted, history=history)


def line_names(command: str, bases: Sequence[str]) -> ReadTargets:
    """Every file the whole command line names, wherever a command sits in it: loops,
    functions, command and process substitutions (``x=$(tac .env)``), strings that
    ``sh -c``, ``eval`` or ``find -exec`` run (``bash -c 'cat .e""nv'``) and the input of
    a command that may run it as code (``bash <<< 'cat .e""nv'``). Only ``files`` and
    ``unlisted`` are filled: what else the commands read is read_targets' business."""
    files: list[str] = []
    unlisted: list[str] = []
    _collect_names(command, bases, 0, files, unlisted)
    return ReadTargets(tuple(dict.fromkeys(files)), unlisted=unlisted[0] if unlisted else None)


def _collect_names(source: str, bases: Sequence[str], depth: int, files: list[str], unlisted: list[str]) -> None:
    if depth > _MAX_NESTING:
        unlisted.append("shell code nests too deep to follow")
        return
    for cmd in parse_command(source).commands:  # nested ones too, their words as parsed (braces)
        targets = command_reads(cmd, bases)
        files.extend(targets.files)
        if targets.unlisted:
            unlisted.append(targets.unlisted)
        head = os.path.basename(cmd.words[0].value) if cmd.words and cmd.words[0].is_static else None
        for text in input_text(cmd, head):  # `bash <<< 'cat .e""nv'`: code too
            _collect_names(text, bases, depth + 1, files, unlisted)
    for invocation in command_line(source).invocations:  # what sh -c, eval, find -exec run
        head = invocation.words[0]
        if head is not None and program(head).reads != "nothing":
            files.extend(c for w in invocation.words[1:] if w is not None for c in _path_candidates(w))


def input_text(cmd: SimpleCommand, head: str | None) -> list[str]:
    """The heredocs and here-strings a command that may take names or code from its
    input is given (none for a command whose input is only data, such as cat)."""
    if program(head).input_is_data:
        return []
    return [r.target.value for r in cmd.redirects if (r.is_heredoc or r.op == "<<<") and r.target is not None]


def _repository_trees(bases: Sequence[str]) -> list[str] | None:
    """What git shows content from: the whole repository (its work tree and git dirs),
    not only the folder it runs in (``git log -p`` in a subfolder prints every file's
    changes). None when the repository git would use cannot be told."""
    trees: list[str] = []
    for base in bases:
        try:
            repo = find_repository(base)
        except (RepositoryError, OSError):
            return None
        if repo is None:
            trees.append(".")  # no repository: git fails, or reads what it is given here
            continue
        trees.extend(p for p in (repo.work_tree, repo.git_dir, repo.common_dir) if p)
    return list(dict.fromkeys(trees))


def _computed_reads(head: str, argv: list[str]) -> str | None:
    """Why a command whose own language opens files may read one its words do not name."""
    if head == "jq":
        return jq_loads_files(argv)
    if head in _AWKS:
        if any(long_option_matches(a, *_AWK_FILE_OPTIONS) or a in ("-f", "-i", "-l", "-E") for a in argv):
            return f"{head} loads its program from a file"
        if any(_AWK_FILE_WORDS.search(a) for a in argv):
            return f"{head}'s program may open files whose names it computes"
    if head == "yq" and any("load" in a for a in argv):
        return "yq's load operators open files whose names it computes"
    if head == "sed":
        problem = sed_script_problem(argv)
        if problem is not None:  # `e cat .e""nv` runs a shell, `r f` reads f: past what its words show
            return f"has a sed script that may open files or run commands its words do not show ({problem})"
    return None


def _path_candidates(value: str) -> list[str]:
    """Every string in a word a program might open: the word itself, an attached
    short-option value (``-f.env``), and each path-like run of characters inside it
    (``--file=.env``, git's ``HEAD:.env``, ``getline < ".env"`` in an awk program)."""
    if value in ("", "-", "--"):
        return []
    found = [value]
    if value.startswith("-") and not value.startswith("--") and len(value) > 2:
        found.append(value[2:])
    found.extend(_PATHISH.findall(value))
    return [f for f in dict.fromkeys(found) if f]


def _glob_root(value: str) -> str:
    """The folder a glob's matches all lie in: the directory part of its fixed prefix."""
    cut = min((i for i, ch in enumerate(value) if ch in _GLOB_CHARS), default=len(value))
    prefix = value[:cut]
    folder = prefix if prefix.endswith("/") else os.path.dirname(prefix)
    return folder or "."


def _is_folder(path: str, bases: Sequence[str]) -> bool:
    path = os.path.expanduser(path)
    if lexical_paths.active:  # a replay: what is a folder cannot be told, so any name may be one
        return True
    return path in (".", "..", "/") or any(os.path.isdir(os.path.join(base, path)) for base in bases)


def _descends(head: str, argv: list[str]) -> bool:
    """May the command read what is inside a folder it is given? Unknown commands may.

    Long options count when abbreviated too (``--recur``), as GNU tools accept them."""
    row = program(head)
    if row.recursive:
        return _recursive(row.recursive, argv)
    return row.reads != "files"


def _recursive(options: frozenset[str], argv: list[str]) -> bool:
    """Does a word give one of ``options`` (grep -r, -R, -d or --directories with any
    action; ls -R), abbreviated, bundled, or with its value attached?"""
    longs = [o for o in options if o.startswith("--")]
    shorts = {o[1] for o in options if len(o) == 2}
    return any(long_option_matches(arg, *longs) or _short_flags(arg) & shorts for arg in argv)


def _short_flags(arg: str) -> set[str]:
    """The letters of a short option bundle (-rn), a value attached at its end included."""
    return set(arg[1:]) if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 else set()


def _reads_tree_unnamed(head: str, argv: list[str]) -> bool:
    """Does the command read the working tree although no word names a folder for it?"""
    if head == "git":
        return _git_shows_content(argv)
    row = program(head)
    if row.recursive and not _recursive(row.recursive, argv):
        return False
    if not (row.tree_by_default or row.recursive):
        return False
    if row.expression_after_operands:
        return not argv or argv[0].startswith(("-", "(", "!"))  # -H/-L before the paths: fail closed
    positionals = _positionals(head, argv)
    if positionals is None:
        return True
    return len(positionals) <= (1 if row.pattern_first and not _pattern_in_flag(argv) else 0)


def _positionals(head: str, argv: list[str]) -> list[str] | None:
    """Non-option words, as the program table reads the command where its row knows the
    options, else as the read-only allowlist parses it; None if it cannot."""
    row = program(head)
    if row.options:
        reading = read_args(row, argv)
        return None if reading.problem else list(reading.operands)
    spec = FLAG_COMMANDS.get((head,))
    if spec is None:
        return None
    try:
        return list(parse_flags(head, argv, spec).positionals)
    except Exception:  # noqa: BLE001 - a flag the allowlist does not know: cannot tell
        return None


def _pattern_in_flag(argv: list[str]) -> bool:
    return any(a.split("=", 1)[0] in _PATTERN_FLAGS for a in argv)


# git subcommands that change the repository and print no file content (names, stats and
# hashes only): what they read of the working tree, the sandbox's masks hold.
_GIT_WRITES_QUIETLY = frozenset(
    "add commit mv rm init clone fetch pull push merge rebase cherry-pick revert checkout switch restore reset "
    "gc prune repack clean notes".split()
)


def shows_repository_content(command: str) -> bool:
    """Does the line run a git command that may print file content out of the repository's
    history (``git log -p``, ``git show HEAD:.env``)? The sandbox masks a protected file at
    its path, not its copies among git's objects, so such a line is still judged by the
    Read rules. (A line whose programs cannot all be told counts as one.)"""
    line = command_line(command)
    if line.problems:
        return True
    for invocation in line.invocations:
        words = invocation.words
        if not words or words[0] is None or os.path.basename(words[0]) != "git":
            continue
        argv = [w if w is not None else "-?" for w in words[1:]]
        sub = next((a for a in argv if not a.startswith("-")), None)
        if sub in _GIT_WRITES_QUIETLY and not any(w is None for w in words):
            continue
        if any(w is None for w in words) or _git_shows_content(argv):
            return True
    return False


def _git_shows_content(argv: list[str]) -> bool:
    sub = next((a for a in argv if not a.startswith("-")), None)
    if sub is None:
        return False  # `git --version` and the like
    if sub == "stash":
        rest = argv[argv.index(sub) + 1 :]
        return not rest or rest[0] != "list"
    if sub not in _GIT_NAMES_ONLY:
        return True
    # git status parses options with parse-options, which takes abbreviations (--verb);
    # log and its kin use the revision parser, which does not (but --patch-with-stat...).
    status = sub == "status"
    short, long = (_GIT_STATUS_SHORT, _GIT_STATUS_LONG) if status else (_GIT_CONTENT_SHORT, _GIT_CONTENT_LONG)
    for arg in argv:
        if arg.startswith("--"):
            if arg.partition("=")[0].startswith(long) or (status and long_option_matches(arg, *long)):
                return True
        elif _short_flags(arg) & short:
            return True  # a bundle: -sp is -s then -p
    return False
