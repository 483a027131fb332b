"""Does one rule's content match one call's subject (a command, a path, a host)?

Kept apart from the decision flow so load-time example checks use exactly the same
matcher as run time.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from typing import Callable, Iterable

from .._hosts import host_key, url_host
from ..shell import line_facts, paths_for_check
from ._path_patterns import compile_path_pattern, pattern_may_match_within
from ._rules import EDIT_RULE_TOOLS, READ_RULE_TOOLS, SHELL_RULE_TOOLS, PermissionRule
from ._shell_rules import ShellPattern, compile_shell_pattern

__all__ = [
    "shell_pattern",
    "shell_rule_matches",
    "shell_rule_may_run",
    "path_rule_matches",
    "path_rule_may_match_within",
    "host_of",
    "domain_rule_matches",
    "content_rule_matches",
    "rule_matches_example",
]


@functools.lru_cache(maxsize=4096)
def shell_pattern(content: str) -> ShellPattern:
    return compile_shell_pattern(content)


def shell_rule_matches(
    rule: PermissionRule, candidates: Iterable[str], *, is_compound: Callable[[str], bool] | None = None
) -> bool:
    """Match any candidate; prefix/wildcard allow rules skip compound candidates."""
    assert rule.value.content is not None
    pattern = shell_pattern(rule.value.content)
    for candidate in candidates:
        if rule.behavior == "allow" and pattern.kind != "exact" and is_compound is not None and is_compound(candidate):
            continue
        if pattern.matches(candidate):
            return True
    return False


def shell_rule_may_run(rule: PermissionRule, command: str) -> bool:
    """Could ``command`` run what the rule names, however it is spelled? (the argv of every
    program it runs, as the shell layer states them; True when what it runs cannot be told)."""
    assert rule.value.content is not None
    runs = line_facts(command, "").runs
    pattern = shell_pattern(rule.value.content)
    return bool(runs.problems) or any(pattern.verdict(inv.words) for inv in runs.invocations)


def path_rule_matches(rule: PermissionRule, paths: list[str], cwd: str, home: str) -> bool:
    """Deny/ask: any form of the path matches. Allow: every form must."""
    assert rule.value.content is not None
    pattern = compile_path_pattern(rule.value.content, rule.root or cwd, cwd, home)
    hits = [pattern.matches(p) for p in paths]
    return all(hits) if rule.behavior == "allow" else any(hits)


def path_rule_may_match_within(rule: PermissionRule, folders: list[str], cwd: str, home: str) -> bool:
    """Could the rule match something inside any form of the folder (see pattern_may_match_within)?"""
    assert rule.value.content is not None
    return any(pattern_may_match_within(rule.value.content, rule.root or cwd, cwd, home, f) for f in folders)


def host_of(url: str) -> str | None:
    """The host a fetch of ``url`` reaches, as httpx and the resolver read it (see _hosts); None: cannot tell."""
    return url_host(url if "//" in url else "http://" + url)


def domain_rule_matches(rule: PermissionRule, host: str | None) -> bool:
    """``domain:<host>`` names one host (as in Claude Code), compared in canonical form on both sides."""
    content = rule.value.content or ""
    return host is not None and content.startswith("domain:") and host_key(content[7:]) == host


def content_rule_matches(rule: PermissionRule, content: str) -> bool:
    """Tools without a special syntax: exact content, or a ``*`` glob."""
    pattern = rule.value.content or ""
    return content == pattern or ("*" in pattern and fnmatch.fnmatchcase(content, pattern))


def rule_matches_example(rule: PermissionRule, example: str) -> bool:
    tool = rule.value.tool
    if rule.value.content is None:
        return rule.covers_tool(example)  # a tool-wide rule's examples are tool names
    if tool in SHELL_RULE_TOOLS:
        line = line_facts(example, "")
        candidates = line.allow_forms if rule.behavior == "allow" else line.deny_forms
        return shell_rule_matches(rule, candidates)
    if tool in READ_RULE_TOOLS or tool in EDIT_RULE_TOOLS:
        cwd = rule.root or os.getcwd()
        return path_rule_matches(rule, paths_for_check(example, cwd), cwd, os.path.expanduser("~"))
    if tool == "WebFetch":
        return domain_rule_matches(rule, host_of(example))
    return content_rule_matches(rule, example)
