"""How ``Bash(...)`` rule contents match one shell (sub)command.

Three kinds, as in Claude Code: ``prefix:*`` (a word-boundary prefix, also behind a
bare ``xargs``), a wildcard (any unescaped ``*``), or an exact command. Matching runs on
a few candidate spellings of the command: deny and ask rules see it with every leading
``VAR=value`` and wrapper (``timeout``, ``nice``...) peeled off, so they cannot be dodged;
allow rules only see the harmless ones peeled off, so ``LD_PRELOAD=x git log`` is not
``git log``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from ..shell._parse import strip_env_prefix, strip_wrappers

__all__ = [
    "ShellPattern",
    "compile_shell_pattern",
    "allow_candidates",
    "deny_candidates",
    "suggest_shell_rule",
    "first_word",
    "shell_words",
]

Kind = Literal["prefix", "wildcard", "exact"]


@dataclass(frozen=True, slots=True)
class ShellPattern:
    kind: Kind
    text: str  # the prefix, the exact command, or the wildcard source
    regex: re.Pattern[str] | None = None

    def matches(self, candidate: str) -> bool:
        command = candidate.strip()
        if self.kind == "exact":
            return command == self.text
        if self.kind == "prefix":
            return any(
                command == head or command.startswith(head + " ")
                for head in (self.text, "xargs " + self.text)
            )
        assert self.regex is not None
        return self.regex.fullmatch(command) is not None


def compile_shell_pattern(content: str) -> ShellPattern:
    """Classify a rule's content; raises ValueError for an unusable one."""
    text = content.strip()
    if not text:
        raise ValueError("an empty command pattern")
    if text.endswith(":*"):
        prefix = text[:-2].rstrip()
        if not prefix:
            raise ValueError("a prefix rule needs a command before ':*'")
        if _has_unescaped_star(prefix):
            return ShellPattern("wildcard", text, _wildcard_regex(prefix + " *"))
        return ShellPattern("prefix", prefix)
    if _has_unescaped_star(text):
        return ShellPattern("wildcard", text, _wildcard_regex(text))
    return ShellPattern("exact", text.replace("\\*", "*"))


def _has_unescaped_star(text: str) -> bool:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "*":
            return True
        i += 1
    return False


def _wildcard_regex(pattern: str) -> re.Pattern[str]:
    # "git *" also covers a bare "git" (a single trailing " *" is "any arguments").
    if pattern.endswith(" *") and not pattern.endswith("\\ *") and not _has_unescaped_star(pattern[:-2]):
        return re.compile(_wildcard_body(pattern[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(_wildcard_body(pattern), re.DOTALL)


def _wildcard_body(pattern: str) -> str:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if c == "*" else re.escape(c))
        i += 1
    return "".join(parts)


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


def shell_words(command: str) -> list[str]:
    """The command's words as the shell splits them (plain whitespace split if it cannot)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def suggest_shell_rule(command: str, tool_name: str = "Bash") -> str | None:
    """A prefix rule a person might want to save for this command (``Bash(git log:*)``)."""
    stripped = deny_candidates(command)[-1]
    words = shell_words(stripped)
    if not words:
        return None
    head = words[:2] if len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9_-]*", words[1]) else words[:1]
    prefix = " ".join(head)
    if any(ch in prefix for ch in "*()\\$`"):
        return None
    return f"{tool_name}({prefix}:*)"

