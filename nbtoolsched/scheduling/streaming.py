"""The streaming executor: tools start while the model's answer is still streaming.

Each tool_use block is handed over the moment it is complete. A concurrency-safe tool
starts at once if only safe tools are running (and the cap allows); an unsafe tool
waits for everything before it and holds back everything after it. Progress is passed
on at once; results come out in block order, except that a safe tool finished early
may overtake a safe tool still running before it (never across an unsafe one).

When a shell tool fails (a real failure: grep finding nothing is not one), its running
siblings are cancelled and told which call failed and that the user did not interrupt.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Iterator, Literal, Union

from ..execution import CallOutcome, CallPipeline, PreparedCall, prepare_call
from ..execution.pipeline import error_outcome, synthetic_outcome
from ..messages import Block, ProgressEvent
from ..registry import ToolRegistry
from ..tool import INTERRUPT, SIBLING_ERROR, STREAMING_FALLBACK, AbortSignal, ToolContext
from .calls import apply_modifier, execute_call, should_cancel
from .concurrency import max_tool_use_concurrency, running_loop
from .partition import type_name
from .trace import RunEvents

__all__ = ["StreamingToolExecutor", "TrackedTool", "ToolState"]

ToolState = Literal["queued", "executing", "completed", "yielded"]
Update = Union[ProgressEvent, CallOutcome]


@dataclass(slots=True)
class TrackedTool:
    call: PreparedCall
    batch: int
    status: ToolState = "queued"
    task: asyncio.Task[None] | None = None
    abort: AbortSignal | None = None
    outcome: CallOutcome | None = None
    pending_progress: deque[ProgressEvent] = field(default_factory=deque)

    @property
    def safe(self) -> bool:
        return self.call.safe


class StreamingToolExecutor:
    def __init__(
        self,
        registry: ToolRegistry,
        pipeline: CallPipeline,
        ctx: ToolContext,
        *,
        cap: int | None = None,
        events: RunEvents | None = None,
        discovered: set[str] | None = None,
    ) -> None:
        self.registry = registry
        self.pipeline = pipeline
        self.context = ctx
        self.cap = max_tool_use_concurrency(cap)
        self.events = events if events is not None else RunEvents()
        self.discovered = discovered
        self.tools: list[TrackedTool] = []
        self._by_id: dict[str, TrackedTool] = {}
        self._seen_ids: set[str] = set()
        self.siblings = ctx.abort.child()  # aborting it stops the siblings, never the query
        self.errored_description: str | None = None
        self.discarded = False
        self._changed = asyncio.Event()
        self._batch = 0
        self._last_safe: bool | None = None
        # Bookkeeping that keeps every step O(cap), not O(calls): the running calls, and
        # where in ``tools`` the first possibly-queued and first not-yet-yielded calls are.
        self._executing: list[TrackedTool] = []
        self._queued_from = 0
        self._unyielded_from = 0
        self._ready: set[int] = set()  # indexes with progress or a result not yet handed out
        self._walking = False
        self._walk_again = False
        self._stop_watching = ctx.abort.on_abort(self._on_query_abort)

    # -- feeding ----------------------------------------------------------------------
    def add_tool(self, block: Any) -> TrackedTool:
        """Track a complete tool_use block and start it if the rules allow."""
        running_loop("StreamingToolExecutor.add_tool()")
        if not isinstance(block, (dict, Block)):  # a malformed dict still gets an error result
            hint = "; call add_tool once per block" if isinstance(block, (list, tuple)) else ""
            got = type_name(block)
            raise TypeError(f"StreamingToolExecutor.add_tool(): expected one tool_use block (a dict or ToolUseBlock), got {got}{hint}")
        call = prepare_call(len(self.tools), block, self.registry, seen_ids=self._seen_ids, discovered=self.discovered)
        if call.safe and self._last_safe:
            batch = self._batch
        else:
            self._batch += 1
            batch = self._batch
        self._last_safe = call.safe
        tracked = TrackedTool(call, batch)
        self.tools.append(tracked)
        self._by_id.setdefault(call.tool_use_id, tracked)
        if self.events:
            self.events.emit("queued", call.tool_use_id, call.name, batch, safe=call.safe)
        if call.error is not None:
            self._finish_without_running(tracked)
        self._process_queue()
        return tracked

    # -- the start rule ---------------------------------------------------------------
    def _can_start(self, safe: bool) -> bool:
        executing = self._executing
        return not executing or (safe and all(t.safe for t in executing))

    def _process_queue(self) -> None:
        """Start what may start. Re-entrant calls (a start that completes at once) only
        ask for one more walk, so a long queue of instant answers cannot nest deeply."""
        if self._walking:
            self._walk_again = True
            return
        self._walking = True
        try:
            self._walk_again = True
            while self._walk_again:
                self._walk_again = False
                self._walk_queue()
        finally:
            self._walking = False

    def _walk_queue(self) -> None:
        tools = self.tools
        while self._queued_from < len(tools) and tools[self._queued_from].status != "queued":
            self._queued_from += 1
        for index in range(self._queued_from, len(tools)):
            tracked = tools[index]
            if tracked.status != "queued":
                continue
            if len(self._executing) >= self.cap:
                break  # nothing more can start until a call finishes
            if self._can_start(tracked.safe):
                self._start(tracked)
            elif not tracked.safe:
                break  # nothing may jump past a blocked unsafe call

    def _abort_reason(self, tracked: TrackedTool) -> str | None:
        if self.discarded:
            return STREAMING_FALLBACK
        if self.errored_description is not None:
            return SIBLING_ERROR
        reason = self.context.abort.reason
        if reason is None:
            return None
        if reason == INTERRUPT and tracked.call.interrupt_behavior != "cancel":
            return None
        return reason

    def _start(self, tracked: TrackedTool) -> None:
        reason = self._abort_reason(tracked)
        if reason is not None:
            self._complete(tracked, synthetic_outcome(tracked.call, reason, self.errored_description or "", started=False))
            return
        tracked.status = "executing"
        self._executing.append(tracked)
        tracked.abort = self.siblings.child(bubble=self._bubble)
        tracked.task = asyncio.ensure_future(self._execute(tracked))
        tracked.task.add_done_callback(lambda _: self._ensure_completed(tracked))

    def _bubble(self, reason: str) -> None:
        """A tool-level abort (a rejected prompt) stops the whole turn, unless a sibling failed."""
        if reason != SIBLING_ERROR and not self.discarded and not self.context.abort.aborted:
            self.context.abort.abort(reason)

    async def _execute(self, tracked: TrackedTool) -> None:
        call = tracked.call
        assert tracked.abort is not None
        ctx = self.context.for_call(call.tool_use_id, tracked.abort, self._on_progress)
        try:
            outcome = await execute_call(self.pipeline, call, ctx, self.events, tracked.batch)
        except asyncio.CancelledError:
            outcome = synthetic_outcome(call, tracked.abort.reason)
        if outcome.status == "cancelled" and tracked.abort.reason == SIBLING_ERROR:
            outcome = synthetic_outcome(call, SIBLING_ERROR, self.errored_description or "")
        self._complete(tracked, outcome)

    def _finish_without_running(self, tracked: TrackedTool) -> None:
        self._complete(tracked, error_outcome(tracked.call))

    def _ensure_completed(self, tracked: TrackedTool) -> None:
        """A task cancelled before its first step never ran our code: answer it here."""
        if tracked.status == "executing":
            reason = tracked.abort.reason if tracked.abort is not None else None
            self._complete(tracked, synthetic_outcome(tracked.call, reason, self.errored_description or ""))

    def _complete(self, tracked: TrackedTool, outcome: CallOutcome) -> None:
        if tracked.status == "executing":
            self._executing.remove(tracked)
        tracked.outcome = outcome
        tracked.status = "completed"
        self._ready.add(tracked.call.index)
        if self._is_shell_failure(tracked, outcome):
            self.errored_description = tracked.call.description
            self._stop_siblings(SIBLING_ERROR)
        if not tracked.safe:
            self.context = apply_modifier(self.context, outcome)
        self._changed.set()
        if not self.discarded:
            self._process_queue()

    def _is_shell_failure(self, tracked: TrackedTool, outcome: CallOutcome) -> bool:
        tool = tracked.call.tool
        return (
            outcome.is_error
            and outcome.status != "cancelled"
            and self.errored_description is None
            and tool is not None
            and bool(getattr(tool, "errors_cancel_siblings", False))
        )

    # -- aborts -------------------------------------------------------------------------
    def _on_query_abort(self, reason: str) -> None:
        for tracked in self._executing:
            if tracked.task is not None and should_cancel(tracked.call, reason):
                tracked.task.cancel()
        self._changed.set()

    def _stop_siblings(self, reason: str) -> None:
        """A shell sibling failed, or the answer was discarded: stop everything running."""
        self.siblings.abort(reason)
        for tracked in self._executing:
            if tracked.task is not None:
                tracked.task.cancel()
        self._changed.set()

    def _on_progress(self, tool_use_id: str, data: Any) -> None:
        tracked = self._by_id.get(tool_use_id)
        if tracked is None:
            return
        event = ProgressEvent(tool_use_id, tracked.call.name, data, self.events.clock())
        tracked.pending_progress.append(event)
        self._ready.add(tracked.call.index)
        if self.events:
            self.events.emit("progress", tool_use_id, tracked.call.name, tracked.batch, data=data)
        self._changed.set()

    @property
    def interruptible(self) -> bool:
        """True when every running tool would stop for a new user message."""
        running = self._executing
        return bool(running) and all(t.call.interrupt_behavior == "cancel" for t in running)

    # -- draining -----------------------------------------------------------------------
    def get_completed_results(self) -> Iterator[Update]:
        """What is ready now, without waiting: progress always, results in order.

        Results may overtake a safe call still running, never a running unsafe one (the
        barrier); progress of calls up to the barrier is passed on at once.
        """
        if self.discarded:
            return
        barrier = min((t.call.index for t in self._executing if not t.safe), default=len(self.tools))
        for index in sorted(self._ready):
            if index > barrier:
                break
            self._ready.discard(index)  # progress arriving while we yield marks it again
            tracked = self.tools[index]
            while tracked.pending_progress:
                yield tracked.pending_progress.popleft()
            if tracked.status == "completed" and tracked.outcome is not None:
                tracked.status = "yielded"
                yield tracked.outcome

    def _first_unyielded(self) -> int:
        """Yielded calls get no more progress, so every walk may start past them."""
        tools = self.tools
        while self._unyielded_from < len(tools) and tools[self._unyielded_from].status == "yielded":
            self._unyielded_from += 1
        return self._unyielded_from

    async def get_remaining_results(self) -> AsyncIterator[Update]:
        """Everything still to come, waiting as needed, until every call is answered."""
        while not self.discarded and self._first_unyielded() < len(self.tools):
            self._changed.clear()  # set again by any completion or progress, even during our yields
            self._process_queue()
            produced = False
            for update in self.get_completed_results():
                produced = True
                yield update
            if not produced:
                await self._changed.wait()

    def discard(self) -> None:
        """The stream restarts: forget this answer. Unstarted calls never start."""
        self.discarded = True
        self._stop_siblings(STREAMING_FALLBACK)

    async def aclose(self) -> None:
        """Wait until no task of this executor is left running."""
        tasks = [t.task for t in self.tools if t.task is not None and not t.task.done()]
        if tasks:
            await asyncio.wait(tasks)
        self._stop_watching()

    def outcomes(self) -> list[CallOutcome]:
        """One outcome per added block, in block order (synthetic for any never finished)."""
        reason = STREAMING_FALLBACK if self.discarded else (self.context.abort.reason or None)
        return [t.outcome or synthetic_outcome(t.call, reason, started=t.status != "queued") for t in self.tools]
