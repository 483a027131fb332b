"""One tool call, start to finish, in the documented order.

find -> already aborted? -> validate (pydantic, then the tool's own check) -> backfill an
observable copy -> PreToolUse hooks -> permission -> call -> result mapping and
persistence -> PostToolUse / PostToolUseFailure hooks.

Whatever happens, ``run`` returns exactly one ``CallOutcome`` holding one tool_result,
or ends with ``CancelledError`` when its task is cancelled (an abort that the tool did
not handle itself, or the whole run stopping): the engine then answers the call, with
``stopped_outcome``, the one place that writes the result of a stopped call. A tool's
code that calls ``sys.exit`` (a wrapped argparse or click CLI) gets an error result; one
that raises ``KeyboardInterrupt`` (a Ctrl-C that landed in it) is treated as the user
stopping the run: the call gets the interrupted result and the run is aborted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from pydantic import ValidationError

from .._messages import TextBlock, ToolResultBlock
from ..permissions._approvals import ApprovalAnswer, ApprovalRequest, Approver
from ..permissions._base import (
    AllowUnlessDenied,
    ApprovalDeferred,
    HookEvent,
    HookNotice,
    HookRunner,
    PermissionGate,
    PermissionRequest,
    PostToolUseOutcome,
    PreToolUseOutcome,
)
from .._tool._abort import SIBLING_ERROR, STREAMING_FALLBACK, USER_ABORT, AbortError
from .._tool._decision import Decision
from .._tool._context import ContextModifier, ToolContext
from .._tool._base import overrides, ToolOutput
from ._prepare import PreparedCall
from ._results import error_result, finish_content, format_exception
from ._texts import (
    CANCELLED_BEFORE_START,
    HOOK_STOPPED,
    INTERRUPTED,
    sibling_cancelled,
    streaming_discarded,
    tool_crashed,
    tool_exited,
    wrap_error,
)
from ._validation import invalid_input_text

__all__ = ["CallOutcome", "CallPipeline", "Status"]

Status = Literal["completed", "error", "denied", "cancelled", "deferred"]


@dataclass(slots=True)
class CallOutcome:
    tool_use_id: str
    tool_name: str
    result: ToolResultBlock
    status: Status
    # What travels with the result (hook context for the model; hook problems for the
    # person). Empty tuples until something is there: most calls carry nothing.
    attachments: Sequence[TextBlock] = ()
    context_modifier: ContextModifier | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    deferred: ApprovalRequest | None = None  # the pending approval request when status == "deferred"
    hook_notices: Sequence[HookNotice] = ()  # non-blocking hook problems, for the person only

    @property
    def is_error(self) -> bool:
        return bool(self.result.is_error)


def stopped_outcome(call: PreparedCall, reason: str | None, failed: str = "", *, started: bool = True) -> CallOutcome:
    """The answer for a call that was stopped (or never started) by an abort.

    The one place such a result is written: ``reason`` is the abort tree's reason (a
    sibling's failure names ``failed``), ``started`` says whether the call may have done
    part of its work.
    """
    if reason == SIBLING_ERROR:
        text = sibling_cancelled(failed)
    elif reason == STREAMING_FALLBACK:
        text = streaming_discarded(started)
    else:
        text = INTERRUPTED if started else CANCELLED_BEFORE_START
    return CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, text), "cancelled")


def error_outcome(call: PreparedCall) -> CallOutcome:
    """The answer for a call that could not even start (bad block, unknown tool, bad input)."""
    assert call.error is not None
    return CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, call.error), "error")


class CallPipeline:
    """Runs prepared calls; holds what every call shares (gate, hooks, session dir).

    Hooks have one holder. Given here (``hooks=``), the pipeline holds them; otherwise the
    gate does (``Permissions`` holds the hooks of its settings files) and every call reads
    them from it, so no second copy exists to fall out of step."""

    def __init__(
        self, gate: PermissionGate | None = None, hooks: HookRunner | None = None, approver: Approver | None = None, *,
        mode: str | None = None, answers: Mapping[str, ApprovalAnswer] | None = None,
    ) -> None:
        self.gate: PermissionGate = gate if gate is not None else AllowUnlessDenied()
        self._hooks = hooks  # given for these calls; None: the gate's own
        self.approver = approver  # a run's: resolved once when it starts (``resolve_approver``)
        self.mode = mode  # a permission mode for these calls only (None: the gate's own)
        self.answers: Mapping[str, ApprovalAnswer] = answers or {}  # a resumed run's saved answers

    @property
    def hooks(self) -> HookRunner | None:
        """The hooks these calls fire: the ones given, else the gate's."""
        return self._hooks if self._hooks is not None else getattr(self.gate, "hooks", None)

    def with_options(
        self, *, mode: str | None, approver: Approver | None, answers: Mapping[str, ApprovalAnswer] | None = None
    ) -> "CallPipeline":
        """The same gate and hooks with one run's approver, permission mode and saved answers."""
        return CallPipeline(self.gate, self._hooks, approver, mode=mode if mode is not None else self.mode, answers=answers)

    async def run(self, call: PreparedCall, ctx: ToolContext, approver: Approver | None = None) -> CallOutcome:
        if call.error is not None:
            return error_outcome(call)
        reason = ctx.abort.reason
        if reason is not None:
            # Never started once the turn is stopping, whatever the reason: as in Claude Code,
            # where a tool started after an interrupt gets an already-aborted signal and so
            # its cancel result (an interrupt only lets "block" tools already running finish).
            return stopped_outcome(call, reason, started=False)
        try:
            return await self._run_checked(call, ctx, approver if approver is not None else self.approver)
        except ApprovalDeferred as deferred:
            placeholder = error_result(call.tool_use_id, "Waiting for approval.")
            return CallOutcome(call.tool_use_id, call.name, placeholder, "deferred", deferred=deferred.request)
        except Exception as err:  # a bug in a hook, a gate or a tool's checks
            text = tool_crashed(call.name, str(err) or type(err).__name__)
            return CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, text), "error")
        except SystemExit as err:  # in validate_input, check_permissions, a hook, map_result
            return self._error(call, tool_crashed(call.name, _exit_text(err)))
        except KeyboardInterrupt:
            return _interrupted(call, ctx)

    async def _run_checked(self, call: PreparedCall, ctx: ToolContext, approver: Approver | None) -> CallOutcome:
        tool, parsed = call.tool, call.parsed
        assert tool is not None and parsed is not None
        if overrides(tool, "validate_input"):
            verdict = await tool.validate_input(parsed, ctx)
            if not verdict.ok:
                return self._error(call, wrap_error(verdict.message))

        backfilled = call.input  # hooks and the permission step see it; nobody changes it in place
        if overrides(tool, "backfill_observable_input"):
            backfilled = dict(call.input)
            tool.backfill_observable_input(backfilled, ctx)
        observable = backfilled
        attachments: list[TextBlock] = []
        hook_decision: Decision | None = None
        notices: list[Any] = []
        prevent, stop_reason = False, None
        hooks = self.hooks
        hooks = hooks if hooks else None  # an empty Hooks (settings without hooks) costs nothing
        if hooks is not None:
            pre = await hooks.pre_tool_use(HookEvent("PreToolUse", tool, tool.name, observable, call.tool_use_id, ctx))
            attachments.extend(TextBlock(text) for text in pre.additional_context)
            notices.extend(pre.notices)
            prevent, stop_reason = pre.prevent_continuation, pre.stop_reason
            if pre.stop is not None:
                outcome = self._error(call, pre.stop or HOOK_STOPPED)
                outcome.attachments = attachments
                outcome.hook_notices = notices
                return outcome
            hook_decision = pre.decision
            changed = _hook_input(pre)
            if changed is not None:
                checked = await self._check_hook_input(call, ctx, *changed)
                if isinstance(checked, str):
                    outcome = self._error(call, checked)
                    outcome.attachments = attachments
                    return outcome
                observable, parsed = changed[0], checked

        request = PermissionRequest(tool, observable, parsed, ctx, call.tool_use_id, hook_decision, approver, self.mode,
                                    hooks, notices)
        decision = await self.gate.decide(request)
        if decision.behavior != "allow":
            outcome = self._denied(call, ctx, decision, attachments, prevent, stop_reason)
            outcome.hook_notices = notices
            return outcome

        final = decision.updated_input if decision.updated_input is not None else observable
        call_input = self._input_for_call(call, backfilled, final)
        if isinstance(call_input, str):
            outcome = self._error(call, call_input)
            outcome.hook_notices = notices
            return outcome
        if decision.feedback:
            attachments.append(TextBlock(f"The user approved this call and said: {decision.feedback}"))
        outcome = await self._call(call, call_input, final, ctx, hooks)
        if attachments:
            outcome.attachments = [*attachments, *outcome.attachments]
        if notices:
            outcome.hook_notices = [*notices, *outcome.hook_notices]
        outcome.prevent_continuation = outcome.prevent_continuation or prevent
        outcome.stop_reason = outcome.stop_reason or stop_reason
        return outcome

    @staticmethod
    async def _check_hook_input(call: PreparedCall, ctx: ToolContext, updated: dict[str, Any], hook: str) -> Any:
        """A hook's new input, held to the same checks as the model's, or the error text.

        Every later step (read-only test, rules, the tool's own check, a speculation's
        sandbox) must judge the input that will run, not the one the hook replaced.
        Claude Code re-checks neither the schema nor ``validate_input`` here; a hook that
        hands over an input the tool cannot take fails the call instead.
        """
        tool = call.tool
        assert tool is not None
        why = f" (the input was changed by {hook})"
        try:
            parsed = tool.input_model.model_validate(updated)
        except ValidationError as err:
            return invalid_input_text(call.name, err, why)
        verdict = await tool.validate_input(parsed, ctx)
        if not verdict.ok:
            return wrap_error(f"{verdict.message}{why}")
        return parsed

    @staticmethod
    def _input_for_call(call: PreparedCall, backfilled: dict[str, Any], final: dict[str, Any]) -> Any:
        """The model's own input unless a hook or the permission step changed it.

        A backfilled field (an absolute ``file_path``) that comes back unchanged is put
        back as the model wrote it, so the call sees the model's input.
        """
        if final is backfilled or final == backfilled:
            return call.parsed
        changed = dict(final)
        for key, original in call.input.items():
            if key in backfilled and backfilled[key] != original and changed.get(key) == backfilled[key]:
                changed[key] = original
        try:
            return call.tool.input_model.model_validate(changed)  # type: ignore[union-attr]
        except ValidationError as err:
            return invalid_input_text(call.name, err, " (the input was changed by a hook or a permission rule)")

    def _denied(
        self, call: PreparedCall, ctx: ToolContext, decision: Decision, attachments: list[TextBlock], prevent: bool, stop: str | None
    ) -> CallOutcome:
        message = decision.message
        if not message:
            message = "Execution stopped by a PreToolUse hook" + (f": {stop}" if stop else "") if prevent else "Permission denied."
        if decision.abort_turn:
            ctx.abort.abort(USER_ABORT)
        return CallOutcome(
            call.tool_use_id, call.name, error_result(call.tool_use_id, message), "denied", attachments, None, prevent, stop
        )

    async def _call(
        self, call: PreparedCall, call_input: Any, observable: dict[str, Any], ctx: ToolContext, hooks: HookRunner | None
    ) -> CallOutcome:
        tool = call.tool
        assert tool is not None
        try:
            raw = await tool.call(call_input, ctx)
        except AbortError:
            # The tool noticed the abort and stopped itself: its failure hooks still run.
            # (A tool that does not stop is cancelled instead; its hooks are skipped.)
            outcome = stopped_outcome(call, ctx.abort.reason or USER_ABORT)
            await self._post_failure(call, observable, ctx, outcome, INTERRUPTED, True)
            return outcome
        except (Exception, SystemExit) as err:
            text = _exit_text(err) if isinstance(err, SystemExit) else format_exception(err)
            outcome = CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, text), "error")
            await self._post_failure(call, observable, ctx, outcome, text, False)
            return outcome
        except KeyboardInterrupt:
            outcome = _interrupted(call, ctx)
            await self._post_failure(call, observable, ctx, outcome, INTERRUPTED, True)
            return outcome

        output = raw if isinstance(raw, ToolOutput) else ToolOutput(raw)
        post: PostToolUseOutcome | None = None
        if hooks is not None and tool.is_mcp:
            post = await hooks.post_tool_use(self._event("PostToolUse", call, observable, ctx, response=output.data))
            if post.updated_output is not None:
                output = ToolOutput(post.updated_output, is_error=output.is_error, context_modifier=output.context_modifier)
        content = output.content if output.content is not None else tool.map_result(output.data)
        content = finish_content(tool.name, call.tool_use_id, content, tool.max_result_size_chars, _session_dir(ctx))
        result = ToolResultBlock.make(call.tool_use_id, content, is_error=output.is_error)
        outcome = CallOutcome(call.tool_use_id, call.name, result, "error" if output.is_error else "completed")
        outcome.context_modifier = output.context_modifier
        if hooks is not None and not tool.is_mcp:
            post = await hooks.post_tool_use(self._event("PostToolUse", call, observable, ctx, response=output.data))
        if post is not None:
            _apply_post(outcome, post, "PostToolUse")
        return outcome

    async def _post_failure(
        self, call: PreparedCall, observable: dict[str, Any], ctx: ToolContext, outcome: CallOutcome, error: str, interrupt: bool
    ) -> None:
        hooks = self.hooks
        if not hooks:
            return
        event = self._event("PostToolUseFailure", call, observable, ctx, error=error, is_interrupt=interrupt)
        try:
            post = await hooks.post_tool_use_failure(event)
        except Exception as err:
            outcome.attachments = [*outcome.attachments, TextBlock(f"PostToolUseFailure hook failed: {err}")]
            return
        _apply_post(outcome, post, "PostToolUseFailure")

    @staticmethod
    def _event(kind: str, call: PreparedCall, observable: dict[str, Any], ctx: ToolContext, **extra: Any) -> HookEvent:
        assert call.tool is not None
        return HookEvent(
            kind, call.tool, call.tool.name, observable, call.tool_use_id, ctx,
            tool_response=extra.get("response"), error=extra.get("error"), is_interrupt=extra.get("is_interrupt", False),
        )

    @staticmethod
    def _error(call: PreparedCall, text: str) -> CallOutcome:
        return CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, text), "error")


def _exit_text(err: SystemExit) -> str:
    """``sys.exit(2)`` and what it was about: argparse raises it while handling its own error."""
    detail = ""
    if err.__context__ is not None and not isinstance(err.__context__, SystemExit):
        detail = str(err.__context__)
    return tool_exited(err.code, detail)


def _interrupted(call: PreparedCall, ctx: ToolContext) -> CallOutcome:
    """A ``KeyboardInterrupt`` inside a tool: the user pressed Ctrl-C, so the run stops as for an abort."""
    ctx.abort.abort(USER_ABORT)
    return stopped_outcome(call, USER_ABORT)


def _apply_post(outcome: CallOutcome, post: PostToolUseOutcome, event: str) -> None:
    added = [TextBlock(f"{event} hook blocked: {post.blocking_error}")] if post.blocking_error else []
    added += [TextBlock(text) for text in post.additional_context]
    if post.prevent_continuation:
        outcome.prevent_continuation = True
        outcome.stop_reason = post.stop_reason or f"Execution stopped by a {event} hook"
        added.append(TextBlock(outcome.stop_reason))
    if added:
        outcome.attachments = [*outcome.attachments, *added]
    if post.notices:
        outcome.hook_notices = [*outcome.hook_notices, *post.notices]


def _hook_input(pre: PreToolUseOutcome) -> tuple[dict[str, Any], str] | None:
    """The input the PreToolUse hooks want run, and which hook said so (None: unchanged).

    A deciding hook's ``updatedInput`` wins over one from a hook that did not decide, as
    in Claude Code; after a deny nothing runs, so nothing needs checking.
    """
    decision = pre.decision
    if decision is not None and decision.behavior == "deny":
        return None
    if decision is not None and decision.updated_input is not None:
        source = decision.reason.source if decision.reason is not None else None
        return decision.updated_input, _hook_name(source.partition(" ")[2] if source else None)
    if pre.updated_input is not None:
        return pre.updated_input, _hook_name(pre.updated_by)
    return None


def _hook_name(label: str | None) -> str:
    return f"the PreToolUse hook {label!r}" if label else "a hook"


def _session_dir(ctx: ToolContext) -> Path:
    return ctx.session_dir
