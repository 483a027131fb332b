"""Is a shell command read-only? Decided from the tree-sitter parse, failing closed.

A read-only command may run in parallel with other tools, be auto-allowed after the
rules, and run during speculation (reference §5), so a wrong "yes" is a security bug
and a wrong "no" only costs speed. Every simple command must be on an allowlist with
only fixed words, harmless redirections and, where a tool has dangerous options,
options from its allowlist; anything not understood is not read-only.

Where Claude Code refuses on the text (any ``$`` in an argument even single-quoted,
``;|&`` or ``{a,b}`` inside quotes, any multi-line command, so every heredoc), this
check accepts what the parse proves literal: ``grep 'a|b' f`` and ``cat <<'EOF'`` are
read-only here. That is a deliberate difference (see the README). git commands are
stricter instead: the repository's config is checked (_gitrepo.py).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from ._allowlists import (
    ARITHMETIC_TEST_OPS, BENIGN_EXIT_CODES, COMMAND_RUNNERS, CONSTRUCT_LABELS,
    EXACT_READONLY, FIND_ACTIONS, FLAG_COMMANDS, GIT_BRANCH_LIST_FLAGS,
    GIT_REFLOG_WRITERS, GIT_SAFE_GLOBAL_OPTIONS, GIT_TAG_LIST_FLAGS, NETWORK_PATHS,
    READONLY_CONSTRUCTS, READONLY_WRAPPERS, SAFE_FDS,
    SAFE_SINKS, SIMPLE_READONLY, SIMPLE_READONLY_PAIRS, SYSTEM_BIN_DIRS, TPUT_DANGEROUS,
    WRITE_FLAGS, XARGS_TARGETS,
)
from ._evaluation import command_evaluates
from ._flags import FlagError, ParsedArgs, parse_flags
from ._jq import jq_problem
from ._gitrepo import repository_problem
from ._parse import ParsedCommand, Redirect, SimpleCommand, parse_command, wrapper_prefix_len
from ._sed import sed_problem

__all__ = ["ReadOnlyVerdict", "analyze", "is_benign_exit", "is_read_only"]


@dataclass(frozen=True, slots=True)
class ReadOnlyVerdict:
    """Whether a command is read-only, and the part that decided it."""

    read_only: bool
    reason: str
    # git runs: read-only only if the repository's config cannot run programs, which
    # analyze() checks when it is given the directory the command runs in.
    uses_git: bool = False


def analyze(
    command: str, cwd: str | None = None, *, use_cache: bool = True,
    env: dict[str, str] | None = None,
) -> ReadOnlyVerdict:
    """Decide whether ``command`` is read-only; never raises.

    With ``cwd`` a git command is read-only only if the repository git uses from there
    cannot run programs (_gitrepo.py; ``env`` is the command's environment). Without
    it the verdict is about the command alone: callers that auto-allow must pass it.
    ``use_cache=False`` bypasses the verdict cache (for honest benchmarks).
    """
    try:
        if not isinstance(command, str):
            return ReadOnlyVerdict(False, "command is not a string")
        verdict = (
            _cached_verdict(command) if use_cache else _verdict(command, parse_command.__wrapped__)
        )
        if verdict.read_only and verdict.uses_git and cwd is not None:
            problem = repository_problem(cwd, env)
            if problem:
                return ReadOnlyVerdict(False, f"git: {problem}", uses_git=True)
        return verdict
    except Exception as exc:  # fail closed, whatever went wrong
        return ReadOnlyVerdict(False, f"analysis failed: {type(exc).__name__}: {exc}")


def is_read_only(command: str, cwd: str | None = None) -> bool:
    """``analyze(command, cwd).read_only``."""
    return analyze(command, cwd).read_only


# ---------------------------------------------------------------------- verdict
def _fail(reason: str) -> ReadOnlyVerdict:
    return ReadOnlyVerdict(False, reason)


@lru_cache(maxsize=4096)
def _cached_verdict(command: str) -> ReadOnlyVerdict:
    return _verdict(command, parse_command)


def _verdict(command: str, parse: Callable[[str], ParsedCommand]) -> ReadOnlyVerdict:
    """The verdict on the command alone (the repository check is not cacheable)."""
    reason = _character_problem(command)
    if reason:
        return _fail(reason)
    parsed = parse(command)
    if parsed.errors:
        return _fail(f"cannot parse: {parsed.errors[0]}")
    for construct in parsed.constructs:
        if construct.kind not in READONLY_CONSTRUCTS:
            label = CONSTRUCT_LABELS.get(construct.kind, construct.kind)
            return _fail(f"{label}: {construct.text}")
    if not parsed.commands:
        return _fail("empty command")
    names: list[str] = []
    for cmd in parsed.commands:
        reason, name = _command_problem(cmd)
        if reason:
            return _fail(reason)
        names.append(name)
    uses_git = "git" in names
    if uses_git and ("cd" in names or "pushd" in names):
        return _fail("cd combined with git (bare repository attack)")
    listed = ", ".join(dict.fromkeys(names))
    return ReadOnlyVerdict(True, f"read-only: {listed}", uses_git)


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ODD_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs", "Cn"})


def _character_problem(command: str) -> str | None:
    """Control characters and unusual whitespace read differently by people and shells."""
    match = _CONTROL_CHARS.search(command)
    if match:
        return f"control character U+{ord(match.group()):04X}"
    if command.isascii():
        return None
    for char in command:
        if ord(char) > 127 and unicodedata.category(char) in _ODD_CATEGORIES:
            name = unicodedata.name(char, "unnamed")
            return f"unusual character U+{ord(char):04X} ({name.lower()})"
    return None


# --------------------------------------------------------------- one command
def _command_problem(cmd: SimpleCommand) -> tuple[str | None, str]:
    """Why ``cmd`` is not read-only (or None), and the name of what it runs."""
    if cmd.assignments:
        text = cmd.assignments[0].text
        if not cmd.words:
            return f"variable assignment: {text}", ""
        return f"environment assignment before the command: {text}", ""
    for word in cmd.words:
        if word.issues:
            return word.issues[0], ""
    for redirect in cmd.redirects:
        reason = _redirect_problem(redirect)
        if reason:
            return reason, ""
    if not cmd.words:
        return "redirection without a command", ""
    words = cmd.argv
    skip = wrapper_prefix_len(words, READONLY_WRAPPERS)
    if skip is None:
        return f"cannot read the options of {words[0]}", ""
    if skip >= len(words):
        return f"{words[0]} without a command", ""
    argv = _normalise_name(words[skip:])
    return command_evaluates(argv) or _argv_problem(argv), argv[0]


def _normalise_name(argv: Sequence[str]) -> Sequence[str]:
    """/usr/bin/grep runs grep; ./grep or ~/bin/grep could be anything."""
    name = argv[0]
    if not name.startswith("/"):
        return argv
    for prefix in SYSTEM_BIN_DIRS:
        if name.startswith(prefix) and "/" not in name[len(prefix):]:
            return (name[len(prefix):], *argv[1:])
    return argv


def _redirect_problem(redirect: Redirect) -> str | None:
    target = redirect.target
    op = redirect.op
    if redirect.is_heredoc:
        return f"heredoc body: {target.issues[0]}" if target and target.issues else None
    if target is not None and target.issues:
        return f"redirection target: {target.issues[0]}"
    value = target.value if target is not None else ""
    if op == "<<<" or op in (">&-", "<&-"):
        return None
    if op == "<":
        if value.startswith(NETWORK_PATHS):
            return f"network redirection: {redirect.text}"
        return None
    if op in (">&", "<&"):
        return None if value in SAFE_FDS else f"redirection to a file: {redirect.text}"
    if op in (">", ">>", ">|", "&>", "&>>"):
        return None if value in SAFE_SINKS else f"redirection to a file: {redirect.text}"
    return f"unsupported redirection: {redirect.text}"


def _argv_problem(argv: Sequence[str]) -> str | None:
    name = argv[0]
    checker = _CHECKERS.get(name)
    if checker is not None:
        return checker(argv)
    if tuple(argv[:2]) in SIMPLE_READONLY_PAIRS or tuple(argv) in EXACT_READONLY:
        return None
    for size in (3, 2, 1):
        key = tuple(argv[:size])
        if len(key) == size and key in FLAG_COMMANDS:
            return _flag_problem(key, argv)
    if name in SIMPLE_READONLY:
        return None
    if name in _EXACT_NAMES:
        return f"{' '.join(argv)[:60]} is not a known read-only form of {name}"
    if name in COMMAND_RUNNERS:
        return f"{name} runs other commands"
    return f"{name} is not on the read-only allowlist"


_EXACT_NAMES = frozenset(key[0] for key in EXACT_READONLY)


def _flag_problem(key: tuple[str, ...], argv: Sequence[str]) -> str | None:
    try:
        parsed = parse_flags(" ".join(key), argv[len(key):], FLAG_COMMANDS[key])
    except FlagError as exc:
        return str(exc)
    check = _EXTRA_CHECKS.get(key)
    return check(parsed) if check else None


# ------------------------------------------------------------ special commands
def _check_git(argv: Sequence[str]) -> str | None:
    if list(argv[1:]) == ["--version"]:
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        option = argv[i]
        if option not in GIT_SAFE_GLOBAL_OPTIONS:
            name = option.partition("=")[0]
            return WRITE_FLAGS.get(("git", name), f"git global option {name} is not allowed")
        i += 1
    rest = ("git", *argv[i:])
    if len(rest) == 1:
        return "git without a subcommand"
    for size in (3, 2):
        key = rest[:size]
        if len(key) == size and key in FLAG_COMMANDS:
            return _flag_problem(key, rest)
    return f"git {rest[1]} is not a read-only git command"


def _check_find(argv: Sequence[str]) -> str | None:
    for word in argv[1:]:
        if word in FIND_ACTIONS:
            return f"find {word} {FIND_ACTIONS[word]}"
    return None


def _check_xargs(argv: Sequence[str]) -> str | None:
    try:
        parsed = parse_flags("xargs", argv[1:], FLAG_COMMANDS[("xargs",)],
                             stop_at_positional=True)
    except FlagError as exc:
        return str(exc)
    target = argv[1 + parsed.consumed:]
    if not target:
        return None  # xargs runs echo
    if target[0] not in XARGS_TARGETS:
        return f"xargs runs {target[0]}, which is not safe with arguments from input"
    return _argv_problem(target)


def _check_jq(argv: Sequence[str]) -> str | None:
    return jq_problem(argv)


_INTEGER = re.compile(r"-?\d+")


def _check_test(argv: Sequence[str]) -> str | None:
    """test, [ and [[: -v and [[ arithmetic can evaluate array subscripts (run code)."""
    for i, word in enumerate(argv):
        if word == "-v":
            return f"{argv[0]} -v can evaluate array subscripts"
        if argv[0] == "[[" and word in ARITHMETIC_TEST_OPS:
            left, right = argv[i - 1], argv[i + 1] if i + 1 < len(argv) else ""
            if not (_INTEGER.fullmatch(left) and _INTEGER.fullmatch(right)):
                return f"[[ {left} {word} {right} ]] evaluates its operands as arithmetic"
    return None


def _check_cd(argv: Sequence[str]) -> str | None:
    return None if len(argv) <= 2 else "cd with more than one argument"


def _check_printf(argv: Sequence[str]) -> str | None:
    return "printf -v assigns a variable" if len(argv) > 1 and argv[1].startswith("-v") else None


def _check_history(argv: Sequence[str]) -> str | None:
    if len(argv) == 1 or (len(argv) == 2 and argv[1].isdigit()):
        return None
    return "history with options can clear or write the history"


_IFACE = re.compile(r"[A-Za-z][A-Za-z0-9.:_-]*")


def _check_ifconfig(argv: Sequence[str]) -> str | None:
    if len(argv) == 1 or (len(argv) == 2 and _IFACE.fullmatch(argv[1])):
        return None
    return "ifconfig with arguments can configure interfaces"


_CHECKERS: dict[str, Callable[[Sequence[str]], str | None]] = {
    "git": _check_git,
    "find": _check_find,
    "sed": sed_problem,
    "xargs": _check_xargs,
    "jq": _check_jq,
    "test": _check_test,
    "[": _check_test,
    "[[": _check_test,
    "cd": _check_cd,
    "printf": _check_printf,
    "history": _check_history,
    "ifconfig": _check_ifconfig,
}


# ------------------------------------------------- checks after flag parsing
def _positional_check(
    message: str, bad: Callable[[str], bool],
) -> Callable[[ParsedArgs], str | None]:
    def check(parsed: ParsedArgs) -> str | None:
        for word in parsed.positionals:
            if bad(word):
                return message.format(word)
        return None
    return check


def _list_only(kind: str, list_flags: frozenset[str]) -> Callable[[ParsedArgs], str | None]:
    def check(parsed: ParsedArgs) -> str | None:
        if parsed.positionals and not parsed.has_flag(*list_flags):
            return f"git {kind} {parsed.positionals[0]} creates a {kind}"
        return None
    return check


_REMOTE_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _remote_show(parsed: ParsedArgs) -> str | None:
    if len(parsed.positionals) == 1 and _REMOTE_NAME.fullmatch(parsed.positionals[0]):
        return None
    return "git remote show takes exactly one remote name"


def _uniq(parsed: ParsedArgs) -> str | None:
    return "uniq with two files writes the second" if len(parsed.positionals) > 1 else None


def _ps(parsed: ParsedArgs) -> str | None:
    for word in parsed.positionals:
        if "e" in word and not word.isdigit():
            return f"ps {word} shows other processes' environments"
    return None


_EXTRA_CHECKS: dict[tuple[str, ...], Callable[[ParsedArgs], str | None]] = {
    ("git", "reflog"): _positional_check(
        "git reflog {} modifies the reflog", lambda w: w in GIT_REFLOG_WRITERS),
    ("git", "remote", "show"): _remote_show,
    ("git", "remote"): _positional_check(
        "git remote {} changes remotes", lambda w: True),
    ("git", "branch"): _list_only("branch", GIT_BRANCH_LIST_FLAGS),
    ("git", "tag"): _list_only("tag", GIT_TAG_LIST_FLAGS),
    ("git", "ls-remote"): _positional_check(
        "git ls-remote {} contacts an arbitrary remote",
        lambda w: any(mark in w for mark in ("://", "@", ":", "$"))),
    ("date",): _positional_check(
        "date {} would set the clock", lambda w: not w.startswith("+")),
    ("hostname",): _positional_check("hostname {} sets the host name", lambda w: True),
    ("ps",): _ps,
    ("lsof",): _positional_check("lsof {} writes a mount supplement", lambda w: w.startswith("+m")),
    ("tput",): _positional_check(
        "tput {} resets or takes over the terminal", lambda w: w in TPUT_DANGEROUS),
    ("uniq",): _uniq,
    # A name with a slash is a local file to man-db, whose .so requests read other files.
    ("man",): _positional_check("man {} formats a local file, whose .so requests read any other file", lambda w: "/" in w),
}


# ------------------------------------------------------------------ exit codes
def is_benign_exit(command: str, exit_code: int) -> bool:
    """True when ``exit_code`` reports a result, not a failure.

    grep/egrep/fgrep/rg and ``git grep`` exit 1 when nothing matched, diff/cmp and
    ``git diff --exit-code/--quiet`` when the inputs differ, test/[/[[ when the test is
    false, find's exit 1 (as Claude Code's command-semantics table counts it, though find
    also exits 1 when a start folder is missing or unreadable). The table is
    ``BENIGN_EXIT_CODES``. Judged on the command whose status the shell returns (the last
    of a pipeline or list); exit 0 is never a failure; everything else is.
    """
    if exit_code == 0:
        return True
    try:
        parsed = parse_command(command)
    except Exception:
        return False
    cmd = parsed.status_command
    if parsed.errors or cmd is None or cmd.is_dynamic:
        return False
    skip = wrapper_prefix_len(cmd.argv)
    if skip is None or skip >= len(cmd.argv):
        return False
    argv = _normalise_name(cmd.argv[skip:])
    if argv[0] == "git":
        return exit_code == 1 and _git_reports_result(argv)
    return exit_code in BENIGN_EXIT_CODES.get(argv[0], ())


def _git_reports_result(argv: Sequence[str]) -> bool:
    if len(argv) < 2:
        return False
    if argv[1] == "grep":
        return True
    return argv[1] == "diff" and any(w in ("--exit-code", "--quiet") for w in argv[2:])
