"""Speculation: run a suggested next prompt ahead of the user in a copy-on-write overlay.

Writes land in a private overlay, reads of written files read the overlay copy, and
anything that could reach outside (a non-read-only shell command, another tool, a path
outside cwd) stops the run at a recorded boundary. ``accept`` copies the overlay back,
all or nothing, refusing files that changed on disk meanwhile; ``reject`` deletes it.
"""

from ._boundary import Boundary, BoundaryKind
from ._loop import ScriptedTurn, agent_loop, scripted_loop
from ._overlay import FileChange, Overlay, OverlayConflict
from ._pipelining import SpeculationPipeline
from ._speculation import MAX_SPECULATION_TURNS, AcceptResult, Speculation, speculate, start_speculation

__all__ = [
    "AcceptResult",
    "Boundary",
    "BoundaryKind",
    "FileChange",
    "MAX_SPECULATION_TURNS",
    "Overlay",
    "OverlayConflict",
    "ScriptedTurn",
    "Speculation",
    "SpeculationPipeline",
    "agent_loop",
    "scripted_loop",
    "speculate",
    "start_speculation",
]
