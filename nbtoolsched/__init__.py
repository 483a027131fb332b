"""nbtoolsched: a tool-call scheduler for LLM agents.

Give it a model's ``tool_use`` blocks; it finds each tool, checks the input, asks
permission, runs what may run in parallel in parallel and the rest in order, streams
progress, and hands back exactly one ``tool_result`` per ``tool_use``, in order.
"""

from .agent import Agent, AgentResult, TranscriptWriter, read_transcript, validate_transcript
from .execution import CallOutcome, CallPipeline, PreparedCall
from ._events import (
    AgentFinished,
    AgentStarted,
    ApprovalAnswered,
    ApprovalAsked,
    CallQueued,
    CallStarted,
    CallState,
    ContextEvent,
    ModelBlock,
    ModelFinished,
    ProgressDropped,
    ProgressEvent,
    ResultEvent,
    RunFinished,
    RunStarted,
    StreamFailed,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from ._messages import (
    Message,
    TextBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
    parse_block,
    parse_blocks,
)
from .models import ScriptedModel, Turn
from .permissions import ApprovalAnswer, ApprovalBroker, HookRunner, Hooks, PermissionGate, Permissions
from ._registry import ToolRegistry
from .speculation import Overlay, Speculation, SpeculationPipeline, speculate
from .scheduling import (
    Batch,
    RunHandle,
    Scheduler,
    StreamingToolExecutor,
    Trace,
    max_tool_use_concurrency,
    merge_capped,
    partition_tool_calls,
    run_tools,
)
from .tools import default_registry
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


def __getattr__(name: str) -> object:
    """Heavy parts load on first use: the Anthropic SDK takes seconds to import."""
    if name == "AnthropicModel":
        from .models import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module 'nbtoolsched' has no attribute {name!r}")

__all__ = [
    "AgentFinished",
    "AgentStarted",
    "ApprovalAnswered",
    "ApprovalAsked",
    "CallQueued",
    "CallStarted",
    "ModelBlock",
    "ModelFinished",
    "ProgressDropped",
    "RunFinished",
    "RunStarted",
    "StreamFailed",
    "TextDelta",
    "TurnFinished",
    "TurnStarted",
    "AbortError",
    "AbortSignal",
    "Agent",
    "AgentResult",
    "AnthropicModel",
    "ApprovalAnswer",
    "ApprovalBroker",
    "Batch",
    "CallOutcome",
    "CallPipeline",
    "CallState",
    "ContextEvent",
    "Decision",
    "DecisionReason",
    "default_registry",
    "FileStateCache",
    "HookRunner",
    "Hooks",
    "max_tool_use_concurrency",
    "merge_capped",
    "Message",
    "Overlay",
    "parse_block",
    "parse_blocks",
    "partition_tool_calls",
    "PermissionGate",
    "Permissions",
    "PreparedCall",
    "ProgressEvent",
    "read_transcript",
    "ResultEvent",
    "run_tools",
    "RunHandle",
    "Scheduler",
    "ScriptedModel",
    "speculate",
    "Speculation",
    "SpeculationPipeline",
    "StreamingToolExecutor",
    "TextBlock",
    "Tool",
    "tool",
    "ToolContext",
    "ToolOutput",
    "ToolReferenceBlock",
    "ToolRegistry",
    "ToolResultBlock",
    "ToolUseBlock",
    "Trace",
    "TranscriptWriter",
    "Turn",
    "validate_transcript",
    "Validation",
]


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """``%load_ext nbtoolsched``: imports the notebook layer only now, never at import time."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
