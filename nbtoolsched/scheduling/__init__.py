"""The scheduling layer: partition, batch runs, the streaming executor, traces."""

from .batch import ToolRunResult, run_tools
from .concurrency import DEFAULT_MAX_CONCURRENCY, ENV_MAX_CONCURRENCY, max_tool_use_concurrency, merge_capped
from .handle import RunHandle
from .partition import Batch, partition_prepared, partition_tool_calls
from .scheduler import DEFAULT, Scheduler
from .streaming import StreamingToolExecutor, TrackedTool
from .trace import RunEvents, Trace

__all__ = [
    "DEFAULT",
    "Batch",
    "DEFAULT_MAX_CONCURRENCY",
    "ENV_MAX_CONCURRENCY",
    "RunEvents",
    "RunHandle",
    "Scheduler",
    "StreamingToolExecutor",
    "ToolRunResult",
    "Trace",
    "TrackedTool",
    "max_tool_use_concurrency",
    "merge_capped",
    "partition_prepared",
    "partition_tool_calls",
    "run_tools",
]
