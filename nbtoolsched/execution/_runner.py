"""The rules every path shares for one call: when it stops, how its modifier applies,
and how a wait for a person is announced."""

from __future__ import annotations

from typing import Any, Callable

from .._events import ApprovalAnswered, ApprovalAsked, RunEvents
from ._pipeline import CallOutcome
from ._prepare import PreparedCall
from .._tool._context import ToolContext

__all__ = ["apply_modifier", "should_cancel", "traced_approver"]


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


def traced_approver(approver: Any, events: RunEvents, call_of: Callable[[str], tuple[str, int] | None]) -> Any:
    """The run's approver, wrapped so listeners see when a call waits for a person and
    what they said (``call_of`` gives the name and batch a ``tool_use_id``'s call has in
    the run's other events, or None for an id the run does not know)."""
    return _TracedApprover(approver, events, call_of)


class _TracedApprover:
    """One per run, not one per call: most calls never ask, and the request names its call."""

    __slots__ = ("__wrapped__", "events", "call_of")

    def __init__(self, approver: Any, events: RunEvents, call_of: Callable[[str], tuple[str, int] | None]) -> None:
        self.__wrapped__ = approver  # who really holds the request (a broker)
        self.events, self.call_of = events, call_of

    async def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        events = self.events
        tool_use_id = getattr(request, "tool_use_id", None)  # a custom gate may ask with its own object
        if not events.listening or not isinstance(tool_use_id, str):
            return await self.__wrapped__(request, *args, **kwargs)
        # The name the call has in its other events: the model's, which may be an old alias
        # of the tool the request names.
        name, batch = self.call_of(tool_use_id) or (str(getattr(request, "tool_name", "")), 0)
        events.emit(ApprovalAsked(tool_use_id, name, batch, events.clock()))
        answer = None
        try:
            answer = await self.__wrapped__(request, *args, **kwargs)
            return answer
        finally:
            events.emit(ApprovalAnswered(tool_use_id, name, batch, events.clock(), _describe(answer)))


def _describe(answer: Any) -> str:
    if answer is None:
        return "none"
    for attr in ("behavior", "kind", "decision", "value"):
        value = getattr(answer, attr, None)
        if isinstance(value, str):
            return value
    return str(answer)
