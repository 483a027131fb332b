"""Permission rule strings: ``Tool`` or ``Tool(content)``, parsed strictly.

Claude Code turns a malformed rule into a bare tool name; here it is an error at load
time (a rule that silently means something else is worse than no rule). A rule may
carry examples it must and must not match, checked when it is loaded.

Settings files are read more forgivingly (``rules_from_settings``), because Claude Code
drops a rule it cannot use with a warning and keeps the rest of the file. Each such
rule becomes a ``RuleWarning`` naming the file and the rule, and:

* an allow rule Claude Code drops (or never consults) is dropped here too;
* a deny or ask rule Claude Code drops (``Bash(sudo :* )``, ``Bash()``) or never
  consults (``Write(...)``: Claude Code checks file edits against ``Edit(...)`` rules
  only) is enforced here. A deliberate departure: dropping a deny rule fails open;
* a deny or ask rule we cannot parse at all is read conservatively, as a deny (or ask)
  of every use of the tool it names. Refusing the whole file instead would let a caller
  that falls back to "no settings" lose every other rule in it; the tool-wide reading
  keeps the file's rules and never allows what the author meant to forbid. A rule whose
  tool name cannot be read either still refuses the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

from ._errors import PermissionConfigError
from ._path_patterns import validate_path_pattern
from ._problems import LoadProblem, RuleWarning
from ._shell_rules import compile_shell_pattern

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
    "rules_from_settings",
    "claude_code_rule_problem",
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
    from ._matching import rule_matches_example  # late: matching builds on this module

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


# -- settings files: what Claude Code would drop, and a forgiving reader ------------------------------
# Tools whose rule content Claude Code validates as a file pattern, and the two whose
# content rules its file checks consult (every other file tool's content rule is inert).
_CC_FILE_PATTERN_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "NotebookRead", "NotebookEdit", "MultiEdit"})
_CC_CONSULTED_FILE_RULES = {"Read": "Read", "Edit": "Edit"}


def claude_code_rule_problem(text: str) -> tuple[str, str] | None:
    """Why Claude Code's settings loader drops this rule, or why its checks never consult
    it: ``(kind, reason)``, or None when Claude Code keeps and uses it (its
    ``validatePermissionRule`` and file-rule lookup, v2.1)."""
    if not text.strip():
        return "dropped", "it is empty"
    if text != text.strip():
        return "dropped", "it keeps the spaces around it in the tool name, so the rule never matches"
    if len(_unescaped(text, "(")) != len(_unescaped(text, ")")):
        return "dropped", "its parentheses do not match"
    opens = _unescaped(text, "(")
    if any(text[i + 1 : i + 2] == ")" for i in opens):
        return "dropped", "it has empty parentheses (write the bare tool name for every use)"
    closes = _unescaped(text, ")")
    if opens and closes and closes[-1] == len(text) - 1:
        tool, content = text[: opens[0]], unescape_rule_content(text[opens[0] + 1 : -1])
    else:
        tool, content = text, None
    if tool.startswith("mcp__"):
        return ("dropped", "MCP rules take no pattern in parentheses") if opens else None
    if tool[:1] != tool[:1].upper():
        return "dropped", "a tool name must start with an uppercase letter"
    if content is None or content.strip() == "*":
        return None
    if tool == "WebSearch" and ("*" in content or "?" in content):
        return "dropped", "WebSearch rules take no wildcards"
    if tool == "WebFetch" and ("://" in content or content.startswith("http") or not content.startswith("domain:")):
        return "dropped", "WebFetch rules take the form WebFetch(domain:host)"
    if tool in SHELL_RULE_TOOLS and ((":*" in content and not content.endswith(":*")) or content == ":*"):
        return "dropped", "':*' must end the pattern and follow a command prefix"
    if tool in _CC_FILE_PATTERN_TOOLS:
        if ":*" in content:
            return "dropped", "':*' is only for Bash prefix rules"
        if "*" in content and "**" not in content and not re.search(r"^\*|\*$|/\*|\*\.|\*\)", content):
            return "dropped", "a '*' in the middle of a path segment is refused"
    family = "Edit" if tool in EDIT_RULE_TOOLS else "Read" if tool in READ_RULE_TOOLS else None
    if family is not None and _CC_CONSULTED_FILE_RULES.get(tool) != family:
        return "not_consulted", f"its file checks only consult {family}(...) rules, never {tool}(...) ones"
    return None


def rules_from_settings(
    specs: Any, behavior: Behavior, *, source: str, root: str | None, origin: str, problems: list[LoadProblem]
) -> list[PermissionRule]:
    """A settings file's rule list, read as described in the module docstring; caveats go
    to ``problems``. Raises only for a rule that cannot be read at all (or failing its own
    examples) and for a list that is not a list."""
    if specs is None:
        return []
    if isinstance(specs, (str, dict)) or not isinstance(specs, list):
        raise PermissionConfigError(f"'{behavior}' must be a list of rules", source=origin, item=str(specs))
    out: list[PermissionRule] = []
    for spec in specs:
        text = spec.get("rule") if isinstance(spec, dict) else spec
        if not isinstance(text, str):
            if behavior == "allow":
                problems.append(LoadProblem(RuleWarning, "rule_invalid", "not a rule string; dropped (Claude Code drops it too)", origin, str(spec)))
                continue
            raise PermissionConfigError(f"a {behavior} rule must be a string", source=origin, item=str(spec))
        try:
            parse_rule(text)
        except ValueError as err:
            rule = _conservative(text, str(err), behavior, source, root, origin, problems)
            if rule is not None:
                out.append(rule)
            continue
        rule = make_rule(spec, behavior, source=source, root=root, origin=origin)  # raises only for failed examples
        caveat = claude_code_rule_problem(text)
        if caveat is not None:
            kind, why = caveat
            verb = "drops this rule" if kind == "dropped" else "ignores this rule"
            if behavior == "allow":
                problems.append(LoadProblem(RuleWarning, f"rule_{kind}_by_claude_code", f"Claude Code {verb}: {why}. "
                                            "This allow rule is dropped here too", origin, text))
                continue
            problems.append(LoadProblem(RuleWarning, f"rule_{kind}_by_claude_code", f"Claude Code {verb}: {why}. "
                                        f"nbtoolsched enforces this {behavior} rule (a deliberate difference)", origin, text))
        out.append(rule)
    return out


def _conservative(
    text: str, why: str, behavior: Behavior, source: str, root: str | None, origin: str, problems: list[LoadProblem]
) -> PermissionRule | None:
    """An unparseable rule: an allow is dropped; a deny or ask covers its whole tool."""
    if behavior == "allow":
        problems.append(LoadProblem(RuleWarning, "rule_invalid", f"cannot be parsed ({why}); dropped, as Claude Code drops it", origin, text))
        return None
    name = text.strip().split("(", 1)[0].strip()
    try:
        value = parse_rule(name)
    except ValueError:
        raise PermissionConfigError(f"malformed {behavior} rule: {why}", source=origin, item=text) from None
    problems.append(LoadProblem(
        RuleWarning, "rule_read_conservatively",
        f"cannot be parsed ({why}). Claude Code drops it; here it is read as {behavior!r} for every use of {value.tool}, "
        "so nothing it meant to forbid gets through. Fix the rule to narrow it", origin, text,
    ))
    return PermissionRule(value, behavior, source, root, origin=origin)


class RuleSet:
    """Every rule, kept in load order; precedence comes from behavior, not source.

    Compiled for the hot path: lookups are answered from per-behavior indexes built
    once per change of the rules (``add``), not by scanning every rule for every call.
    """

    def __init__(self, rules: Iterable[PermissionRule] = ()) -> None:
        self._rules: list[PermissionRule] = []
        self._by_behavior: dict[str, list[PermissionRule]] = {"allow": [], "deny": [], "ask": []}
        self._tool_wide: dict[tuple[str, str, tuple[str, ...]], PermissionRule | None] = {}
        self._content: dict[tuple[str, frozenset[str]], list[PermissionRule]] = {}
        # Decisions the engine made from nothing but a tool, a mode and these rules (see
        # Permissions._evaluate); they hold only while the rules do.
        self.decisions: dict[tuple[int, str], tuple[Any, Any]] = {}
        for rule in rules:
            self.add(rule)

    @property
    def rules(self) -> list[PermissionRule]:
        """Every rule in load order (a copy: change the set with ``add``)."""
        return list(self._rules)

    def add(self, rule: PermissionRule) -> None:
        if rule in self._rules:
            return
        self._rules.append(rule)
        self._by_behavior[rule.behavior].append(rule)
        self._tool_wide.clear()  # the indexes are rebuilt lazily for the new set of rules
        self._content.clear()
        self.decisions.clear()

    def copy(self) -> "RuleSet":
        """The same rules, indexes and remembered decisions, in a set of its own (a rule
        added to one is not in the other): one per session from a policy's rules."""
        other = RuleSet()
        other._rules = list(self._rules)
        other._by_behavior = {b: list(rules) for b, rules in self._by_behavior.items()}
        other._tool_wide = dict(self._tool_wide)
        other._content = dict(self._content)  # lists built once and only replaced, never changed
        other.decisions = dict(self.decisions)
        return other

    def of(self, behavior: Behavior) -> list[PermissionRule]:
        return list(self._by_behavior[behavior])

    def tool_wide(self, behavior: Behavior, name: str, aliases: Sequence[str] = ()) -> PermissionRule | None:
        """The first rule of ``behavior`` that covers every use of the tool (or None)."""
        key = (behavior, name, tuple(aliases))
        try:
            return self._tool_wide[key]
        except KeyError:
            found = next((r for r in self._by_behavior[behavior] if r.tool_wide and r.covers_tool(name, aliases)), None)
            self._tool_wide[key] = found
            return found

    def content_rules(self, behavior: Behavior, names: Iterable[str]) -> list[PermissionRule]:
        """Rules of ``behavior`` with a specifier, for any of the tool ``names``, in load order."""
        key = (behavior, frozenset(names))
        found = self._content.get(key)
        if found is None:
            wanted = key[1]
            found = self._content[key] = [r for r in self._by_behavior[behavior] if not r.tool_wide and r.value.tool in wanted]
        return found

    def __len__(self) -> int:
        return len(self._rules)

    def __repr__(self) -> str:
        return f"RuleSet({len(self._rules)} rules)"
