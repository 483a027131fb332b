"""The engine: every tool call runs through it, whether blocks stream in or arrive at once.

Each tool_use block is handed over the moment it is complete (``add_tool``). A
concurrency-safe call starts at once if only safe calls are running and the cap allows;
an unsafe call waits for everything before it and holds back everything after it. (The
cap is ours on this path: Claude Code's streaming executor has none, and applies
CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY on its batch path only.)
Progress is passed on at once; results come out in block order, except that a safe call
finished early may overtake a safe call still running before it (never across an unsafe
one). A batch run (``Scheduler.run``) is the same engine: add every block, then drain.

Context modifiers: an unsafe call's applies the moment it finishes, so the next call sees
it; the modifiers of a run of consecutive safe calls (a batch) apply in block order once
that batch is closed (a later block is unsafe, or no more blocks come) and all its calls
have finished. That holds however the blocks arrive, so streaming and batch runs end in
the same state. (Claude Code's streaming executor drops safe calls' modifiers; its batch
path applies them as we do. We apply them on every path.)

When a shell tool fails, its running siblings are stopped and calls not yet started never
start, as in Claude Code's streaming executor. As there, an exit status that answers the
question is not a failure (grep or rg finding nothing, find's exit 1, diff finding
differences, test being false: Claude Code's table, ``BENIGN_EXIT_CODES`` in
``shell/_allowlists.py``), and each stopped sibling is told which call failed. Our text
adds that the user did not interrupt, and what to do next.

Lifetimes: the executor is an async context manager around an ``asyncio.TaskGroup``;
every call is a task of that group, so none outlives the ``async with`` block. The abort
tree (query -> siblings -> call) is only the *reason* a call stopped: the text the model
reads. A call either returns its outcome or ends cancelled; ``stopped_outcome`` (the one
place) turns "ended by an abort" into a result.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Literal, Sequence, Union

from ..execution._pipeline import CallOutcome, CallPipeline, stopped_outcome

if TYPE_CHECKING:  # named in RunResult only
    from ._resume import RunState
    from ._trace import Trace
from ..execution._prepare import PreparedCall, prepare_call
from ..execution._pipeline import error_outcome
from ..execution._results import error_result
from .._events import CallQueued, CallStarted, ContextEvent, ProgressDropped, ProgressEvent, ResultEvent, RunFinished, RunStarted
from .._messages import Block, ToolUseLike
from .._registry import ToolRegistry
from .._tool._abort import SIBLING_ERROR, STREAMING_FALLBACK, USER_ABORT, AbortSignal
from .._tool._context import ToolContext
from ..execution._runner import apply_modifier, should_cancel, traced_approver
from ._partition import type_name
from .._events import RunEvents

__all__ = ["StreamingToolExecutor", "TrackedTool", "ToolState", "NOT_STARTED_AFTER_DEFERRAL", "PROGRESS_BACKLOG", "result_event", "RunResult", "run_tools",
           "DEFAULT_MAX_CONCURRENCY", "ENV_MAX_CONCURRENCY", "max_tool_use_concurrency", "running_loop"]

ToolState = Literal["queued", "executing", "completed", "yielded"]
Update = Union[ProgressEvent, ProgressDropped, ResultEvent]  # what a drain hands out: the events listeners get
NOT_STARTED_AFTER_DEFERRAL = "Not run yet: an earlier call in this batch is waiting for approval."
# Progress a call may have waiting for a slow reader. Progress arrives through a plain
# callback, so a tool cannot be made to wait for the reader; past this the oldest waiting
# event is dropped, and the reader is told how many with one ProgressDropped (the event a
# trace uses for the same thing), ahead of the ones kept. Results are never dropped.
PROGRESS_BACKLOG = 1000


DEFAULT_MAX_CONCURRENCY = 10
ENV_MAX_CONCURRENCY = "NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY"  # Claude Code's is CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY


def running_loop(what: str) -> asyncio.AbstractEventLoop:
    """The running loop, or a clear error: a task made without one would never run."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            f"{what} starts tasks on the running event loop, and none is running: call it from async code "
            "(a notebook cell, or a coroutine under asyncio.run)"
        ) from None


def max_tool_use_concurrency(value: int | str | None = None) -> int:
    """The cap: explicit value, else the env var, else 10; 0, negative or junk mean 10."""
    raw: Any = value if value is not None else os.environ.get(ENV_MAX_CONCURRENCY, "")
    try:
        cap = int(str(raw).strip())
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return cap if cap > 0 else DEFAULT_MAX_CONCURRENCY


@dataclass(slots=True)
class TrackedTool:
    call: PreparedCall
    batch: int
    safe: bool  # the call's, copied: the start rule asks several times per call
    status: ToolState = "queued"
    worker: asyncio.Task[None] | None = None  # the worker running it, once begun
    begun: bool = False  # a worker has started running it (cancelling it is safe)
    cancel_requested: bool = False  # its worker was cancelled for it (a scope: see _run_tracked)
    abort: AbortSignal | None = None
    outcome: CallOutcome | None = None
    finished: ResultEvent | None = None  # its ResultEvent, made once for listeners and the drain
    pending_progress: deque[ProgressEvent] | None = None  # made on the first progress event
    progress_dropped: int = 0  # progress not yet read that a full backlog pushed out


@dataclass(slots=True)
class _Batch:
    """Consecutive safe calls (or one unsafe call): the unit context modifiers wait for."""

    number: int
    safe: bool
    calls: list[TrackedTool] = field(default_factory=list)
    unfinished: int = 0
    sealed: bool = False  # no more calls can join it
    applied: bool = False  # its modifiers are in the context


class StreamingToolExecutor:
    """Feed it tool_use blocks with ``add_tool``; drain results with ``get_remaining_results``.

    Use it as ``async with scheduler.streaming_executor() as ex: ...``: leaving the block
    waits for every call (or, on an error or cancellation, stops them) so no task is left.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        pipeline: CallPipeline,
        ctx: ToolContext,
        *,
        cap: int | None = None,
        events: RunEvents | None = None,
        discovered: set[str] | None = None,
        cancel_on_shell_error: bool = True,
        stop_after_deferred: bool = True,
        keep_updates: bool = True,
    ) -> None:
        self.registry = registry
        self.pipeline = pipeline
        self.context = ctx
        self.cap = max_tool_use_concurrency(cap)
        self.events = events if events is not None else RunEvents()
        self.discovered = discovered
        self.cancel_on_shell_error = cancel_on_shell_error
        self.stop_after_deferred = stop_after_deferred
        # A batch run reads only the outcomes at the end: it keeps no progress backlog and
        # hands out no updates (listeners still get every event as it happens).
        self.keep_updates = keep_updates
        # Each change of the tool context while updates are kept, as the very ContextEvent
        # listeners get; whoever drains may take them from here (``Scheduler.stream`` does).
        self.context_events: deque[ContextEvent] = deque()
        self.tools: list[TrackedTool] = []
        self._by_id: dict[str, TrackedTool] = {}
        self._seen_ids: set[str] = set()
        self.siblings = ctx.abort.child()  # aborting it stops the siblings, never the query
        self.errored_description: str | None = None
        self.discarded = False
        self._group: asyncio.TaskGroup | None = None
        self._closed = False  # the async with block was left
        self._input_done = False  # no more blocks will come
        self._changed = asyncio.Event()  # a call finished or said something
        self._settled = asyncio.Event()  # every call added so far is answered (or the answer was discarded)
        # Batches still in play, by number (a finished one is dropped: a long run of calls
        # that each run alone keeps no object per call for the garbage collector to walk).
        self._open_batches: dict[int, _Batch] = {}
        self._last_batch: _Batch | None = None  # its number is how many batches there are
        self._halt_after: int | None = None  # a deferral: batches after this one never start
        # Bookkeeping that keeps every step O(cap), not O(calls): the running calls, and
        # where in ``tools`` the first possibly-queued and first not-yet-yielded calls are.
        self._executing: list[TrackedTool] = []
        self._unsafe_running = 0
        self._unfinished = 0
        # Calls run on at most ``cap`` worker tasks of the group, each taking the next
        # started call when it finishes one (10,000 calls at cap 10: ten tasks, not 10,000).
        self._runnable: deque[TrackedTool] = deque()
        self._live_workers = 0
        self._busy_workers = 0
        self._queued_from = 0
        self._unyielded_from = 0
        self._ready: set[int] = set()  # indexes with progress or a result not yet handed out
        self._walking = False
        self._walk_again = False
        self._stop_watching = ctx.abort.on_abort(self._on_query_abort)
        # The run's approver, wrapped once for the whole run (resolved by the scheduler).
        self._approver = (traced_approver(pipeline.approver, self.events, self._call_of, pipeline.answers)
                          if pipeline.approver is not None else None)

    # -- lifetime ---------------------------------------------------------------------------
    async def __aenter__(self) -> "StreamingToolExecutor":
        if self._group is not None or self._closed:
            raise RuntimeError("a StreamingToolExecutor can be entered only once; make a new one per answer")
        group = asyncio.TaskGroup()
        await group.__aenter__()
        self._group = group
        if self.events.listening:
            self.events.emit(RunStarted(self.events.clock()))
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        group = self._group
        assert group is not None, "__aexit__ without __aenter__"
        try:
            if exc_type is None:
                try:
                    await self._until_answered()  # every call answered before the block is left
                except BaseException as err:  # cancelled while waiting: stop the calls, then go on
                    self._stop_all()
                    await self._leave(group, type(err), err, err.__traceback__)
                    raise
            else:
                self._stop_all()  # the body failed or was cancelled: stop every call
            return await self._leave(group, exc_type, exc, tb)
        finally:
            self._closed = True
            self._stop_watching()
            self._answer_unanswered()
            if self.events.listening:
                counts: dict[str, int] = {}
                for tracked in self.tools:
                    status = tracked.outcome.status if tracked.outcome is not None else "cancelled"
                    counts[status] = counts.get(status, 0) + 1
                self.events.emit(RunFinished(self.events.clock(), counts))

    async def _until_answered(self) -> None:
        if self.keep_updates:
            async for _ in self.get_remaining_results():
                pass
            return
        self.finish_input()
        self._process_queue()
        while self._unfinished and not self.discarded:
            self._settled.clear()
            await self._settled.wait()  # woken once at the end, not once per call

    def _stop_all(self) -> None:
        if not self.context.abort.aborted:
            self.context.abort.abort(USER_ABORT)

    @staticmethod
    async def _leave(
        group: asyncio.TaskGroup, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        """Wait for the group; the body's own exception comes out as it is, not in a group.

        Calls never raise (each ends with an outcome or cancelled), so the group holds
        more than the body's exception only when there is a bug: then it is raised whole.
        """
        try:
            await group.__aexit__(exc_type, exc, tb)
            return None
        except BaseExceptionGroup as group_error:
            if exc is not None and list(group_error.exceptions) == [exc]:
                return False
            raise

    def _answer_unanswered(self) -> None:
        """A call whose task never ran our code (cancelled before its first step) gets its result here."""
        for tracked in self.tools:
            if tracked.status in ("queued", "executing"):
                self._complete(tracked, self._stopped(tracked, started=tracked.begun), walk=False)

    # -- feeding ----------------------------------------------------------------------------
    def add_tool(self, block: ToolUseLike) -> TrackedTool:
        """Track a complete tool_use block and start it if the rules allow."""
        running_loop("StreamingToolExecutor.add_tool()")
        if not isinstance(block, (dict, Block)):  # a malformed dict still gets an error result
            hint = "; call add_tool once per block" if isinstance(block, (list, tuple)) else ""
            got = type_name(block)
            raise TypeError(f"StreamingToolExecutor.add_tool(): expected one tool_use block (a dict or ToolUseBlock), got {got}{hint}")
        call = prepare_call(len(self.tools), block, self.registry, seen_ids=self._seen_ids, discovered=self.discovered)
        return self.add_prepared(call)

    def add_prepared(self, call: PreparedCall) -> TrackedTool:
        """Track a call that was already prepared (validated once, for partition and run)."""
        if self._group is None or self._closed:
            raise RuntimeError(
                "use the executor as an async context manager: "
                "`async with scheduler.streaming_executor() as ex: ex.add_tool(block) ...`"
            )
        if self._input_done:
            raise RuntimeError("no more blocks can be added: the executor was told its input is complete")
        call.index = len(self.tools)
        batch = self._batch_for(call.safe)
        tracked = TrackedTool(call, batch.number, call.safe)
        batch.calls.append(tracked)
        batch.unfinished += 1
        self._unfinished += 1
        self.tools.append(tracked)
        self._by_id.setdefault(call.tool_use_id, tracked)
        if self.events.listening:
            self.events.emit(CallQueued(call.tool_use_id, call.name, batch.number, self.events.clock(), call.safe))
        if call.error is not None:
            self._complete(tracked, error_outcome(call))
        elif len(self._executing) < self.cap:  # else nothing can start until a call finishes
            self._process_queue()
        return tracked

    def _batch_for(self, safe: bool) -> _Batch:
        last = self._last_batch
        if safe and last is not None and last.safe and not last.sealed:
            return last
        if last is not None:
            self._seal(last)
        number = last.number + 1 if last is not None else 1
        batch = self._last_batch = self._open_batches[number] = _Batch(number, safe)
        return batch

    def finish_input(self) -> None:
        """No more blocks will come: the last batch is closed (its modifiers can apply)."""
        self._input_done = True
        if self._last_batch is not None:
            self._seal(self._last_batch)

    # -- the start rule ---------------------------------------------------------------------
    def _can_start(self, safe: bool) -> bool:
        """Claude Code's rule: nothing runs, or only safe calls run and this one is safe."""
        return not self._executing or (safe and not self._unsafe_running)

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
            if len(self._executing) >= self.cap or not self._can_start(tracked.safe):
                # Nothing later can start either: an unsafe call waits for all before it and
                # holds back all after it, and a safe call is held back only while an unsafe
                # one runs. (Claude Code walks on past a blocked safe call, to no effect; here
                # stopping keeps a long queue behind a running unsafe call linear.)
                break
            self._start(tracked)

    def _abort_reason(self, tracked: TrackedTool) -> str | None:
        """Why this call must stop (or not start), in Claude Code's order of precedence."""
        if self.discarded:
            return STREAMING_FALLBACK
        if self.errored_description is not None:
            return SIBLING_ERROR
        reason = self.context.abort.reason
        if reason is None or not should_cancel(tracked.call, reason):
            return None
        return reason

    def _stopped(self, tracked: TrackedTool, *, started: bool) -> CallOutcome:
        reason = self._abort_reason(tracked) or (tracked.abort.reason if tracked.abort is not None else None)
        return stopped_outcome(tracked.call, reason or USER_ABORT, self.errored_description or "", started=started)

    def _start(self, tracked: TrackedTool) -> None:
        if self._abort_reason(tracked) is not None:
            self._complete(tracked, self._stopped(tracked, started=False))
            return
        if self._halt_after is not None and tracked.batch > self._halt_after:
            text = NOT_STARTED_AFTER_DEFERRAL
            self._complete(tracked, CallOutcome(tracked.call.tool_use_id, tracked.call.name,
                                                error_result(tracked.call.tool_use_id, text), "deferred"))
            return
        assert self._group is not None
        tracked.status = "executing"
        self._executing.append(tracked)
        self._unsafe_running += not tracked.safe
        tracked.abort = self.siblings.child(bubble=self._bubble)
        self._runnable.append(tracked)
        if len(self._runnable) > self._live_workers - self._busy_workers:
            try:
                self._group.create_task(self._worker())
            except RuntimeError:  # the group is shutting down (a bug elsewhere): this call never runs
                self._runnable.remove(tracked)
                self._complete(tracked, self._stopped(tracked, started=False), walk=False)
                return
            self._live_workers += 1

    def _bubble(self, reason: str) -> None:
        """A tool-level abort (a rejected prompt) stops the whole turn, unless a sibling failed."""
        if reason != SIBLING_ERROR and not self.discarded and not self.context.abort.aborted:
            self.context.abort.abort(reason)

    async def _worker(self) -> None:
        """Run started calls one after another until none is waiting."""
        task = asyncio.current_task()
        assert task is not None
        try:
            while self._runnable:
                tracked = self._runnable.popleft()
                self._busy_workers += 1
                await self._run_tracked(tracked, task)
        finally:
            self._live_workers -= 1

    async def _run_tracked(self, tracked: TrackedTool, task: asyncio.Task[None]) -> None:
        """One call, inside a cancel scope: a cancel meant for this call ends only this call.

        Stopping one call cancels its worker (``cancel_requested`` says it was for this
        call); the count of cancel requests, as ``asyncio.timeout`` keeps it, tells that
        one apart from the whole group stopping, which ends the worker too.
        """
        tracked.worker, tracked.begun = task, True
        call = tracked.call
        assert tracked.abort is not None
        ctx = self.context.for_call(call.tool_use_id, tracked.abort, self._on_progress)
        baseline = task.cancelling()
        try:
            if self.events.listening:
                self.events.emit(CallStarted(call.tool_use_id, call.name, tracked.batch, self.events.clock()))
            outcome = await self.pipeline.run(call, ctx, self._approver)
        except asyncio.CancelledError:
            # Ended by an abort (or the whole group stopping): answered here, in the one place.
            self._busy_workers -= 1
            self._complete(tracked, self._stopped(tracked, started=True))
            if not tracked.cancel_requested or task.uncancel() > baseline:
                raise
            return
        except BaseException:
            self._busy_workers -= 1
            raise
        if tracked.cancel_requested:
            task.uncancel()  # the cancel came as the call ended (or the tool swallowed it): spent
        if outcome.status == "cancelled" and self._abort_reason(tracked) in (SIBLING_ERROR, STREAMING_FALLBACK):
            outcome = self._stopped(tracked, started=True)  # stopped for a sibling or a discard: say which
        self._busy_workers -= 1  # free before the completion starts the next call: this worker takes it
        self._complete(tracked, outcome)

    def _call_of(self, tool_use_id: str) -> tuple[str, int] | None:
        tracked = self._by_id.get(tool_use_id)
        return (tracked.call.name, tracked.batch) if tracked is not None else None

    def _cancel(self, tracked: TrackedTool) -> None:
        if tracked.worker is not None and tracked.begun and not tracked.cancel_requested and tracked.status == "executing":
            tracked.cancel_requested = True
            tracked.worker.cancel()

    def _complete(self, tracked: TrackedTool, outcome: CallOutcome, *, walk: bool = True) -> None:
        if tracked.status in ("completed", "yielded"):
            return
        if tracked.status == "executing":
            self._executing.remove(tracked)
            self._unsafe_running -= not tracked.safe
        tracked.outcome = outcome
        tracked.status = "completed"
        tracked.abort = tracked.worker = None  # a finished call keeps only its outcome: fewer objects
        tracked.call.parsed = None              # for the garbage collector to walk in a long run
        self._unfinished -= 1
        if not self._unfinished:
            self._settled.set()
        if self.keep_updates:
            self._ready.add(tracked.call.index)
        if self.events.listening or self.keep_updates:
            finished = result_event(outcome, tracked.batch, self.events.clock())
            if self.keep_updates:  # only a drain reads it later; a batch run keeps no second copy
                tracked.finished = finished
            if self.events.listening:
                self.events.emit(finished)
        if outcome.result.is_error and self._is_shell_failure(tracked, outcome):
            self.errored_description = tracked.call.description
            self._stop_siblings(SIBLING_ERROR)
        if outcome.status == "deferred" and self.stop_after_deferred and not self.context.abort.aborted:
            self._halt_after = tracked.batch if self._halt_after is None else min(self._halt_after, tracked.batch)
        batch = self._open_batches[tracked.batch]
        batch.unfinished -= 1
        if not tracked.safe:
            self._set_context(apply_modifier(self.context, outcome), batch)
            self._retire(batch)
        else:
            self._apply_if_closed(batch)
        self._changed.set()
        if walk and not self.discarded and not self._closed:
            self._process_queue()

    def _seal(self, batch: _Batch) -> None:
        if not batch.sealed:
            batch.sealed = True
            self._apply_if_closed(batch)

    def _apply_if_closed(self, batch: _Batch) -> None:
        """A safe batch's modifiers, in block order, once it is closed and all its calls finished."""
        if not batch.safe or batch.applied or not batch.sealed or batch.unfinished:
            return
        batch.applied = True
        context = self.context
        for tracked in batch.calls:
            if tracked.outcome is not None:
                context = apply_modifier(context, tracked.outcome)
        self._set_context(context, batch)
        self._retire(batch)

    def _retire(self, batch: _Batch) -> None:
        """A batch whose calls all finished and whose modifiers are applied is done."""
        self._open_batches.pop(batch.number, None)
        batch.calls.clear()

    def _set_context(self, context: ToolContext, batch: _Batch) -> None:
        if context is not self.context:
            self.context = context
            if self.events.listening or self.keep_updates:
                event = ContextEvent(context, batch.number, self.events.clock())  # one object for both
                if self.keep_updates:
                    self.context_events.append(event)
                if self.events.listening:
                    self.events.emit(event)

    def _is_shell_failure(self, tracked: TrackedTool, outcome: CallOutcome) -> bool:
        tool = tracked.call.tool
        return (
            self.cancel_on_shell_error
            and outcome.is_error
            and outcome.status not in ("cancelled", "deferred")
            and self.errored_description is None
            and tool is not None
            and bool(getattr(tool, "errors_cancel_siblings", False))
        )

    # -- aborts -------------------------------------------------------------------------------
    def _on_query_abort(self, reason: str) -> None:
        for tracked in tuple(self._executing):
            if should_cancel(tracked.call, reason):
                self._cancel(tracked)
        self._changed.set()

    def _stop_siblings(self, reason: str) -> None:
        """A shell sibling failed, or the answer was discarded: stop everything running."""
        self.siblings.abort(reason)
        for tracked in tuple(self._executing):
            self._cancel(tracked)
        self._changed.set()

    def _on_progress(self, tool_use_id: str, data: Any) -> None:
        tracked = self._by_id.get(tool_use_id)
        if tracked is None or tracked.status != "executing":
            return
        event = ProgressEvent(tool_use_id, tracked.call.name, data, self.events.clock(), tracked.batch)
        if self.events.listening:
            self.events.emit(event)
        if not self.keep_updates:
            return
        pending = tracked.pending_progress
        if pending is None:
            pending = tracked.pending_progress = deque()
        if len(pending) >= PROGRESS_BACKLOG:
            pending.popleft()
            tracked.progress_dropped += 1
        pending.append(event)
        self._ready.add(tracked.call.index)
        self._changed.set()

    @property
    def interruptible(self) -> bool:
        """True when every running tool would stop for a new user message."""
        running = self._executing
        return bool(running) and all(t.call.interrupt_behavior == "cancel" for t in running)

    # -- draining ---------------------------------------------------------------------------
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
            if tracked.progress_dropped:
                first = tracked.pending_progress[0] if tracked.pending_progress else None  # never None here
                dropped, tracked.progress_dropped = tracked.progress_dropped, 0
                when = first.time if first is not None else self.events.clock()
                yield ProgressDropped(tracked.call.tool_use_id, tracked.call.name, tracked.batch, when, dropped)
            pending = tracked.pending_progress
            while pending:
                yield pending.popleft()
            if tracked.status == "completed" and tracked.finished is not None:
                tracked.status = "yielded"
                yield tracked.finished

    def _first_unyielded(self) -> int:
        """Yielded calls get no more progress, so every walk may start past them."""
        tools = self.tools
        while self._unyielded_from < len(tools) and tools[self._unyielded_from].status == "yielded":
            self._unyielded_from += 1
        return self._unyielded_from

    async def get_remaining_results(self) -> AsyncIterator[Update]:
        """Everything still to come, waiting as needed, until every call is answered.

        Calling it says the input is complete: no block can be added afterwards.
        """
        self.finish_input()
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
        self._settled.set()
        self._stop_siblings(STREAMING_FALLBACK)

    def outcomes(self) -> list[CallOutcome]:
        """One outcome per added block, in block order (a stopped one for any never finished)."""
        return [t.outcome or self._stopped(t, started=t.begun) for t in self.tools]


def result_event(outcome: CallOutcome, batch: int = 0, time: float = 0.0) -> ResultEvent:
    """A finished call as the event listeners and ``Scheduler.stream`` consumers see."""
    return ResultEvent(outcome.tool_use_id, outcome.tool_name, outcome.result, outcome.status, outcome.attachments,
                       outcome.prevent_continuation, outcome.stop_reason, time, batch, outcome.is_error, outcome)


@dataclass(slots=True)
class RunResult:
    outcomes: list[CallOutcome]  # one per call, in block order
    context: ToolContext  # after every context modifier
    state: RunState | None = None  # what to resume from, when the run stopped for deferred approvals
    trace: Trace | None = None  # the run's trace, when the scheduler records one


async def run_tools(
    calls: Sequence[PreparedCall],
    pipeline: CallPipeline,
    ctx: ToolContext,
    *,
    cap: int | None = None,
    events: RunEvents | None = None,
    registry: ToolRegistry | None = None,
    cancel_on_shell_error: bool = False,
    stop_after_deferred: bool = True,
) -> RunResult:
    """Run prepared calls to the end; one outcome per call, in order, and the final context."""
    executor = StreamingToolExecutor(
        registry if registry is not None else ctx.registry or ToolRegistry(), pipeline, ctx, cap=cap, events=events,
        cancel_on_shell_error=cancel_on_shell_error, stop_after_deferred=stop_after_deferred, keep_updates=False,
    )
    async with executor:
        for call in calls:
            executor.add_prepared(call)
    return RunResult(executor.outcomes(), executor.context)
