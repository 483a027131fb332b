"""Sleep: wait a while, reporting each second; the tool that shows interrupts.

Its interrupt behaviour is "cancel": a new user message stops it at once, while tools
that "block" keep running.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel, ConfigDict, Field

from .._tool._abort import AbortError
from .._tool._base import ReadOnlyTool, ToolOutput
from .._tool._context import ToolContext

__all__ = ["SleepTool", "SleepInput", "MAX_SLEEP_SECONDS"]

MAX_SLEEP_SECONDS = 300.0


class SleepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seconds: float = Field(ge=0, le=MAX_SLEEP_SECONDS, description=f"How long to wait, in seconds (at most {MAX_SLEEP_SECONDS:g})")


class SleepTool(ReadOnlyTool[SleepInput]):
    name = "Sleep"
    description = (
        "Waits for the given number of seconds, reporting progress each second. Use it to wait for "
        "something outside your control (a build, a server starting). A new user message stops it."
    )
    search_hint = "wait pause delay for some seconds"
    input_model = SleepInput
    interrupt_behavior = "cancel"

    async def call(self, input: SleepInput, ctx: ToolContext) -> ToolOutput:
        start = time.monotonic()
        whole = int(input.seconds)
        for elapsed in range(1, whole + 1):
            await _sleep_until(start + elapsed, ctx)
            ctx.progress({"elapsed": elapsed, "remaining": round(input.seconds - elapsed, 3)})
        await _sleep_until(start + input.seconds, ctx)
        return ToolOutput({"seconds": input.seconds}, content=f"Slept for {input.seconds:g} seconds.")


async def _sleep_until(deadline: float, ctx: ToolContext) -> None:
    delay = deadline - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)
    if ctx.abort.aborted:
        raise AbortError(ctx.abort.reason or "aborted")
