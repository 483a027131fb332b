"""Pipelined speculation: while the user reads one result, the next is being prepared.

After a speculation completes, a suggester proposes the prompt that would follow it.
When the user accepts, that suggestion is promoted at once and speculated on, so the
next answer is already under way before the user has typed anything.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Sequence, Unpack

from .._messages import MessageLike
from .._tasks import TaskOwner
from ..scheduling._scheduler import Scheduler
from ._loop import RunLoop
from ._speculation import AcceptResult, Speculation, SpeculationOptions, start_speculation
from ._transcript import as_message_dicts

__all__ = ["SpeculationPipeline", "Suggester"]

# Given the conversation so far, the prompt the user would likely send next (or None).
Suggester = Callable[[list[dict[str, Any]]], Awaitable[str | None]]


class SpeculationPipeline:
    def __init__(
        self, run_loop: RunLoop, *, scheduler: Scheduler, suggest: Suggester, **options: Unpack[SpeculationOptions]
    ) -> None:
        if not callable(suggest):
            raise TypeError("suggest must be an async callable: messages -> next prompt or None")
        self.run_loop = run_loop
        self.scheduler = scheduler
        self.suggest = suggest
        self.options = options  # passed on to every start_speculation
        self.current: Speculation | None = None
        self.messages: list[dict[str, Any]] = []  # the conversation before the current suggestion
        self.next_suggestion: str | None = None
        self.time_saved = 0.0  # over the session
        self.suggest_error: Exception | None = None  # the last suggester failure, if any
        self._tasks = TaskOwner()  # preparing the next suggestion: ended by accept, reject or aclose
        self._preparing: asyncio.Task[None] | None = None

    def start(self, suggestion: str, messages: Sequence[MessageLike] = ()) -> Speculation:
        """Speculate on ``suggestion`` (stopping and discarding any current one first)."""
        self._cancel_preparing()
        if self.current is not None and self.current.state in ("running", "finished"):
            raise RuntimeError("a speculation is already open: accept or reject it first")
        self.messages = as_message_dicts(messages)
        self.next_suggestion = None
        self.current = start_speculation(suggestion, self.run_loop, scheduler=self.scheduler, messages=self.messages, **self.options)
        self._preparing = self._tasks.start(self._prepare_next(self.current, self.messages))
        return self.current

    async def _prepare_next(self, spec: Speculation, messages: list[dict[str, Any]]) -> None:
        await spec.wait()
        if spec.boundary is None or not spec.boundary.complete or spec.state != "finished":
            return
        conversation = messages + [{"role": "user", "content": [{"type": "text", "text": spec.suggestion}]}] + spec.transcript
        try:
            text = await self.suggest(conversation)
        except Exception as err:  # a failing suggester only means no pipelined run
            self.suggest_error = err
            return
        if isinstance(text, str) and text.strip() and spec.state == "finished":
            self.next_suggestion = text

    async def wait_prepared(self) -> str | None:
        """Until the next suggestion is prepared (or known not to come)."""
        if self._preparing is not None:
            await asyncio.wait({self._preparing})
        return self.next_suggestion

    async def accept(self) -> AcceptResult:
        """Accept the current speculation; if it completed, start on the prepared next one."""
        spec = self._open()
        result = await spec.accept()
        self.time_saved += result.time_saved
        follow = self.next_suggestion if result.boundary.complete else None
        await self._stop_preparing()
        conversation = self.messages + [{"role": "user", "content": [{"type": "text", "text": spec.suggestion}]}] + result.messages
        self.current = None
        if follow is not None:
            self.start(follow, conversation)
        else:
            self.messages = conversation
        return result

    async def reject(self) -> None:
        spec = self._open()
        await self._stop_preparing()
        await spec.reject()
        self.current = None

    async def aclose(self) -> None:
        """Stop preparing, and reject the speculation still open: nothing is left running."""
        await self._stop_preparing()
        await self._tasks.aclose()
        if self.current is not None and self.current.state in ("running", "finished"):
            await self.reject()

    def _open(self) -> Speculation:
        if self.current is None:
            raise RuntimeError("no speculation is open")
        return self.current

    def _cancel_preparing(self) -> None:
        if self._preparing is not None and not self._preparing.done():
            self._preparing.cancel()
        self._preparing = None
        self.next_suggestion = None

    async def _stop_preparing(self) -> None:
        """Cancel the preparing of the next suggestion and wait until it has ended."""
        preparing = self._preparing
        self._cancel_preparing()
        if preparing is not None:
            await asyncio.wait([preparing])
