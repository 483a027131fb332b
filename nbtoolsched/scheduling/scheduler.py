"""The public face of the scheduling core: ``Scheduler``.

It ties a registry, a permission gate, hooks and an approver to the two schedulers
(batch ``run_tools`` and the streaming executor) and hands out the ways to use them:
``run`` (results), ``stream`` (events as they happen), ``submit`` (a live handle),
``streaming_executor`` (start tools while a response streams).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, AsyncIterator, Iterable, Mapping

from ..execution import CallOutcome, CallPipeline, PreparedCall, discovered_tools, prepare_calls
from ..messages import ProgressEvent, ResultEvent, SchedulerEvent, ToolResultBlock
from ..permissions.base import HookRunner, PermissionGate
from ..registry import ToolRegistry
from ..tool import AbortSignal, ToolContext
from .batch import ToolRunResult, run_tools
from .concurrency import max_tool_use_concurrency, running_loop
from .handle import RunHandle
from .partition import Batch, partition_prepared
from .resume import RunState, resumed_approver
from .stream_queue import StreamQueue
from .streaming import StreamingToolExecutor
from .trace import RunEvents, Trace, TraceEvent

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        permissions: PermissionGate | None = None,
        hooks: HookRunner | None = None,
        approver: Any = None,
        max_concurrency: int | None = None,
        cwd: str | os.PathLike[str] | None = None,
        context: ToolContext | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        record_trace: bool = True,
    ) -> None:
        self.registry = registry if registry is not None else ToolRegistry()
        self.permissions = permissions
        if permissions is not None and hasattr(permissions, "hides"):
            self.registry.hidden = permissions.hides
        # Settings files bring hooks and an approver with the rules; explicit arguments win.
        approver = approver if approver is not None else getattr(permissions, "approver", None)
        hooks = hooks if hooks is not None else getattr(permissions, "hooks", None)
        self.pipeline = CallPipeline(permissions, hooks, approver)
        self.max_concurrency = max_tool_use_concurrency(max_concurrency)
        self.context = context or ToolContext(cwd, registry=self.registry, session_dir=session_dir)
        if self.context.registry is None:
            self.context.registry = self.registry
        if self.context.permission_context is None:
            self.context.permission_context = permissions  # tools may consult the mode and rules
        self.events = RunEvents()  # scheduler-wide listeners see every run
        self.record_trace = record_trace  # keep each run's trace in ``last_trace``
        self.last_trace: Trace | None = None

    # -- pieces ---------------------------------------------------------------------------
    @property
    def hooks(self) -> HookRunner | None:
        return self.pipeline.hooks

    @property
    def approver(self) -> Any:
        return self.pipeline.approver

    @approver.setter
    def approver(self, value: Any) -> None:
        self.pipeline.approver = value

    def prepare(self, blocks: Iterable[Any]) -> list[PreparedCall]:
        if isinstance(blocks, (dict, str, bytes)):
            raise TypeError("blocks must be a list of tool_use blocks, not a single " + type(blocks).__name__)
        return prepare_calls(list(blocks), self.registry, discovered=discovered_tools(self.context.messages))

    def partition(self, blocks: Iterable[Any]) -> list[Batch]:
        return partition_prepared(self.prepare(blocks))

    def _run_context(self, abort: AbortSignal | None) -> ToolContext:
        return self.context.for_call("", (abort or self.context.abort).child())

    def _run_events(self, *extra: Any) -> RunEvents:
        events = RunEvents()
        events.listeners.extend(self.events.listeners)
        events.listeners.extend(extra)
        return events

    # -- ways to run ------------------------------------------------------------------------
    async def run_outcomes(
        self, blocks: Iterable[Any], *, abort: AbortSignal | None = None, events: RunEvents | None = None
    ) -> ToolRunResult:
        """Run a batch; every outcome (result, status, attachments) in block order."""
        blocks = list(blocks) if not isinstance(blocks, (dict, str, bytes)) else blocks
        calls = self.prepare(blocks)
        ctx = self._run_context(abort)
        trace = Trace()
        extra = [trace.record] if self.record_trace else []
        run_events = RunEvents([*events.listeners, *extra], events.clock) if events is not None else self._run_events(*extra)
        result = await run_tools(calls, self.pipeline, ctx, cap=self.max_concurrency, events=run_events)
        self.last_trace = trace if self.record_trace else None
        self.context = result.context.for_call("", self.context.abort)
        result.state = RunState.capture(blocks, calls, result.outcomes)  # type: ignore[arg-type]
        return result

    async def resume(
        self,
        state: RunState | dict[str, Any],
        answers: Mapping[str, Any],
        *,
        abort: AbortSignal | None = None,
    ) -> ToolRunResult:
        """Go on with a run that stopped for approvals: finished calls are not run again.

        ``answers`` maps tool_use_id to an ``ApprovalAnswer`` (or its dict form). Calls
        with no answer are asked through the usual approver (or deferred again).
        """
        saved = state if isinstance(state, RunState) else RunState.from_dict(state)
        todo = saved.blocks_to_run()
        pipeline = CallPipeline(self.pipeline.gate, self.pipeline.hooks, resumed_approver(answers, self.pipeline.approver))
        calls = self.prepare(todo)
        ctx = self._run_context(abort)
        result = await run_tools(calls, pipeline, ctx, cap=self.max_concurrency, events=self._run_events())
        fresh = {o.tool_use_id: o for o in result.outcomes}
        merged: list[CallOutcome] = []
        for block in saved.blocks:
            key = block.get("id") if isinstance(block, dict) else None
            if key in fresh:
                merged.append(fresh[key])
            elif key in saved.results:
                merged.append(CallOutcome(key, str(block.get("name", "?")), saved.finished_result(key), "completed"))
        merged_result = ToolRunResult(merged, result.context, RunState.capture(saved.blocks, self.prepare(saved.blocks), merged))
        self.context = result.context.for_call("", self.context.abort)
        return merged_result

    async def run(self, blocks: Iterable[Any], *, abort: AbortSignal | None = None) -> list[ToolResultBlock]:
        """One tool_result per block, in block order. Never raises for a bad block or tool."""
        result = await self.run_outcomes(blocks, abort=abort)
        return [o.result for o in result.outcomes]

    async def stream(self, blocks: Iterable[Any], *, abort: AbortSignal | None = None) -> AsyncIterator[SchedulerEvent]:
        """Progress and results as they happen; results in completion order.

        A consumer that falls behind loses the oldest progress, never a result: at most
        ``STREAM_PROGRESS_CAP`` progress events wait, and a ``ProgressEvent`` with data
        ``{"dropped": n}`` says where a call's events were dropped.
        """
        queue = StreamQueue()

        def forward(event: TraceEvent) -> None:
            if event.kind == "progress":
                queue.put_progress(ProgressEvent(event.tool_use_id, event.tool_name, event.data.get("data"), event.time))
            elif event.kind == "finished" and event.outcome is not None:
                queue.put(_result_event(event.outcome))

        task = asyncio.ensure_future(self.run_outcomes(blocks, abort=abort, events=self._run_events(forward)))
        task.add_done_callback(lambda _: queue.put(None))
        try:
            while (item := await queue.get()) is not None:
                yield item
            task.result()  # surface a bug in the run instead of ending quietly
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])

    def submit(self, blocks: Iterable[Any], *, abort: AbortSignal | None = None) -> RunHandle:
        """Start the run as a task on the running loop and return its live handle at once."""
        running_loop("Scheduler.submit()")
        blocks = list(blocks) if not isinstance(blocks, (dict, str, bytes)) else blocks
        calls = self.prepare(blocks)
        ctx = self._run_context(abort)
        events = self._run_events()
        handle = RunHandle(calls, ctx.abort, events)

        async def go() -> list[CallOutcome]:
            trace = handle.trace
            try:
                result = await run_tools(calls, self.pipeline, ctx, cap=self.max_concurrency, events=events)
            finally:
                self.last_trace = trace
            handle.state = RunState.capture(blocks, calls, result.outcomes)
            handle.outcomes = result.outcomes
            self.context = result.context.for_call("", self.context.abort)
            return result.outcomes

        handle.task = asyncio.ensure_future(go())
        return handle

    def streaming_executor(self, *, abort: AbortSignal | None = None, events: RunEvents | None = None) -> StreamingToolExecutor:
        """An executor to feed with ``add_tool`` while a model's answer streams."""
        return StreamingToolExecutor(
            self.registry,
            self.pipeline,
            self._run_context(abort),
            cap=self.max_concurrency,
            events=events if events is not None else self._run_events(),
            discovered=discovered_tools(self.context.messages),
        )


def _result_event(outcome: CallOutcome) -> ResultEvent:
    return ResultEvent(outcome.tool_use_id, outcome.tool_name, outcome.result, outcome.status, outcome.attachments,
                       outcome.prevent_continuation, outcome.stop_reason)
