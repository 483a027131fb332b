"""``run_tools``: a whole answer at once, through the one engine (add every block, drain).

Kept as a function for agents that have all their blocks already; it is exactly what
``Scheduler.run`` does, and what the streaming path does when the blocks come quickly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..execution import CallOutcome, CallPipeline, PreparedCall
from .._registry import ToolRegistry
from ..tool import ToolContext
from ._engine import StreamingToolExecutor
from ._trace import RunEvents

__all__ = ["run_tools", "ToolRunResult"]


@dataclass(slots=True)
class ToolRunResult:
    outcomes: list[CallOutcome]  # one per call, in block order
    context: ToolContext  # after every context modifier
    state: Any = None  # a RunState when the run stopped for deferred approvals
    trace: Any = None  # the run's Trace, when the scheduler records one


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
) -> ToolRunResult:
    """Run prepared calls to the end; one outcome per call, in order, and the final context."""
    executor = StreamingToolExecutor(
        registry if registry is not None else ctx.registry or ToolRegistry(), pipeline, ctx, cap=cap, events=events,
        cancel_on_shell_error=cancel_on_shell_error, stop_after_deferred=stop_after_deferred,
    )
    async with executor:
        for call in calls:
            executor.add_prepared(call)
    return ToolRunResult(executor.outcomes(), executor.context)
