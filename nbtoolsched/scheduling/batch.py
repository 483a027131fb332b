"""``run_tools``: the batch scheduler used once a model's whole answer is in.

Batches run one after another. A parallel batch runs under the cap, results in block
order, and its context modifiers are queued and applied in block order after it; a
serial call applies its modifier at once so the next call sees it. No error cancels
another call here (that is the streaming executor's rule for shell tools).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Sequence

from ..execution import CallOutcome, CallPipeline, PreparedCall
from ..execution.results import error_result
from ..tool import USER_ABORT, ProgressSink, ToolContext
from .calls import apply_modifier, cancel_running, ensure_outcome, execute_call
from .concurrency import max_tool_use_concurrency, start_workers
from .partition import Batch, partition_prepared
from .trace import RunEvents

__all__ = ["run_tools", "ToolRunResult"]


@dataclass(slots=True)
class ToolRunResult:
    outcomes: list[CallOutcome]  # one per call, in block order
    context: ToolContext  # after every context modifier
    state: Any = None  # a RunState when the run stopped for deferred approvals


async def run_tools(
    calls: Sequence[PreparedCall],
    pipeline: CallPipeline,
    ctx: ToolContext,
    *,
    cap: int | None = None,
    events: RunEvents | None = None,
) -> ToolRunResult:
    events = events if events is not None else RunEvents()
    limit = max_tool_use_concurrency(cap)
    outcomes: list[CallOutcome | None] = [None] * len(calls)
    started: set[int] = set()
    batches = partition_prepared(calls)
    position = {id(call): i for i, call in enumerate(calls)}
    if events:
        for batch in batches:
            for call in batch.calls:
                events.emit("queued", call.tool_use_id, call.name, batch.number, safe=call.safe)
    context = ctx.for_call("", ctx.abort, _progress_sink(batches, events)) if events else ctx
    try:
        for batch in batches:
            await _run_batch(batch, pipeline, context, limit, events, outcomes, position, started)
            before = context
            for call in batch.calls:
                outcome = outcomes[position[id(call)]]
                if outcome is not None:
                    context = apply_modifier(context, outcome)
            if context is not before and events:
                events.emit("context", batch=batch.number)
            if any(outcomes[position[id(c)]].status == "deferred" for c in batch.calls):  # type: ignore[union-attr]
                break  # a call waits for an answer nobody can give now: later calls may depend on it
    finally:
        reason = ctx.abort.reason or USER_ABORT
        stopped_for_answers = not ctx.abort.aborted and any(o is not None and o.status == "deferred" for o in outcomes)
        for i, call in enumerate(calls):
            if outcomes[i] is None:
                if stopped_for_answers:
                    outcome = outcomes[i] = not_started(call)
                else:
                    outcome = outcomes[i] = ensure_outcome(None, call, reason, i in started)
                if events:
                    events.emit("finished", call.tool_use_id, call.name, 0, outcome, status=outcome.status, is_error=True)
    return ToolRunResult(outcomes, context)  # type: ignore[arg-type]


async def _run_batch(
    batch: Batch,
    pipeline: CallPipeline,
    context: ToolContext,
    cap: int,
    events: RunEvents,
    outcomes: list[CallOutcome | None],
    position: dict[int, int],
    started: set[int],
) -> None:
    running: dict[str, tuple[asyncio.Future[object], PreparedCall]] = {}
    async def work(call: PreparedCall) -> None:
        index = position[id(call)]
        running[call.tool_use_id] = (asyncio.current_task(), call)  # type: ignore[assignment]
        started.add(index)
        try:
            ctx = context.for_call(call.tool_use_id, context.abort)
            outcomes[index] = await execute_call(pipeline, call, ctx, events, batch.number)
        finally:
            running.pop(call.tool_use_id, None)

    stop_watching = context.abort.on_abort(lambda reason: cancel_running(running, reason))
    workers = start_workers(batch.calls, work, cap if batch.concurrency_safe else 1)
    try:
        await _wait_all(workers, context)
    finally:
        stop_watching()


async def _wait_all(workers: list[asyncio.Future[None]], context: ToolContext) -> None:
    """Wait for the workers; if we are cancelled, abort them and still wait for them.

    Cancelling the caller (a kernel interrupt, say) must not orphan running calls: the
    tree is aborted, running tools stop, and only then does the cancellation go on.
    """
    if not workers:
        return
    try:
        await asyncio.wait(workers)
    except asyncio.CancelledError:
        context.abort.abort(USER_ABORT)
        await asyncio.wait(workers)
        raise


def _progress_sink(batches: list[Batch], events: RunEvents) -> ProgressSink:
    """Progress goes straight to the run's listeners, tagged with the call's name and batch."""
    where = {call.tool_use_id: (call.name, batch.number) for batch in batches for call in batch.calls}

    def sink(tool_use_id: str, data: object) -> None:
        name, number = where.get(tool_use_id, ("?", 0))
        events.emit("progress", tool_use_id, name, number, data=data)

    return sink


def not_started(call: PreparedCall) -> CallOutcome:
    """A call after a deferred one: it waits for the resumed run."""
    text = "Not run yet: an earlier call in this batch is waiting for approval."
    return CallOutcome(call.tool_use_id, call.name, error_result(call.tool_use_id, text), "deferred")
