"""Running one prepared call with its events, and the rules every path shares."""

from __future__ import annotations

from typing import Any

from .._events import ApprovalAnswered, ApprovalAsked, CallStarted
from ._pipeline import CallOutcome, CallPipeline
from ._prepare import PreparedCall
from ..tool._context import ToolContext
from .._events import RunEvents

__all__ = ["apply_modifier", "execute_call", "should_cancel", "traced_approver"]


async def execute_call(pipeline: CallPipeline, call: PreparedCall, ctx: ToolContext, events: RunEvents, batch: int) -> CallOutcome:
    """The pipeline for one call, announcing its start and any wait for a person."""
    if events:
        events.emit(CallStarted(call.tool_use_id, call.name, batch, events.clock()))
    approver = traced_approver(pipeline.approver, call, events, batch) if events and pipeline.approver else None
    return await pipeline.run(call, ctx, approver)


def should_cancel(call: PreparedCall, reason: str) -> bool:
    """An interrupt (a new user message) stops only tools that declared "cancel"."""
    return call.stops_for(reason)


def apply_modifier(context: ToolContext, outcome: CallOutcome) -> ToolContext:
    """Apply a call's context modifier; a modifier that fails leaves the context as it was."""
    if outcome.context_modifier is None:
        return context
    try:
        updated = outcome.context_modifier(context)
    except (Exception, SystemExit):  # a tool's modifier may wrap a CLI too
        return context
    return updated if isinstance(updated, ToolContext) else context


def traced_approver(approver: Any, call: PreparedCall, events: RunEvents, batch: int) -> Any:
    """The approver, wrapped so a run shows when a call waits for a person and what they said."""
    return _TracedApprover(approver, call, events, batch)


class _TracedApprover:
    """One small object per call (a closure would cost several), made before we know
    whether the call will ask at all."""

    __slots__ = ("__wrapped__", "call", "events", "batch")

    def __init__(self, approver: Any, call: PreparedCall, events: RunEvents, batch: int) -> None:
        self.__wrapped__ = approver  # who really holds the request (a broker)
        self.call, self.events, self.batch = call, events, batch

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call, events = self.call, self.events
        events.emit(ApprovalAsked(call.tool_use_id, call.name, self.batch, events.clock()))
        answer = None
        try:
            answer = await self.__wrapped__(*args, **kwargs)
            return answer
        finally:
            events.emit(ApprovalAnswered(call.tool_use_id, call.name, self.batch, events.clock(), _describe(answer)))


def _describe(answer: Any) -> str:
    if answer is None:
        return "none"
    for attr in ("behavior", "kind", "decision", "value"):
        value = getattr(answer, attr, None)
        if isinstance(value, str):
            return value
    return str(answer)
