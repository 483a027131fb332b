"""Where a speculation stopped, and why."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Boundary", "BoundaryKind", "Budget", "SPECULATION_BOUNDARY", "DEFAULT_SECONDS", "DEFAULT_UPPER_BYTES"]

DEFAULT_SECONDS = 600.0  # a speculation's wall-clock budget
DEFAULT_UPPER_BYTES = 1024 * 1024 * 1024  # what its kernel overlay may hold

# The abort reason used when a speculation stops itself.
SPECULATION_BOUNDARY = "speculation_boundary"

BoundaryKind = Literal[
    "complete",  # the forked loop finished on its own: a final answer with no tool call
    "edit",  # a file write while edits are not allowed to speculate
    "bash",  # a shell command that is not read-only (path-rewriting overlay), or one outside the sandbox
    "network",  # a command that goes to the network (kernel overlay: before it, or when it failed on it)
    "outside_cwd",  # a path outside cwd (``..``, absolute elsewhere, a symlink out)
    "unsafe_path",  # a path the overlay cannot mirror (a directory, a file/dir clash)
    "denied_tool",  # a tool that is not read-only and not a file write
    "permission",  # the session's permissions deny the call or would ask a person
    "max_turns",  # the turn limit ended it before the model was done
    "max_messages",  # the message limit ended it
    "budget",  # the time or size budget of the run ran out
    "incomplete",  # the loop returned before the model gave a final answer
    "aborted",  # stopped from outside (accepted or rejected while running)
    "error",  # the loop raised
]


@dataclass(frozen=True, slots=True)
class Boundary:
    kind: BoundaryKind
    tool: str | None = None
    detail: str = ""  # the path, command or error, cut to 200 characters
    completed_at: float = field(default_factory=time.monotonic)

    @property
    def complete(self) -> bool:
        return self.kind == "complete"

    def describe(self) -> str:
        who = f" at {self.tool}" if self.tool else ""
        what = f": {self.detail}" if self.detail else ""
        return f"{self.kind}{who}{what}"


@dataclass(slots=True)
class Budget:
    """How long a speculation may run and how much its overlay may hold."""

    seconds: float = DEFAULT_SECONDS
    upper_bytes: int = DEFAULT_UPPER_BYTES
    started: float = field(default_factory=time.monotonic)

    def exceeded(self, overlay: object) -> str | None:
        """Why the run must stop now, or None (the size is counted only for a kernel overlay)."""
        spent = time.monotonic() - self.started
        if spent > self.seconds:
            return f"its time budget of {self.seconds:g} s ran out"
        mount = getattr(overlay, "mount", None)
        if mount is not None:
            size = mount.upper_size(self.upper_bytes)
            if size > self.upper_bytes:
                return f"its overlay holds more than {self.upper_bytes} bytes, its size budget"
        return None
