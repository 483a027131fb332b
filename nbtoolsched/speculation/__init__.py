"""Speculation: run a suggested next prompt ahead of the user in a copy-on-write overlay.

Writes land in a private overlay, reads of written files read the overlay copy, and
anything that could reach outside (a non-read-only shell command, another tool, a path
outside cwd) stops the run at a recorded boundary. ``accept`` copies the overlay back,
all or nothing, refusing files that changed on disk meanwhile; ``reject`` deletes it.
"""

from ._boundary import SPECULATION_BOUNDARY, Boundary, BoundaryKind
from ._filestate import LayeredFileState
from ._gate import PATH_KEYS, READ_TOOLS, WRITE_TOOLS, SpeculationGate, is_read_tool, is_shell_tool, is_write_tool
from ._loop import AgentFactory, LoopRequest, RunLoop, ScriptedTurn, agent_loop, scripted_loop
from ._overlay import Conflict, FileChange, Overlay, OverlayConflict, PathOutsideCwd
from ._pipelining import SpeculationPipeline, Suggester
from ._safefs import Snapshot, UnsafePath
from ._speculation import (
    MAX_SPECULATION_MESSAGES,
    MAX_SPECULATION_TURNS,
    AcceptResult,
    Speculation,
    speculate,
    start_speculation,
)
from ._transcript import clean_transcript, cut_to_continuable

__all__ = [
    "AcceptResult",
    "AgentFactory",
    "Boundary",
    "BoundaryKind",
    "Conflict",
    "FileChange",
    "LayeredFileState",
    "LoopRequest",
    "MAX_SPECULATION_MESSAGES",
    "MAX_SPECULATION_TURNS",
    "Overlay",
    "OverlayConflict",
    "PATH_KEYS",
    "PathOutsideCwd",
    "READ_TOOLS",
    "RunLoop",
    "SPECULATION_BOUNDARY",
    "ScriptedTurn",
    "Snapshot",
    "Speculation",
    "SpeculationGate",
    "SpeculationPipeline",
    "Suggester",
    "UnsafePath",
    "WRITE_TOOLS",
    "agent_loop",
    "clean_transcript",
    "cut_to_continuable",
    "is_read_tool",
    "is_shell_tool",
    "is_write_tool",
    "scripted_loop",
    "speculate",
    "start_speculation",
]
