"""The pieces the teaching notebooks take apart: documented, but not a stable API.

Everything a user of the scheduler needs is in ``nbtoolsched`` itself. These are the
parts behind it, exported here so a chapter can show how they work (prepare a batch
once, partition it, run one call through the pipeline, merge generators as Claude
Code's ``all()`` does, draw a timeline, ask the shell analysis, read a raw transcript).
Names may change between versions; the notebooks are updated with them. (The event
fan-out, ``RunEvents``, and the JSON form of events are public: ``nbtoolsched.events``.)
"""

from . import _demo as demo
from ._exports import publish
from ._messages import ToolReferenceBlock, parse_block, parse_blocks
from .agent._transcript import answer_dangling, transcript_problems
from .execution._pipeline import CallPipeline, stopped_outcome
from .execution._prepare import PreparedCall, discovered_tools, prepare_call, prepare_calls
from .permissions._engine import Explanation
from .permissions._hooks import CommandHook, PythonHook
from .permissions._modes import MODES
from .scheduling._engine import (
    DEFAULT_MAX_CONCURRENCY,
    ENV_MAX_CONCURRENCY,
    TrackedTool,
    max_tool_use_concurrency,
    run_tools,
)
from .scheduling._merge import merge_capped
from .scheduling._partition import partition_prepared
from .scheduling._timeline import render_svg_timeline, render_text_timeline
from .shell import ReadOnlyVerdict, analyze, parse_command
from .speculation._gate import SpeculationGate
from ._tool._abort import SIBLING_ERROR, STREAMING_FALLBACK
from ._tool._decision import DecisionReason
from ._tool._filestate import FileStateCache

__all__ = [
    "CallPipeline",
    "CommandHook",
    "DEFAULT_MAX_CONCURRENCY",
    "DecisionReason",
    "ENV_MAX_CONCURRENCY",
    "Explanation",
    "FileStateCache",
    "MODES",
    "PreparedCall",
    "PythonHook",
    "ReadOnlyVerdict",
    "SIBLING_ERROR",
    "STREAMING_FALLBACK",
    "SpeculationGate",
    "ToolReferenceBlock",
    "TrackedTool",
    "analyze",
    "answer_dangling",
    "demo",
    "discovered_tools",
    "max_tool_use_concurrency",
    "merge_capped",
    "parse_block",
    "parse_blocks",
    "parse_command",
    "partition_prepared",
    "prepare_call",
    "prepare_calls",
    "render_svg_timeline",
    "render_text_timeline",
    "run_tools",
    "stopped_outcome",
    "transcript_problems",
]

publish(__name__, __all__, globals())
