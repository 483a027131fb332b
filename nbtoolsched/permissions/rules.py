"""Permission rule strings: ``Tool`` or ``Tool(content)``, parsed strictly.

Claude Code turns a malformed rule into a bare tool name; here it is an error at load
time (a rule that silently means something else is worse than no rule). A rule may
carry examples it must and must not match, checked when it is loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

from .errors import PermissionConfigError
from .paths import validate_path_pattern
from .shell_rules import compile_shell_pattern

__all__ = [
    "Behavior",
    "RuleValue",
    "PermissionRule",
    "RuleSet",
    "LEGACY_TOOL_NAMES",
    "SHELL_RULE_TOOLS",
    "READ_RULE_TOOLS",
    "EDIT_RULE_TOOLS",
    "escape_rule_content",
    "unescape_rule_content",
    "parse_rule",
    "format_rule",
    "make_rule",
    "rules_from",
]

Behavior = Literal["allow", "deny", "ask"]

LEGACY_TOOL_NAMES = {"Task": "Agent", "KillShell": "TaskStop", "AgentOutputTool": "TaskOutput", "BashOutputTool": "TaskOutput"}
# Which content syntax a rule's tool name implies, known at load time (for validation
# and examples). At run time the tool itself says what it is.
SHELL_RULE_TOOLS = frozenset({"Bash"})
READ_RULE_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
EDIT_RULE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*(?:__\*)?")


def escape_rule_content(content: str) -> str:
    """Escape backslashes, then parentheses, so content survives inside ``Tool(...)``."""
    return content.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def unescape_rule_content(content: str) -> str:
    """Undo ``escape_rule_content``; any other backslash pair (``\\*``) is left alone."""
    out: list[str] = []
    i = 0
    while i < len(content):
        c = content[i]
        if c == "\\" and i + 1 < len(content) and content[i + 1] in "\\()":
            out.append(content[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class RuleValue:
    tool: str
    content: str | None = None  # None: the rule covers every use of the tool

    def __str__(self) -> str:
        return format_rule(self)


def _unescaped(text: str, char: str) -> list[int]:
    positions, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == char:
            positions.append(i)
        i += 1
    return positions


def parse_rule(text: str) -> RuleValue:
    """Parse a rule string; raises ValueError saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"a rule must be a string, not {type(text).__name__}")
    text = text.strip()
    opens, closes = _unescaped(text, "("), _unescaped(text, ")")
    if not opens and not closes:
        name, content = text, None
    else:
        if not opens or not closes or closes[-1] != len(text) - 1 or closes[-1] < opens[0]:
            raise ValueError("unbalanced parentheses: write Tool(content), escaping ( and ) inside as \\( and \\)")
        name, content = text[: opens[0]], unescape_rule_content(text[opens[0] + 1 : -1])
        if content.strip() in ("", "*"):
            content = None  # Bash() and Bash(*) mean the whole tool
    if not _TOOL_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a tool name")
    if name.endswith("__*") and (not name.startswith("mcp__") or content is not None):
        raise ValueError("only an MCP server rule may end in __* (mcp__server__*)")
    name = LEGACY_TOOL_NAMES.get(name, name)
    if content is not None:
        _check_content(name, content)
    return RuleValue(name, content)


def _check_content(tool: str, content: str) -> None:
    if tool in SHELL_RULE_TOOLS:
        compile_shell_pattern(content)
    elif tool in READ_RULE_TOOLS or tool in EDIT_RULE_TOOLS:
        problem = validate_path_pattern(content)
        if problem:
            raise ValueError(problem)
    elif tool == "WebFetch":
        if not content.startswith("domain:") or not content[len("domain:") :].strip():
            raise ValueError("WebFetch rules take the form WebFetch(domain:example.com)")
    elif tool.startswith("mcp__"):
        raise ValueError("MCP rules take no content: use mcp__server, mcp__server__* or mcp__server__tool")


def format_rule(value: RuleValue) -> str:
    return value.tool if value.content is None else f"{value.tool}({escape_rule_content(value.content)})"


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One rule, where it came from, and what it was meant to match."""

    value: RuleValue
    behavior: Behavior
    source: str = "python"  # userSettings, projectSettings, localSettings, session, python...
    root: str | None = None  # the folder a leading "/" in a path rule is relative to
    must_match: tuple[str, ...] = ()
    must_not_match: tuple[str, ...] = ()
    origin: str | None = None  # the file it was read from, for messages

    @property
    def text(self) -> str:
        return format_rule(self.value)

    @property
    def tool_wide(self) -> bool:
        return self.value.content is None

    def covers_tool(self, name: str, aliases: Sequence[str] = ()) -> bool:
        """Tool-wide match, with ``mcp__server`` / ``mcp__server__*`` covering a server."""
        rule = self.value.tool
        if rule == name or rule in aliases:
            return True
        server = rule[:-3] if rule.endswith("__*") else rule
        return server.startswith("mcp__") and server.count("__") == 1 and name.startswith(server + "__")

    def __str__(self) -> str:
        return self.text


def make_rule(
    spec: str | dict[str, Any] | PermissionRule,
    behavior: Behavior,
    *,
    source: str = "python",
    root: str | None = None,
    origin: str | None = None,
) -> PermissionRule:
    """A rule from a string, a ``{"rule": ..., "must_match": [...], "must_not_match": [...]}``
    dict, or an existing rule; raises PermissionConfigError naming the rule and file."""
    where = origin or source
    if isinstance(spec, PermissionRule):
        return spec
    examples: dict[str, tuple[str, ...]] = {"must_match": (), "must_not_match": ()}
    text: Any = spec
    if isinstance(spec, dict):
        unknown = set(spec) - {"rule", "must_match", "must_not_match"}
        if "rule" not in spec or unknown:
            raise PermissionConfigError(
                "a rule object needs 'rule' and may have 'must_match' / 'must_not_match'"
                + (f" (unknown keys: {sorted(unknown)})" if unknown else ""),
                source=where, item=str(spec),
            )
        text = spec["rule"]
        for key in examples:
            raw = spec.get(key, [])
            if isinstance(raw, str) or not all(isinstance(x, str) for x in raw):
                raise PermissionConfigError(f"{key} must be a list of strings", source=where, item=str(text))
            examples[key] = tuple(raw)
    try:
        value = parse_rule(text)
    except ValueError as err:
        raise PermissionConfigError(f"malformed {behavior} rule: {err}", source=where, item=str(text)) from None
    rule = PermissionRule(value, behavior, source, root, examples["must_match"], examples["must_not_match"], origin)
    _check_examples(rule)
    return rule


def _check_examples(rule: PermissionRule) -> None:
    if not rule.must_match and not rule.must_not_match:
        return
    from .matching import rule_matches_example  # late: matching builds on this module

    for example in rule.must_match:
        if not rule_matches_example(rule, example):
            raise PermissionConfigError(
                f"the rule does not match its must_match example {example!r}", source=rule.origin or rule.source, item=rule.text
            )
    for example in rule.must_not_match:
        if rule_matches_example(rule, example):
            raise PermissionConfigError(
                f"the rule matches its must_not_match example {example!r}", source=rule.origin or rule.source, item=rule.text
            )


def rules_from(
    specs: Iterable[str | dict[str, Any] | PermissionRule] | None,
    behavior: Behavior,
    *,
    source: str = "python",
    root: str | None = None,
    origin: str | None = None,
) -> list[PermissionRule]:
    if specs is None:
        return []
    if isinstance(specs, (str, dict)):
        raise PermissionConfigError(f"'{behavior}' must be a list of rules", source=origin or source, item=str(specs))
    return [make_rule(s, behavior, source=source, root=root, origin=origin) for s in specs]


@dataclass
class RuleSet:
    """Every rule, kept in load order; precedence comes from behavior, not source."""

    rules: list[PermissionRule] = field(default_factory=list)

    def add(self, rule: PermissionRule) -> None:
        if rule not in self.rules:
            self.rules.append(rule)

    def of(self, behavior: Behavior) -> list[PermissionRule]:
        return [r for r in self.rules if r.behavior == behavior]

    def tool_wide(self, behavior: Behavior, name: str, aliases: Sequence[str] = ()) -> PermissionRule | None:
        return next((r for r in self.of(behavior) if r.tool_wide and r.covers_tool(name, aliases)), None)

    def content_rules(self, behavior: Behavior, names: Iterable[str]) -> list[PermissionRule]:
        wanted = set(names)
        return [r for r in self.of(behavior) if not r.tool_wide and r.value.tool in wanted]
