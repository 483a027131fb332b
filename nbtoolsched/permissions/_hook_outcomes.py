"""Combining what every matching hook of an event said into one outcome for the call.

PreToolUse: deny > ask > allow; context and stop requests add up. PermissionRequest: a
deny from any hook beats an allow. A hook error is a notice (the call goes on, as in
Claude Code) unless hooks are strict, which turns it into a block.
"""

from __future__ import annotations

from dataclasses import replace

from .._tool._decision import Decision, DecisionReason
from ._base import HookNotice, PermissionRequestOutcome, PostToolUseOutcome, PreToolUseOutcome
from ._hook_types import HookResult

__all__ = ["combine_permission_request", "combine_post", "combine_pre", "notices_of"]

_RANK = {"deny": 3, "ask": 2, "allow": 1}


def notices_of(event: str, r: HookResult, *, strict: bool) -> list[HookNotice]:
    """What one hook's result tells the person (never the model): its error, its systemMessage."""
    found = []
    if r.error:
        found.append(HookNotice(event, r.label, r.error_kind or "error", r.error, r.hook.source, blocked=strict))
    if r.system_message:
        found.append(HookNotice(event, r.label, "system_message", r.system_message, r.hook.source))
    return found


def _strict_text(event: str, tool_name: str, failed: list[HookResult]) -> str:
    names = "; ".join(f"{event} hook {r.label!r} {r.error}" for r in failed)
    return f"{names}. Hooks are strict, so the {tool_name} call was not run."


def combine_pre(tool_name: str, results: list[HookResult], *, strict: bool = False) -> PreToolUseOutcome:
    """deny > ask > allow; context and stop requests add up; a hook error is a notice
    (the call goes on, as in Claude Code) unless hooks are strict."""
    outcome = PreToolUseOutcome()
    best: Decision | None = None
    for r in results:
        outcome.notices.extend(notices_of("PreToolUse", r, strict=strict))
        if r.error:
            continue
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        decision = _hook_decision(tool_name, r)
        if decision is None:
            if r.updated_input is not None:
                outcome.updated_input, outcome.updated_by = r.updated_input, r.label
            continue
        if best is None or _RANK[decision.behavior] >= _RANK[best.behavior]:
            best = decision
    failed = [r for r in results if r.error]
    if strict and failed:
        outcome.stop = _strict_text("PreToolUse", tool_name, failed)
    outcome.decision = best
    return outcome


def _hook_decision(tool_name: str, r: HookResult) -> Decision | None:
    reason = DecisionReason("hook", r.reason or r.blocking_error or "", source=f"PreToolUse:{tool_name} {r.label}")
    if r.blocking_error is not None:
        return Decision.deny(f"A PreToolUse hook ({r.label}) blocked {tool_name}: {r.blocking_error}", reason)
    if r.decision is None:
        return None
    verb = {"allow": "allowed", "deny": "blocked", "ask": "asked for approval of"}[r.decision]
    message = r.reason or f"A PreToolUse hook ({r.label}) {verb} this {tool_name} call."
    if r.decision == "deny" and r.reason:
        message = f"A PreToolUse hook ({r.label}) blocked {tool_name}: {r.reason}"
    return Decision(r.decision, message=message, updated_input=r.updated_input, reason=reason)


def combine_post(event: str, results: list[HookResult], *, strict: bool = False) -> PostToolUseOutcome:
    outcome = PostToolUseOutcome()
    errors: list[str] = []
    for r in results:
        outcome.notices.extend(notices_of(event, r, strict=strict))
        if r.error:
            if strict:
                errors.append(f"{event} hook {r.label!r} {r.error} (hooks are strict)")
            continue
        if r.blocking_error is not None:
            errors.append(f"{event} hook {r.label!r}: {r.blocking_error}")
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        if r.updated_output is not None:
            outcome.updated_output = r.updated_output
    outcome.blocking_error = "\n".join(errors) or None
    return outcome


def combine_permission_request(tool_name: str, results: list[HookResult], *, strict: bool = False) -> PermissionRequestOutcome:
    """A deny from any hook beats an allow. Exit 2 counts as a deny (Claude Code has no
    use for it here; refusing is the safe reading). Under strict hooks a failed hook denies."""
    outcome = PermissionRequestOutcome()
    deny: Decision | None = None
    allow: Decision | None = None
    for r in results:
        outcome.notices.extend(notices_of("PermissionRequest", r, strict=strict))
        where = DecisionReason("hook", r.error or r.blocking_error or "", source=f"PermissionRequest:{tool_name} {r.label}")
        if r.error:
            if strict:
                deny = deny or Decision.deny(_strict_text("PermissionRequest", tool_name, [r]), where)
            continue
        if r.blocking_error is not None or r.decision == "deny":
            text = r.blocking_error or r.reason or "no reason given"
            deny = deny or Decision.deny(f"A PermissionRequest hook ({r.label}) denied this {tool_name} call: {text}", where)
            continue
        answer = r.permission_request
        if answer is None:
            continue
        outcome.updated_permissions.extend(answer.get("updatedPermissions") or [])
        if answer["behavior"] == "deny":
            message = answer.get("message") or f"A PermissionRequest hook ({r.label}) denied this {tool_name} call."
            deny = deny or Decision.deny(message, replace(where, detail=answer.get("message") or "denied"),
                                         abort_turn=bool(answer.get("interrupt")))
        else:
            allow = Decision.allow(answer.get("updatedInput"), replace(where, detail=f"allowed by {r.label}"))
    outcome.decision = deny or allow
    return outcome
