"""Speculation: run a suggested next prompt ahead of the user in a copy-on-write overlay.

Writes land in a private overlay, reads of written files read the overlay copy, and
anything that could reach outside (a non-read-only shell command, another tool, a path
outside cwd) stops the run at a recorded boundary. ``accept`` copies the overlay back,
all or nothing, refusing files that changed on disk meanwhile; ``reject`` deletes it.

``speculate``, its ``Speculation`` and the ``OverlayConflict`` that ``accept`` raises are
exported by ``nbtoolsched`` itself; this namespace holds the rest.
"""

from .._exports import publish
from ._boundary import Boundary, BoundaryKind
from ._loop import ScriptedTurn, agent_loop, scripted_loop
from ._overlay import FileChange, Overlay, OverlayConflict  # OverlayConflict: exported by nbtoolsched, reachable here
from ._pipelining import SpeculationPipeline
from ._speculation import MAX_SPECULATION_TURNS, AcceptResult, Speculation, speculate, start_speculation  # likewise

__all__ = [
    "AcceptResult",
    "Boundary",
    "BoundaryKind",
    "FileChange",
    "MAX_SPECULATION_TURNS",
    "Overlay",
    "ScriptedTurn",
    "SpeculationPipeline",
    "agent_loop",
    "scripted_loop",
    "start_speculation",
]

publish(__name__, __all__, globals())
