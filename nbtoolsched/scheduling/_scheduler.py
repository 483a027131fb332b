"""The public face of the scheduling core: ``Scheduler``.

A Scheduler is configuration, httpx-style: a registry, a permission gate, hooks, an
approver, a concurrency cap and a starting context. Each way to run takes per-run
overrides (``mode``, ``max_concurrency``, ``approver``, ``context``) and hands back what
the run produced, its final context and its trace included; runs never change the
scheduler (only ``last_trace`` remembers the latest run, for a quick look).

All of them drive the one engine (``StreamingToolExecutor``):
``run`` (results), ``run_outcomes`` (everything), ``stream`` (events as they happen),
``submit`` (a live handle), ``streaming_executor`` (feed blocks while a response streams).

``cancel_on_shell_error``: when a shell call fails, are its siblings stopped? Claude Code
does so in its streaming executor and not in its batch path, and so do we by default:
True for ``streaming_executor``, False for the batch-style methods. The Agent passes the
same value on both of its paths, so a turn ends the same way streamed or not.
"""

from __future__ import annotations

import asyncio
import enum
import os
from typing import Any, AsyncIterator, Iterable, Mapping

from ..execution._pipeline import CallOutcome, CallPipeline
from ..execution._prepare import PreparedCall, discovered_tools, prepare_calls
from .._events import SchedulerEvent
from .._messages import ToolResultBlock, ToolUseLike
from ..permissions._approvals import Approver, resolve_approver
from ..permissions._base import HookRunner, PermissionGate
from ..permissions._modes import check_mode
from .._registry import ToolRegistry
from .._tasks import TaskOwner
from .._tool._abort import AbortSignal
from .._tool._context import ToolContext
from ._handle import RunHandle
from ._partition import Batch, block_list, partition_prepared
from ._resume import RunState, saved_answers
from ._engine import RunResult, StreamingToolExecutor, max_tool_use_concurrency, running_loop
from .._events import RunEvents
from ._trace import Trace

__all__ = ["Scheduler", "DEFAULT", "Default"]


class Default(enum.Enum):
    """The type of ``DEFAULT``: "use the scheduler's own setting" for a per-run option."""

    DEFAULT = "DEFAULT"


DEFAULT = Default.DEFAULT


class _Run:
    """What one run uses: the scheduler's settings with this run's overrides applied."""

    __slots__ = ("pipeline", "cap", "context")

    def __init__(self, pipeline: CallPipeline, cap: int, context: ToolContext) -> None:
        self.pipeline, self.cap, self.context = pipeline, cap, context


class Scheduler:
    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        permissions: PermissionGate | None = None,
        hooks: HookRunner | None = None,
        approver: Approver | None = None,
        max_concurrency: int | None = None,
        cwd: str | os.PathLike[str] | None = None,
        context: ToolContext | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        record_trace: bool = True,
    ) -> None:
        base = registry if registry is not None else ToolRegistry()
        hides = getattr(permissions, "hides", None)
        # A view: the gate's blanket denials hide tools for this scheduler only, and tools
        # registered later on ``base`` still show up.
        self.registry = base.view(hidden=hides) if callable(hides) else base
        self.permissions = permissions
        # Settings files bring hooks and an approver with the rules; explicit arguments win.
        # Neither is copied from the permissions: their hooks are read from them at each
        # call, their approver when a run starts (``_resolve``).
        self.pipeline = CallPipeline(permissions, hooks, approver)
        self._runs = TaskOwner()  # the runs ``submit`` started and that are still going
        self.max_concurrency = max_tool_use_concurrency(max_concurrency)
        if context is None:
            context = ToolContext(cwd, registry=self.registry, session_dir=session_dir, permission_context=permissions)
        else:
            context = context.replace(
                registry=context.registry if context.registry is not None else self.registry,
                permission_context=context.permission_context if context.permission_context is not None else permissions,
            )
        self.context = context  # where runs start unless they bring their own
        # Scheduler-wide listeners see every run that starts after they subscribe: a run
        # copies them when it starts, so a listener of one run never sees another's events
        # and a run nobody listens to builds no event at all.
        self.events = RunEvents()
        self.record_trace = record_trace  # keep each run's trace (bounded) in ``last_trace``
        self.last_trace: Trace | None = None

    # -- pieces ---------------------------------------------------------------------------
    @property
    def hooks(self) -> HookRunner | None:
        return self.pipeline.hooks

    @property
    def approver(self) -> Approver | None:
        """The scheduler's own approver (None: the permissions' decide, else the headless policy)."""
        return self.pipeline.approver

    def prepare(self, blocks: Iterable[ToolUseLike], *, context: ToolContext | None = None) -> list[PreparedCall]:
        """Each block checked once (shape, tool, input), in order; what partition and run use."""
        items = block_list(blocks, "Scheduler.prepare()")
        messages = (context or self.context).messages
        return prepare_calls(items, self.registry, discovered=discovered_tools(messages))

    def partition(self, blocks: Iterable[ToolUseLike]) -> list[Batch]:
        return partition_prepared(self.prepare(block_list(blocks, "Scheduler.partition()")))

    def _resolve(
        self,
        mode: str | None | Default,
        max_concurrency: int | None | Default,
        approver: Approver | None | Default,
        context: ToolContext | None | Default,
        abort: AbortSignal | None,
        answers: Mapping[str, Any] | None = None,
    ) -> _Run:
        """What one run uses. Its approver is resolved here, once: the run's override, else
        the scheduler's, else the permissions' (read now: a change since the scheduler was
        made counts), else the headless policy; the engine wraps it once."""
        if isinstance(mode, str):
            check_mode(mode)  # a typo is the caller's error, not a tool error for every call
        chosen = resolve_approver(None if approver is DEFAULT else approver, self.pipeline.approver,
                                  getattr(self.permissions, "approver", None))
        pipeline = self.pipeline.with_options(mode=None if mode is DEFAULT else mode, approver=chosen,
                                              answers=saved_answers(answers) if answers else None)
        cap = self.max_concurrency if max_concurrency is DEFAULT else max_tool_use_concurrency(max_concurrency)
        start = self.context if context is DEFAULT or context is None else context
        return _Run(pipeline, cap, start.for_call("", (abort or start.abort).child()))

    def _run_events(self, *extra: Any) -> RunEvents:
        return RunEvents([*self.events.listeners, *extra])

    def _executor(self, run: _Run, events: RunEvents, **options: Any) -> StreamingToolExecutor:
        return StreamingToolExecutor(
            self.registry, run.pipeline, run.context, cap=run.cap, events=events,
            discovered=discovered_tools(run.context.messages), **options,
        )

    def _new_trace(self) -> Trace | None:
        return Trace() if self.record_trace else None

    # -- ways to run ------------------------------------------------------------------------
    async def run(
        self,
        blocks: Iterable[ToolUseLike],
        *,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
        cancel_on_shell_error: bool = False,
    ) -> list[ToolResultBlock]:
        """One tool_result per block, in block order. Never raises for a bad block or tool."""
        result = await self.run_outcomes(
            block_list(blocks, "Scheduler.run()"), mode=mode, max_concurrency=max_concurrency, approver=approver, context=context, abort=abort,
            cancel_on_shell_error=cancel_on_shell_error,
        )
        return [o.result for o in result.outcomes]

    async def run_outcomes(
        self,
        blocks: Iterable[ToolUseLike],
        *,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
        cancel_on_shell_error: bool = False,
        events: RunEvents | None = None,
    ) -> RunResult:
        """Run a batch: every outcome in block order, the final context, the trace, and a
        ``RunState`` to resume from when approvals were deferred. ``events`` replaces the
        scheduler's listeners for this run (copied when it starts, as they are)."""
        items = block_list(blocks, "Scheduler.run_outcomes()")
        run = self._resolve(mode, max_concurrency, approver, context, abort)
        return await self._run_all(items, run, events, cancel_on_shell_error)

    async def _run_all(self, items: list[Any], run: _Run, events: RunEvents | None, cancel_on_shell_error: bool) -> RunResult:
        calls = self.prepare(items, context=run.context)
        trace = self._new_trace()
        listeners = [*(events.listeners if events is not None else self._run_events().listeners)]
        if trace is not None:
            listeners.append(trace.record)
        executor = self._executor(run, RunEvents(listeners, events.clock if events is not None else None),
                                  cancel_on_shell_error=cancel_on_shell_error, keep_updates=False)
        async with executor:
            for call in calls:
                executor.add_prepared(call)
        if trace is not None:
            self.last_trace = trace
        outcomes = executor.outcomes()
        return RunResult(outcomes, executor.context, RunState.capture(items, calls, outcomes), trace)

    async def resume(
        self,
        state: RunState | dict[str, Any],
        answers: Mapping[str, Any],
        *,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
    ) -> RunResult:
        """Go on with a run that stopped for approvals: finished calls are not run again.

        ``answers`` maps tool_use_id to an ``ApprovalAnswer`` (or its dict form). Calls
        with no answer are asked through the usual approver (or deferred again). The
        answers are given by the run's one approver wrapper, before its approver is asked.
        """
        saved = state if isinstance(state, RunState) else RunState.from_dict(state)
        run = self._resolve(DEFAULT, DEFAULT, DEFAULT, context, abort, answers)
        result = await self._run_all(saved.blocks_to_run(), run, None, False)
        fresh = {o.tool_use_id: o for o in result.outcomes}
        merged: list[CallOutcome] = []
        for block in saved.blocks:
            key = block.get("id") if isinstance(block, dict) else None
            if key in fresh:
                merged.append(fresh[key])
            elif key in saved.results:
                merged.append(CallOutcome(key, str(block.get("name", "?")), saved.finished_result(key), "completed"))
        state_after = RunState.capture(saved.blocks, self.prepare(saved.blocks), merged)
        return RunResult(merged, result.context, state_after, result.trace)

    async def stream(
        self,
        blocks: Iterable[ToolUseLike],
        *,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
        cancel_on_shell_error: bool = False,
    ) -> AsyncIterator[SchedulerEvent]:
        """Progress and results as they happen (results in the engine's order: a finished
        safe call may come before a safe one still running), and a ``ContextEvent`` each
        time context modifiers changed the tool context. The consumer sets the pace: the
        engine holds only what running calls said since they were last read; a reader so
        slow that a call's backlog overflows gets a ``ProgressDropped`` counting what it
        missed. Every event yielded is the object the run's listeners get."""
        items = block_list(blocks, "Scheduler.stream()")
        run = self._resolve(mode, max_concurrency, approver, context, abort)
        calls = self.prepare(items, context=run.context)
        executor = self._executor(run, self._run_events(), cancel_on_shell_error=cancel_on_shell_error)
        changes = executor.context_events
        async with executor:
            for call in calls:
                executor.add_prepared(call)
            async for update in executor.get_remaining_results():
                yield update
                while changes:
                    yield changes.popleft()
            while changes:
                yield changes.popleft()

    def submit(
        self,
        blocks: Iterable[ToolUseLike],
        *,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
        cancel_on_shell_error: bool = False,
        stream_delay: float | None = None,
    ) -> RunHandle:
        """Start the run as a task on the running loop and return its live handle at once.

        ``stream_delay`` hands the blocks over one by one, that many seconds apart, as a
        model streaming its answer would (the calls start as their blocks arrive).
        """
        items = block_list(blocks, "Scheduler.submit()")
        running_loop("Scheduler.submit()")
        if stream_delay is not None and stream_delay < 0:
            raise ValueError(f"stream_delay must be zero or more seconds, got {stream_delay}")
        run = self._resolve(mode, max_concurrency, approver, context, abort)
        calls = self.prepare(items, context=run.context)
        events = self._run_events()
        handle = RunHandle(calls, run.context.abort, events)
        executor = self._executor(run, events, cancel_on_shell_error=cancel_on_shell_error, keep_updates=False)

        async def go() -> list[CallOutcome]:
            try:
                async with executor:
                    for index, call in enumerate(calls):
                        if index and stream_delay and not run.context.abort.aborted:
                            await _sleep_unless_aborted(run.context.abort, stream_delay)
                        executor.add_prepared(call)  # after an abort, the rest still get (stopped) results
            finally:
                self.last_trace = handle.trace
            handle.finish(executor.outcomes(), executor.context, RunState.capture(items, calls, executor.outcomes()))
            return executor.outcomes()

        handle.task = self._runs.start(go(), name="nbtoolsched-submitted-run")
        return handle

    async def aclose(self) -> None:
        """Cancel every run ``submit`` started that is still going and wait until each has
        ended; the scheduler submits nothing more afterwards. (To stop a run so that its
        calls get their stopped results, abort it: ``handle.abort()``.)"""
        await self._runs.aclose()

    def streaming_executor(
        self,
        *,
        mode: str | None | Default = DEFAULT,
        max_concurrency: int | None | Default = DEFAULT,
        approver: Approver | None | Default = DEFAULT,
        context: ToolContext | None | Default = DEFAULT,
        abort: AbortSignal | None = None,
        cancel_on_shell_error: bool = True,
        events: RunEvents | None = None,
    ) -> StreamingToolExecutor:
        """An executor to feed with ``add_tool`` while a model's answer streams.

        Use it as ``async with scheduler.streaming_executor() as ex:``. Given ``events``, it
        emits into that fan-out itself, so listeners may join while it runs.
        """
        run = self._resolve(mode, max_concurrency, approver, context, abort)
        return self._executor(run, events if events is not None else self._run_events(), cancel_on_shell_error=cancel_on_shell_error)


async def _sleep_unless_aborted(signal: AbortSignal, seconds: float) -> None:
    try:
        await asyncio.wait_for(signal.wait(), seconds)
    except asyncio.TimeoutError:
        pass
