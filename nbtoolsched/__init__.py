"""nbtoolsched: a tool-call scheduler for LLM agents.

Give it a model's ``tool_use`` blocks; it finds each tool, checks the input, asks
permission, runs what may run in parallel in parallel and the rest in order, streams
progress, and hands back exactly one ``tool_result`` per ``tool_use``, in order.
"""

from .execution import CallOutcome, CallPipeline, PreparedCall
from .messages import (
    ContextEvent,
    Message,
    ProgressEvent,
    ResultEvent,
    TextBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
    parse_block,
    parse_blocks,
)
from .permissions import HookRunner, PermissionGate
from .registry import ToolRegistry
from .scheduling import (
    Batch,
    RunHandle,
    Scheduler,
    StreamingToolExecutor,
    Trace,
    TraceEvent,
    max_tool_use_concurrency,
    merge_capped,
    partition_tool_calls,
    run_tools,
)
from .tool import (
    AbortError,
    AbortSignal,
    Decision,
    DecisionReason,
    FileStateCache,
    Tool,
    ToolContext,
    ToolOutput,
    Validation,
    tool,
)

__version__ = "0.1.0"

__all__ = [
    "AbortError",
    "AbortSignal",
    "Batch",
    "CallOutcome",
    "CallPipeline",
    "ContextEvent",
    "Decision",
    "DecisionReason",
    "FileStateCache",
    "HookRunner",
    "Message",
    "PermissionGate",
    "PreparedCall",
    "ProgressEvent",
    "ResultEvent",
    "RunHandle",
    "Scheduler",
    "StreamingToolExecutor",
    "TextBlock",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolReferenceBlock",
    "ToolRegistry",
    "ToolResultBlock",
    "ToolUseBlock",
    "Trace",
    "TraceEvent",
    "Validation",
    "max_tool_use_concurrency",
    "merge_capped",
    "parse_block",
    "parse_blocks",
    "partition_tool_calls",
    "run_tools",
    "tool",
]
