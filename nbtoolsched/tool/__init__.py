"""The tool layer: what a tool is, what it gets, what it answers."""

from ._abort import INTERRUPT, SIBLING_ERROR, STREAMING_FALLBACK, USER_ABORT, AbortError, AbortSignal
from ._base import DEFAULT_MAX_RESULT_SIZE_CHARS, EmptyInput, InterruptBehavior, ReadOnlyTool, Tool, ToolOutput, Validation, render_content
from ._context import ContextModifier, ProgressSink, ToolContext
from ._decision import Decision, DecisionReason
from ._decorator import FunctionTool, tool
from ._filestate import FileState, FileStateCache

__all__ = [
    "AbortError",
    "AbortSignal",
    "ContextModifier",
    "DEFAULT_MAX_RESULT_SIZE_CHARS",
    "Decision",
    "DecisionReason",
    "EmptyInput",
    "FileState",
    "FileStateCache",
    "FunctionTool",
    "INTERRUPT",
    "InterruptBehavior",
    "ProgressSink",
    "ReadOnlyTool",
    "SIBLING_ERROR",
    "STREAMING_FALLBACK",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "USER_ABORT",
    "Validation",
    "render_content",
    "tool",
]
