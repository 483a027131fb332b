"""Claude Code's ``if`` on a hook: the call must match a rule; when that cannot be told,
the hook runs (a hook that should have fired and did not is the failure to avoid)."""

from __future__ import annotations

from ..shell import line_facts
from ._base import HookEvent
from ._matching import rule_matches_example, shell_rule_may_run
from ._rules import EDIT_RULE_TOOLS, READ_RULE_TOOLS, SHELL_RULE_TOOLS, PermissionRule

__all__ = ["condition_holds"]


def condition_holds(rule: PermissionRule, event: HookEvent) -> bool:
    """Claude Code's ``if``: the call must match the rule; when that cannot be told, the hook runs."""
    if not rule.covers_tool(event.tool_name, getattr(event.tool, "aliases", ())):
        return False
    if rule.value.content is None:
        return True
    data = event.tool_input
    tool = rule.value.tool
    if tool in SHELL_RULE_TOOLS:
        # As Claude Code: any subcommand's argv (quotes removed) matching fires the hook,
        # and so does a command that cannot be parsed. We also look through runners
        # (command, env, xargs, sh -c...) and count a match the shell's computed words
        # may make: stricter than Claude Code, whose conditions see argv as written.
        command = data.get("command")
        if not isinstance(command, str):
            return True
        parts = _subcommands(command)
        return parts is None or any(rule_matches_example(rule, part) for part in parts) or _may_run(rule, command)
    if tool in READ_RULE_TOOLS or tool in EDIT_RULE_TOOLS:
        path = next((data[k] for k in ("file_path", "notebook_path", "path") if isinstance(data.get(k), str)), None)
        return path is None or rule_matches_example(rule, event.ctx.resolve_path(path))
    if tool == "WebFetch" and isinstance(data.get("url"), str):
        return rule_matches_example(rule, data["url"])
    return True


def _may_run(rule: PermissionRule, command: str) -> bool:
    try:
        return shell_rule_may_run(rule, command)
    except Exception:  # noqa: BLE001 - cannot tell: the hook runs
        return True


def _subcommands(command: str) -> list[str] | None:
    try:
        parts = line_facts(command, "").parts
        return None if parts is None else [part.text for part in parts]
    except Exception:  # noqa: BLE001 - cannot parse: the hook runs
        return None
