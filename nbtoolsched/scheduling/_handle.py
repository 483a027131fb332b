"""A live run: per-call states anyone can watch, and ``await run`` for the results."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Generator

from .._events import CallState
from ..execution._pipeline import CallOutcome
from ..execution._prepare import PreparedCall
from .._messages import ToolResultBlock
from .._tool._abort import USER_ABORT, AbortSignal
from .._tool._context import ToolContext
from .._events import Event, Listener, RunEvents
from ._resume import RunState
from ._trace import Trace

__all__ = ["RunHandle"]


class RunHandle:
    """Returned by ``Scheduler.submit``: the run goes on as a task; watch it or await it."""

    def __init__(self, calls: list[PreparedCall], abort: AbortSignal, events: RunEvents) -> None:
        self.abort_signal = abort
        self.events = events
        self.trace = Trace()
        self.states: dict[str, CallState] = {}
        self.order: list[str] = []
        for call in calls:
            key = call.tool_use_id if call.tool_use_id not in self.states else f"{call.tool_use_id}#{call.index}"
            self.states[key] = CallState(call.tool_use_id, call.name, call.input)
            self.order.append(key)
        self.outcomes: list[CallOutcome] | None = None
        self.context: ToolContext | None = None  # the context the run ended with (after every modifier)
        self.state: RunState | None = None  # what to resume from, when approvals were deferred
        self.task: asyncio.Task[list[CallOutcome]] | None = None
        self._listeners: list[Listener] = []
        events.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        self.trace.record(event)
        state = self.states.get(getattr(event, "tool_use_id", ""))
        if state is not None:
            state.apply(event)
        for listener in tuple(self._listeners):
            listener(event)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- results -------------------------------------------------------------------------
    def finish(self, outcomes: list[CallOutcome], context: ToolContext | None, state: RunState | None) -> None:
        """Called by the scheduler when the run has ended."""
        self.outcomes, self.context, self.state = outcomes, context, state

    def done(self) -> bool:
        return self.outcomes is not None

    @property
    def results(self) -> list[ToolResultBlock]:
        if self.outcomes is None:
            raise RuntimeError("the run has not finished; await it first")
        return [o.result for o in self.outcomes]

    @property
    def pending_approvals(self) -> list[dict[str, Any]]:
        """Calls stopped under the ``defer`` policy, as plain data (JSON-serialisable)."""
        return list(self.state.pending) if self.state is not None else []

    def abort(self, reason: str = USER_ABORT) -> None:
        """Stop the run: running tools are stopped, queued ones never start; all get results."""
        self.abort_signal.abort(reason)

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for key in self.order:
            status = self.states[key].status
            counts[status] = counts.get(status, 0) + 1
        parts = [f"{n} {state}" for state, n in sorted(counts.items())]
        return f"{len(self.order)} calls: " + ", ".join(parts)

    def __await__(self) -> Generator[Any, None, list[ToolResultBlock]]:
        assert self.task is not None
        yield from asyncio.shield(self.task).__await__()
        return self.results

    def __repr__(self) -> str:
        return f"<RunHandle {self.summary()}>"
