"""The built-in part of a tool's own permission check, by kind of tool.

Shell tools, file tools and WebFetch get the checks Claude Code builds into its Bash,
Read/Edit and WebFetch tools: content rules, path constraints, safety checks and the
read-only auto-allow. A tool's own ``check_permissions`` runs beside these (the engine
combines them), so a tool written by someone else is still held to the rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from ..sandbox._settings import Placement
from ..shell import LineFacts, Splitter, inside_working_dirs, line_facts, paths_for_check, safety_concern
from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool
from ._hardlinks import inode_guard, linked_rule
from ._matching import content_rule_matches, domain_rule_matches, host_of, path_rule_matches
from ._rules import Behavior, PermissionRule, RuleSet

__all__ = ["CallFacts", "tool_kind", "file_check", "web_check", "generic_check", "protected_reads", "is_immune_ask", "shell_field", "read_protection", "decide",
           "edit_check", "first_path_rule", "read_only_in", "outside_working_dirs", "path_rules", "read_check", "rule_reason"]


@dataclass(slots=True)
class CallFacts:
    """Everything a check needs about one call, gathered once (cheaply: most calls need little)."""

    tool: Tool
    input: dict[str, Any]
    parsed: Any
    cwd: str
    mode: str
    rules: RuleSet
    additional_dirs: list[str]
    home: str
    split: Splitter
    placement: Placement | None = None
    masked_reads: bool = False  # ... inside the working directories
    masked_everywhere: bool = False  # ... wherever a deny rule matches (no whole-disk pattern)
    auto_allow: bool = False  # autoAllowBashIfSandboxed applies to this command
    line: LineFacts | None = None  # the command line's facts (shell calls), stated once: see shell_line()
    steps: list[str] = field(default_factory=list)  # the precedence steps that decided (explain() shows them)

    def shell_line(self) -> LineFacts:
        """The facts of the command this shell call runs, computed once for the decision."""
        if self.line is None:
            self.line = line_facts(str(self.input.get(shell_field(self.tool) or "command") or "").strip(), self.cwd, self.split)
        return self.line

    @property
    def working_dirs(self) -> list[str]:
        return [self.cwd, *self.additional_dirs]

    @property
    def names(self) -> set[str]:
        return {self.tool.name, *self.tool.aliases}


def shell_field(tool: Tool) -> str | None:
    """The input field that holds a shell tool's command (None for other tools)."""
    return "command" if tool.permission_kind == "shell" else None


def read_only_in(tool: Tool, parsed: Any, cwd: str) -> bool:
    """The tool's read-only verdict where the call runs (git's depends on the repository
    there); a tool that cannot say is not read-only."""
    try:
        return bool(tool.is_read_only_in(parsed, cwd))
    except Exception:  # noqa: BLE001 - cannot tell: treat as a write
        return False


def tool_kind(tool: Tool) -> str:
    """Which family of checks applies, from what the tool declares."""
    kind = tool.permission_kind
    return "file" if kind in ("read", "edit") else kind


def is_immune_ask(decision: Decision) -> bool:
    """A content ask rule or a safety check: prompts even in bypass mode or after a hook allow."""
    return decision.behavior == "ask" and decision.reason is not None and decision.reason.kind in ("rule", "safety_check")


def rule_reason(rule: PermissionRule, detail: str) -> DecisionReason:
    return DecisionReason("rule", detail, rule=rule.text, source=rule.origin or rule.source)


def decide(rule: PermissionRule, subject: str) -> Decision:
    where = rule.origin or rule.source
    if rule.behavior == "deny":
        return Decision.deny(
            f"Permission denied: {subject} is blocked by the rule {rule.text} ({where}).", rule_reason(rule, "deny rule")
        )
    if rule.behavior == "ask":
        return Decision.ask(
            f"The rule {rule.text} ({where}) asks for approval before {subject}.", rule_reason(rule, "ask rule")
        )
    return Decision.allow(None, rule_reason(rule, "allow rule"))


# -- files ---------------------------------------------------------------------------------
def _file_path(facts: CallFacts) -> str | None:
    try:
        path = facts.tool.get_path(facts.parsed)
    except Exception:
        path = None
    if path is None:
        for key in ("file_path", "notebook_path", "path"):
            if isinstance(facts.input.get(key), str):
                return str(facts.input[key])
    return path


def protected_reads(facts: CallFacts) -> list[PermissionRule]:
    """The Read deny and ask rules: what a read must not reach unasked."""
    return path_rules(facts, "deny", "Read") + path_rules(facts, "ask", "Read")


def path_rules(facts: CallFacts, behavior: Behavior, family: str) -> list[PermissionRule]:
    """Read(...) or Edit(...) rules, plus rules naming the tool itself when it is of that family."""
    own = facts.names if facts.tool.permission_kind.capitalize() == family else set()
    return facts.rules.content_rules(behavior, {family, *own})


def first_path_rule(facts: CallFacts, behavior: Behavior, family: str, paths: list[str]) -> PermissionRule | None:
    return next((r for r in path_rules(facts, behavior, family) if path_rule_matches(r, paths, facts.cwd, facts.home)), None)


def file_check(facts: CallFacts) -> Decision:
    raw = _file_path(facts)
    if raw is None and facts.tool.permission_kind == "edit":
        return Decision.passthrough("the tool named no file to edit")
    paths = paths_for_check(raw or facts.cwd, facts.cwd)
    if facts.tool.permission_kind == "edit":
        return edit_check(facts, paths)
    return read_check(facts, paths)


def read_check(facts: CallFacts, paths: list[str]) -> Decision:
    subject = f"reading {paths[0]}"
    for behavior in ("deny", "ask"):
        rule = first_path_rule(facts, behavior, "Read", paths)
        if rule is not None:
            return decide(rule, subject)
    linked = linked_rule(paths[-1], protected_reads(facts), facts.cwd, facts.home, tuple(facts.working_dirs))
    if linked is not None:  # a hard link: the same bytes under a name no rule names
        return decide(linked, f"reading {paths[0]}, another name (a hard link) of a file it protects")
    if edit_check(facts, paths).behavior == "allow":
        return Decision.allow(None, DecisionReason("tool", "the file may be edited, so it may be read"))
    if inside_working_dirs(paths, facts.working_dirs):
        return Decision.allow(None, DecisionReason("tool", "the path is inside the working directories"))
    rule = first_path_rule(facts, "allow", "Read", paths)
    if rule is not None:
        return decide(rule, subject)
    return Decision.ask(f"{paths[0]} is outside the working directories.", DecisionReason("tool", "outside working directories"))


def read_protection(rules: RuleSet, tool: Tool, target: str, cwd: str, home: str) -> Callable[[str], bool] | None:
    """Which paths a search of ``target`` found must be left out of what it shows.

    A Grep or Glob over a folder reads every file in it, so a file a Read deny or ask rule
    protects would show without the permission step ever seeing its path. Rules that
    match ``target`` itself are not used: the permission step judged those (a deny
    stopped the call, an ask was answered). None when no rule protects anything.
    Files under ask rules are left out too (nobody was asked about them): stricter than
    a filter on deny rules alone, which is all the reference suggests for Claude Code.
    """
    names = {"Read", tool.name, *tool.aliases} if tool.permission_kind == "read" else {"Read"}
    judged = paths_for_check(target, cwd)
    protected = [
        r for b in ("deny", "ask") for r in rules.content_rules(b, names)
        if not path_rule_matches(r, judged, cwd, home)
    ]
    if not protected:
        return None
    linked = inode_guard(protected, cwd, home, (cwd,))

    def hidden(path: str) -> bool:
        forms = paths_for_check(path, cwd)
        return any(path_rule_matches(r, forms, cwd, home) for r in protected) or linked(path)

    return hidden


def edit_check(facts: CallFacts, paths: list[str]) -> Decision:
    subject = f"editing {paths[0]}"
    rule = first_path_rule(facts, "deny", "Edit", paths)
    if rule is not None:
        return decide(rule, subject)
    concern = safety_concern(paths)
    if concern:
        session_rule = next(
            (r for r in path_rules(facts, "allow", "Edit") if r.source == "session" and path_rule_matches(r, paths, facts.cwd, facts.home)),
            None,
        )
        if session_rule is not None and ".claude" in paths[-1].split(os.sep):
            return decide(session_rule, subject)
        return Decision.ask(f"Editing needs approval: {concern}.", DecisionReason("safety_check", concern))
    rule = first_path_rule(facts, "ask", "Edit", paths)
    if rule is not None:
        return decide(rule, subject)
    if facts.mode == "acceptEdits" and inside_working_dirs(paths, facts.working_dirs):
        return Decision.allow(None, DecisionReason("mode", "acceptEdits allows edits inside the working directories"))
    rule = first_path_rule(facts, "allow", "Edit", paths)
    if rule is not None:
        return decide(rule, subject)
    return Decision.passthrough(f"{facts.tool.name} wants to edit {paths[0]}.")


# -- web -------------------------------------------------------------------------------------
def web_check(facts: CallFacts) -> Decision:
    url = facts.input.get("url")
    host = host_of(url) if isinstance(url, str) else None
    if host is None:  # no rule can be matched on a host that cannot be told: ask, even in bypass mode
        return Decision.ask(f"{facts.tool.name} needs approval: cannot tell which host {url!r} reaches.", DecisionReason("safety_check", "unreadable host"))
    for behavior in ("deny", "ask", "allow"):
        rule = next((r for r in facts.rules.content_rules(behavior, facts.names) if domain_rule_matches(r, host)), None)
        if rule is not None:
            return decide(rule, f"fetching from {host}")
    return Decision.passthrough(f"{facts.tool.name} wants to fetch from {host or url!r}.")


def generic_check(facts: CallFacts) -> Decision:
    """Tools may expose ``permission_content(parsed) -> str`` for their own content rules."""
    getter = getattr(facts.tool, "permission_content", None)
    content = getter(facts.parsed) if callable(getter) else None
    if isinstance(content, str):
        for behavior in ("deny", "ask", "allow"):
            rule = next((r for r in facts.rules.content_rules(behavior, facts.names) if content_rule_matches(r, content)), None)
            if rule is not None:
                return decide(rule, f"{facts.tool.name}({content})")
    return Decision.passthrough()


def outside_working_dirs(facts: CallFacts, family: str, paths: list[str], doing: str) -> Decision | None:
    """An ask when ``paths`` leave the working directories and no ``family`` allow rule covers them."""
    if inside_working_dirs(paths, facts.working_dirs) or first_path_rule(facts, "allow", family, paths) is not None:
        return None
    return Decision.ask(f"{doing} {paths[0]}, which is outside the working directories.",
                        DecisionReason("tool", "path outside working directories"))
