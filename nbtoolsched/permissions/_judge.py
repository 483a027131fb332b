"""The rule order: every rule, check and mode, in Claude Code's order, before anyone is asked.

  hook deny → tool-wide deny → the tool's own check (its deny; then, in plan mode, any
  call that is not read-only is denied) → tool-wide ask → own ask that must prompt
  (content ask rule, safety check, a tool needing a person) → hook ask / hook allow →
  bypassPermissions → tool-wide allow → own allow → ask.

For a tool whose decision cannot depend on its input, the answer is remembered per tool
and mode until a rule is added. ``RuleOrder`` is the layer of ``Permissions`` above the
tool's own check (``_own_check``).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool
from .._tool._context import ToolContext
from .._tool._decorator import FunctionTool
from ._checks import is_immune_ask, read_only_in, tool_kind
from ._explanation import NamedTool
from ._modes import Mode
from ._own_check import OwnCheck
from ._rules import PermissionRule

__all__ = ["RuleOrder"]


class RuleOrder(OwnCheck):
    """Every rule, check and mode: the decision before an approver or classifier is asked."""

    async def _evaluate(
        self,
        tool: Tool,
        input: dict[str, Any],
        parsed: Any,
        ctx: ToolContext,
        hook: Decision | None,
        mode: Mode | None = None,
        steps: list[str] | None = None,
    ) -> Decision:
        """The decision before any approver is asked. ``steps`` (only ``explain`` passes a
        list) collects why, step by step; a run pays for no explanation it never reads.

        For a tool whose decision cannot depend on its input (``_input_free``) and no hook
        decision, the answer is remembered per tool and mode until a rule is added: the
        common case of a plain ``@tool`` function costs one lookup per call."""
        mode = mode or self._mode
        if hook is not None or steps is not None or not _input_free(tool):
            return await self._judge(tool, input, parsed, ctx, hook, mode, steps)
        known = self._remembered(tool, hook, mode)
        if known is not None:
            return known
        decision = await self._judge(tool, input, parsed, ctx, hook, mode, steps)
        self.rules.decisions[(id(tool), mode)] = (tool, decision)
        return decision

    def _remembered(self, tool: Tool, hook: Decision | None, mode: Mode) -> Decision | None:
        """The decision ``_evaluate`` remembered for an input-free tool in this mode, if any."""
        if hook is not None or not _input_free(tool):
            return None
        known = self.rules.decisions.get((id(tool), mode))
        return known[1] if known is not None and known[0] is tool else None

    async def _judge(
        self,
        tool: Tool,
        input: dict[str, Any],
        parsed: Any,
        ctx: ToolContext,
        hook: Decision | None,
        mode: Mode,
        steps: list[str] | None,
    ) -> Decision:
        """Every rule, check and mode, in Claude Code's order."""

        def done(decision: Decision, step: str) -> Decision:
            if steps is not None:
                steps.append(step)
            if decision.behavior == "allow" and decision.updated_input is None and updated is not None:
                return replace(decision, updated_input=updated)
            return decision
        updated = hook.updated_input if hook is not None and hook.behavior in ("allow", "ask") else None
        if hook is not None and hook.behavior == "deny":
            return done(hook, "a PreToolUse hook denied the call")
        if updated is not None:
            # Everything below judges the input that will run; one the tool cannot take
            # is refused rather than judged by the input it replaced.
            reparsed = _parse(tool, updated, _INVALID)
            if reparsed is _INVALID:
                return done(
                    Decision.deny(
                        f"A PreToolUse hook changed the {tool.name} input into one the tool does not accept, so the call was not run.",
                        DecisionReason("hook", "invalid updatedInput"),
                    ),
                    "a PreToolUse hook's updatedInput does not validate",
                )
            input, parsed = updated, reparsed
        rule = self.rules.tool_wide("deny", tool.name, tool.aliases)
        if rule is not None:
            return done(
                Decision.deny(f"Permission denied: every use of {tool.name} is blocked by the rule {rule.text} ({rule.origin or rule.source}).", _reason(rule, "tool-wide deny rule")),
                f"tool-wide deny rule {rule.text} matched",
            )
        if steps is not None:
            steps.append("no tool-wide deny rule")
        facts = self._facts(tool, input, parsed, ctx, mode)
        own = await self._own_check(facts, ctx)
        if steps is not None:
            steps.extend(facts.steps)  # the shell check's precedence step that decided
            steps.append(f"the tool's own check ({tool_kind(tool)}): {own.behavior}" + (f" — {own.reason.describe()}" if own.reason else ""))
        if own.behavior == "deny":
            return done(own, "the tool's own check denied it")
        if mode == "plan" and not read_only_in(tool, parsed, ctx.cwd):
            return done(
                Decision.deny(
                    f"Plan mode allows only read-only tools, and this {tool.name} call can change things. Finish the plan and present it instead.",
                    DecisionReason("mode", "plan mode: not read-only"),
                ),
                "plan mode refuses a call that is not read-only",
            )
        rule = self.rules.tool_wide("ask", tool.name, tool.aliases)
        if rule is not None:
            return done(
                Decision.ask(f"The rule {rule.text} ({rule.origin or rule.source}) asks for approval before any use of {tool.name}.", _reason(rule, "tool-wide ask rule")),
                f"tool-wide ask rule {rule.text} matched",
            )
        if own.behavior == "ask" and (_requires_person(tool) or is_immune_ask(own)):
            return done(own, "an ask that even bypass mode and hook approvals keep")
        if hook is not None and hook.behavior == "allow" and not (_requires_person(tool) and hook.updated_input is None):
            return done(hook, "a PreToolUse hook allowed it and no rule objected")
        if hook is not None and hook.behavior == "ask":
            return done(hook, "a PreToolUse hook asked for approval")
        if mode == "bypassPermissions":
            return done(Decision.allow(None, DecisionReason("mode", "bypassPermissions allows it")), "bypassPermissions mode")
        rule = self.rules.tool_wide("allow", tool.name, tool.aliases)
        if rule is not None:
            return done(Decision.allow(None, _reason(rule, "tool-wide allow rule")), f"tool-wide allow rule {rule.text} matched")
        if own.behavior in ("allow", "ask"):
            return done(own, f"the tool's own check said {own.behavior}")
        if read_only_in(tool, parsed, ctx.cwd) and not tool.is_mcp and tool_kind(tool) == "generic":
            return done(_read_only_allow(tool.name), "a read-only tool with no rule against it")
        return done(
            Decision.ask(own.message or _ask_text(tool), DecisionReason("default", "no rule allows it"), own.suggestions),
            "nothing allowed it, so it needs approval",
        )


# -- helpers -------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _read_only_allow(tool_name: str) -> Decision:
    """The (immutable) decision that lets a read-only call through; one per tool, not per call."""
    return Decision.allow(None, DecisionReason("tool", f"{tool_name} is read-only for this input"))


def _reason(rule: PermissionRule, detail: str) -> DecisionReason:
    return DecisionReason("rule", detail, rule=rule.text, source=rule.origin or rule.source)


def _ask_text(tool: Tool) -> str:
    return f"{tool.name} needs permission to run, and no rule allows it yet."


def _from_hook(decision: Decision) -> bool:
    return decision.reason is not None and decision.reason.kind == "hook"


def _requires_person(tool: Tool) -> bool:
    try:
        return bool(tool.requires_user_interaction())
    except Exception:  # noqa: BLE001
        return True


_INPUT_FREE: dict[type, bool] = {}
# What, set on one tool object, could make its decisions depend on the input after all.
_PER_TOOL_OVERRIDES = frozenset({"check_permissions", "permission_content", "is_read_only", "is_read_only_in",
                                 "permission_kind", "is_mcp"})


def _input_free(tool: Tool) -> bool:
    """Whether every decision about this tool is the same for any input: a plain function
    tool (``@tool``) of the generic kind, with no permission check and no rule content of
    its own and a read-only answer fixed when it was declared. Anything else (file, shell
    and web tools, MCP tools, subclasses that answer per input) is judged call by call."""
    cls = type(tool)
    fixed = _INPUT_FREE.get(cls)
    if fixed is None:
        fixed = _INPUT_FREE[cls] = (
            issubclass(cls, FunctionTool)
            and cls.is_read_only is FunctionTool.is_read_only
            and cls.is_read_only_in is Tool.is_read_only_in
            and cls.check_permissions is Tool.check_permissions
            and not hasattr(cls, "permission_content")
            and cls.permission_kind == "generic"
            and not cls.is_mcp
        )
    return fixed and _PER_TOOL_OVERRIDES.isdisjoint(vars(tool))


_INVALID = object()  # _parse's fallback when a rejected input must not be judged at all


def _parse(tool: Tool, data: dict[str, Any], fallback: Any = None) -> Any:
    model = getattr(tool, "input_model", None)
    try:
        return model.model_validate(data) if model is not None and not isinstance(tool, NamedTool) else data
    except Exception:  # noqa: BLE001 - an input the model rejects: checks read the dict
        return fallback if fallback is not None else data
