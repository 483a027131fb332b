"""Tools for testing the core layers: spy tools that record when they ran, so overlaps can
be checked, and ``Bare``, a tool that declares nothing (every default applies).

``block`` makes a tool_use block with a fresh id. The fixtures that build a registry and
a scheduler of spy tools are in tests/scheduling/conftest.py.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts


class SpyInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    duration: float = 0.0
    fail: bool = False
    output: str = "ok"
    progress: int = 0


@dataclass
class Recorder:
    """Shared log of intervals, and the peak of calls running at once."""

    running: int = 0
    peak: int = 0
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    overlaps_with_unsafe: list[tuple[str, str]] = field(default_factory=list)
    unsafe_running: set[str] = field(default_factory=set)

    def enter(self, tool_use_id: str, safe: bool) -> float:
        self.running += 1
        self.peak = max(self.peak, self.running)
        for other in self.active:
            if not safe or other in self.unsafe_running:
                self.overlaps_with_unsafe.append((tool_use_id, other))
        self.active.add(tool_use_id)
        if not safe:
            self.unsafe_running.add(tool_use_id)
        return time.monotonic()

    def leave(self, tool_use_id: str, start: float) -> None:
        self.running -= 1
        self.active.discard(tool_use_id)
        self.unsafe_running.discard(tool_use_id)
        self.intervals[tool_use_id] = (start, time.monotonic())


class SpyTool(nts.Tool):
    input_model = SpyInput

    def __init__(self, name: str, recorder: Recorder, *, safe: bool, shell: bool = False, behavior: str = "block") -> None:
        self.name = name  # type: ignore[misc]
        self.recorder = recorder
        self._safe = safe
        self.errors_cancel_siblings = shell  # type: ignore[misc]
        self.interrupt_behavior = behavior  # type: ignore[misc]

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._safe

    def is_read_only(self, input: Any) -> bool:
        return self._safe

    async def call(self, input: SpyInput, ctx: nts.ToolContext) -> nts.ToolOutput:
        start = self.recorder.enter(ctx.tool_use_id, self._safe)
        try:
            for i in range(input.progress):
                ctx.progress({"step": i})
                await asyncio.sleep(0)
            await asyncio.sleep(input.duration)
        finally:
            self.recorder.leave(ctx.tool_use_id, start)
        if input.fail:
            raise RuntimeError(f"{self.name} failed on purpose")
        return nts.ToolOutput(input.output)


class Bare(nts.Tool):
    """A tool that says nothing but its name: every default applies."""

    name = "Bare"


_ids = itertools.count()


def block(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": input}
