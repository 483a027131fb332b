"""Whether a read-only shell command may read outside a folder: a speculation may not.

The session's permissions let a read-only command read outside the working directories
when their path checks miss an argument (``diff --to-file=../x f``, ``jq . ../x``,
``comm f /x``, ``git diff --no-index f /x``) and in bypassPermissions mode, but a
speculation reads inside cwd only. So every word that may name a file, every folder the
command may descend into (and every symlink inside it), every redirection and every
folder a ``cd`` moves to must resolve inside cwd; what cannot be told is outside.
"""

from __future__ import annotations

import os

from ._candidates import deny_candidates, shell_words
from ._lexical import lexical_paths
from ._parse import parse_command, subcommand_strings
from ._paths import is_inside, links_under, shell_paths_for_check
from ._reads import read_targets

__all__ = ["reach_outside"]

_FD_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def reach_outside(command: str, cwd: str) -> str | None:
    """Why ``command`` (run in ``cwd``) may read outside ``cwd``, as a predicate of the
    command ("may read /x, outside the working directory"); None if it cannot."""
    subs = subcommand_strings(command)
    if subs is None:
        return "cannot be split into simple commands whose paths can be checked"
    peeled = [deny_candidates(sub)[-1] for sub in subs if sub.strip()]
    bases = [cwd]
    moves = [words for words in map(shell_words, peeled) if words and words[0] == "cd"]
    if len(moves) > 1:  # a second relative cd starts from where the first one went
        return "changes directory more than once"
    for words in moves:
        target = next((w for w in words[1:] if w != "--"), "~")
        problem = _outside(target, [cwd], cwd) if target != "-" else "-, the previous directory"
        if problem:
            return f"moves (cd) to {problem}"
        bases.append(lexical_paths.realpath(os.path.join(cwd, target)))
    for raw in _redirect_targets(command):
        problem = _outside(raw, bases, cwd)
        if problem:
            return f"redirects {problem}"
    for sub in peeled:
        targets = read_targets(sub, bases)
        if targets.unknown:
            return f"may read files its words do not name (`{sub}`: {targets.unknown})"
        for raw in targets.files + targets.trees:
            problem = _outside(raw, bases, cwd)
            if problem:
                return f"may read {problem}"
        if targets.follows_links:
            for tree in targets.trees:
                problem = _links_outside(tree, bases, cwd)
                if problem:
                    return f"may read {problem}"
    return None


def _redirect_targets(command: str) -> list[str]:
    """Files the command's redirections name (a computed one comes back as itself: outside)."""
    out = []
    for cmd in parse_command(command).commands:
        for redirect in cmd.redirects:
            target = redirect.target
            if redirect.is_heredoc or redirect.op == "<<<" or target is None:
                continue
            if redirect.op in (">&", "<&") and (target.value.isdigit() or target.value == "-"):
                continue  # 2>&1, or a close
            if target.is_static and target.value in _FD_TARGETS:
                continue
            out.append(target.value if target.is_static else "$" + target.text)
    return out


def _outside(raw: str, bases: list[str], cwd: str) -> str | None:
    """The first form of ``raw`` (from any base) outside ``cwd``, as the reason; else None."""
    if "$" in raw or "`" in raw:
        return f"{raw}, a path the shell computes"
    for base in bases:
        found = shell_paths_for_check(raw, base)
        if found is None:
            return f"{raw}, which the command resolves in its own process"
        for path in found:
            if not is_inside(path, cwd):
                return f"{path}, outside the working directory"
    return None


def _links_outside(tree: str, bases: list[str], cwd: str) -> str | None:
    """A symlink under a folder the command descends into that leads outside ``cwd``."""
    for base in bases:
        folder = os.path.join(base, os.path.expanduser(tree))
        links = links_under(folder)
        if links is None:
            return f"{folder}, which holds too many entries to check its symlinks"
        for link in links:
            problem = _outside(link, [cwd], cwd)
            if problem:
                return f"{problem} through the link {link}"
    return None
