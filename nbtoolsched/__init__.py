"""nbtoolsched: a tool-call scheduler for LLM agents.

Give it a model's ``tool_use`` blocks; it finds each tool, checks the input, asks
permission, runs what may run in parallel in parallel and the rest in order, streams
progress, and hands back exactly one ``tool_result`` per ``tool_use``, in order.

What a user writes or catches is exported here. The events of a run and of an agent
session are in ``nbtoolsched.events``, the built-in tools in ``nbtoolsched.tools``, the
rest of the model layer in ``nbtoolsched.models``, of speculation in
``nbtoolsched.speculation``; ``nbtoolsched.internals`` opens up the pieces the teaching
notebooks take apart. Every other module is private (``_name.py``). Each public name is
exported from one of these only, and its ``__module__`` says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import events
from ._errors import CellError, ConfigurationError, NbtoolschedError, NotebookError, SessionError, TranscriptError
from ._exports import publish
from ._messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ._registry import DuplicateToolError, ToolRegistry
from ._session_log import TranscriptWriter, read_transcript
from ._sync import run_sync
from .agent._loop import Agent, AgentResult
from .agent._transcript import InvalidTranscript, validate_transcript
from .execution._pipeline import CallOutcome
from .models._protocol import ModelError
from .models._scripted import ScriptedModel, Turn
from .permissions._approvals import ApprovalAnswer, ApprovalBroker, ApprovalRequest, Approver
from .permissions._base import ApprovalDeferred
from .permissions._engine import Permissions
from .permissions._errors import PermissionConfigError
from .permissions._hooks import Hooks
from .permissions._problems import HookWarning, RuleWarning, SettingsWarning
from .scheduling._engine import RunResult, StreamingToolExecutor
from .scheduling._handle import RunHandle
from .scheduling._partition import Batch, partition_tool_calls
from .scheduling._scheduler import DEFAULT, Scheduler
from .scheduling._trace import Trace
from .shell import ShellParseError
from .speculation._overlay import OverlayConflict
from .speculation._speculation import Speculation, speculate
from ._tool._abort import INTERRUPT, USER_ABORT, AbortError, AbortSignal
from ._tool._base import ReadOnlyTool, Tool, ToolOutput, Validation
from ._tool._context import ToolContext
from ._tool._decision import Decision
from ._tool._decorator import tool
from .tools import default_registry
from .tools.mcp._config import McpConfigError

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .models._anthropic import AnthropicModel
    from .models._openai import OpenAIModel

__version__ = "0.1.0"

__all__ = [
    # tools
    "Tool", "ReadOnlyTool", "tool", "ToolContext", "ToolOutput", "Validation", "Decision",
    "ToolRegistry", "default_registry",
    # content blocks
    "Message", "TextBlock", "ToolUseBlock", "ToolResultBlock",
    # running calls (their events: nbtoolsched.events)
    "Scheduler", "DEFAULT", "RunHandle", "RunResult", "CallOutcome", "StreamingToolExecutor", "run_sync",
    "Batch", "partition_tool_calls", "Trace", "AbortSignal", "INTERRUPT", "USER_ABORT",
    # permissions
    "Permissions", "Hooks", "Approver", "ApprovalBroker", "ApprovalAnswer", "ApprovalRequest",
    # agents, models, transcripts, speculation
    "Agent", "AgentResult", "ScriptedModel", "Turn", "AnthropicModel", "OpenAIModel",
    "TranscriptWriter", "read_transcript", "validate_transcript", "speculate", "Speculation",
    # errors and warnings
    "NbtoolschedError", "ConfigurationError", "PermissionConfigError", "McpConfigError", "DuplicateToolError",
    "ModelError", "TranscriptError", "InvalidTranscript", "ApprovalDeferred", "OverlayConflict", "AbortError",
    "ShellParseError", "NotebookError", "CellError", "SessionError",
    "SettingsWarning", "HookWarning", "RuleWarning",
]

publish(__name__, __all__, globals())


if not TYPE_CHECKING:  # type checkers see AnthropicModel above, and no other name appears from here

    def __getattr__(name: str) -> type:
        """Heavy parts load on first use: the model SDKs take a second or more to import."""
        if name == "AnthropicModel":
            from .models._anthropic import AnthropicModel

            publish(__name__, [name], {name: AnthropicModel})
            return AnthropicModel
        if name == "OpenAIModel":
            from .models._openai import OpenAIModel

            publish(__name__, [name], {name: OpenAIModel})
            return OpenAIModel
        raise AttributeError(f"module 'nbtoolsched' has no attribute {name!r}")


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext nbtoolsched``: imports the notebook layer only now, never at import time."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
