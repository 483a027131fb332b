"""The rules every path shares for one call: when it stops, how its modifier applies,
and how a wait for a person is announced."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .._events import ApprovalAnswered, ApprovalAsked, RunEvents
from ..permissions._approvals import ApprovalAnswer, ApprovalRequest, Approver
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


def traced_approver(
    approver: Approver, events: RunEvents, call_of: Callable[[str], tuple[str, int] | None],
    answers: Mapping[str, ApprovalAnswer] | None = None,
) -> Approver:
    """The one wrapper a run's approver gets (applied once, when the run starts): answers
    given ahead of time (a resumed run's, by tool_use_id) come first, each used once; and
    listeners see when a call waits for a person and what was said (``call_of`` gives the
    name and batch a ``tool_use_id``'s call has in the run's other events, or None for an
    id the run does not know)."""
    return _RunApprover(approver, events, call_of, dict(answers or {}))


class _RunApprover:
    """One per run, not one per call: most calls never ask, and the request names its call."""

    __slots__ = ("__wrapped__", "events", "call_of", "answers")

    def __init__(self, approver: Approver, events: RunEvents, call_of: Callable[[str], tuple[str, int] | None],
                 answers: dict[str, ApprovalAnswer]) -> None:
        self.__wrapped__ = approver  # who really holds the request (a broker)
        self.events, self.call_of, self.answers = events, call_of, answers

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        events = self.events
        tool_use_id = getattr(request, "tool_use_id", None)  # a custom gate may ask with its own object
        if not isinstance(tool_use_id, str):
            return await self.__wrapped__(request)
        if not events.listening:
            return await self._answer(request, tool_use_id)
        # The name the call has in its other events: the model's, which may be an old alias
        # of the tool the request names.
        name, batch = self.call_of(tool_use_id) or (str(getattr(request, "tool_name", "")), 0)
        events.emit(ApprovalAsked(tool_use_id, name, batch, events.clock()))
        answer = None
        try:
            answer = await self._answer(request, tool_use_id)
            return answer
        finally:
            events.emit(ApprovalAnswered(tool_use_id, name, batch, events.clock(), _describe(answer)))

    async def _answer(self, request: ApprovalRequest, tool_use_id: str) -> ApprovalAnswer:
        given = self.answers.pop(tool_use_id, None) if self.answers else None
        return given if given is not None else await self.__wrapped__(request)


def _describe(answer: Any) -> str:
    if answer is None:
        return "none"
    for attr in ("behavior", "kind", "decision", "value"):
        value = getattr(answer, attr, None)
        if isinstance(value, str):
            return value
    return str(answer)
