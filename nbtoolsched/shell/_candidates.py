"""The spellings of a command that rules are tried on, and its words.

A deny or ask rule is tried on every spelling with env assignments and runners peeled
(``FOO=1 timeout 5 rm x`` is also ``rm x``); an allow rule only on spellings with safe
variables peeled. Facts about a command's text: the rules themselves live in permissions.
"""

from __future__ import annotations

import re
import shlex

from ._parse import strip_env_prefix, strip_wrappers

__all__ = ["allow_candidates", "deny_candidates", "first_word", "rule_prefix", "shell_words"]


def deny_candidates(command: str) -> list[str]:
    """Spellings a deny/ask rule is tried on: every env assignment and wrapper peeled off."""
    forms = [command.strip()]
    while True:
        unenv = strip_env_prefix(forms[-1])
        bare = strip_wrappers(unenv)
        new = [f for f in dict.fromkeys((unenv, bare)) if f and f not in forms]
        if not new:
            return forms
        forms.extend(new)


def allow_candidates(command: str) -> list[str]:
    """Spellings an allow rule is tried on: only safe env vars, then wrappers, peeled off."""
    forms = [command.strip()]
    safe = strip_env_prefix(forms[0], safe_only=True)
    for form in (safe, strip_wrappers(safe)):
        if form and form not in forms:
            forms.append(form)
    return forms


def first_word(command: str) -> str:
    words = shell_words(command)
    return words[0] if words else ""


_WORDS_SPLIT = 8192  # shlex takes time quadratic in a word's length: only this much is split


def shell_words(command: str) -> list[str]:
    """The command's words as the shell splits them (plain whitespace split if it cannot).
    Of a longer command only the first _WORDS_SPLIT characters are split (callers want its
    first words; a 1 MB command took 17 s in shlex)."""
    if len(command) > _WORDS_SPLIT:
        command = command[:_WORDS_SPLIT]
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def rule_prefix(command: str) -> str | None:
    """The words a prefix rule for this command would name (``git log``): the program and
    a subcommand-like second word, runners and assignments peeled; None when those words
    hold what a rule cannot name literally."""
    words = shell_words(deny_candidates(command)[-1])
    if not words:
        return None
    head = words[:2] if len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9_-]*", words[1]) else words[:1]
    prefix = " ".join(head)
    return None if any(ch in prefix for ch in "*()\\$`") else prefix
