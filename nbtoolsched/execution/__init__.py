"""The execution layer: one call through the whole pipeline."""

from ._pipeline import CallOutcome, CallPipeline, Status, stopped_outcome
from ._prepare import PreparedCall, discovered_tools, prepare_call, prepare_calls
from ._results import finish_content, format_exception, format_size, persist_large_result, preview

__all__ = [
    "CallOutcome",
    "CallPipeline",
    "PreparedCall",
    "Status",
    "discovered_tools",
    "finish_content",
    "format_exception",
    "format_size",
    "persist_large_result",
    "prepare_call",
    "prepare_calls",
    "preview",
    "stopped_outcome",
]
