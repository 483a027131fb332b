"""The scheduling layer: partition, batch runs, the streaming executor, traces."""

from ._batch import ToolRunResult, run_tools
from ._concurrency import DEFAULT_MAX_CONCURRENCY, ENV_MAX_CONCURRENCY, max_tool_use_concurrency, merge_capped
from ._handle import RunHandle
from ._partition import Batch, partition_prepared, partition_tool_calls
from ._scheduler import DEFAULT, Scheduler
from ._engine import StreamingToolExecutor, TrackedTool
from ._trace import RunEvents, Trace

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
