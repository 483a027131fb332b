"""The scheduling layer: partition, batch runs, the streaming executor, traces."""

from .batch import ToolRunResult, run_tools
from .concurrency import DEFAULT_MAX_CONCURRENCY, ENV_MAX_CONCURRENCY, max_tool_use_concurrency, merge_capped
from .handle import CallState, RunHandle
from .partition import Batch, partition_prepared, partition_tool_calls
from .scheduler import DEFAULT, Scheduler
from .streaming import StreamingToolExecutor, TrackedTool
from .trace import RunEvents, Span, Trace, TraceEvent

__all__ = [
    "DEFAULT",
    "Batch",
    "CallState",
    "DEFAULT_MAX_CONCURRENCY",
    "ENV_MAX_CONCURRENCY",
    "RunEvents",
    "RunHandle",
    "Scheduler",
    "Span",
    "StreamingToolExecutor",
    "ToolRunResult",
    "Trace",
    "TraceEvent",
    "TrackedTool",
    "max_tool_use_concurrency",
    "merge_capped",
    "partition_prepared",
    "partition_tool_calls",
    "run_tools",
]
