"""Claude Code's ``all()``: merge async generators under a cap (for teaching and comparison).

``merge_capped`` has the semantics of that function: at most ``cap`` generators active,
a new one starts only when one finishes, items interleave in the order they are
produced, each generator is read one item ahead, and the order within a generator is
kept. nbtoolsched's own engine does not use it (it runs calls as tasks of a TaskGroup);
the notebooks compare the two.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Iterable, TypeVar

from .._tasks import TaskOwner
from ._engine import DEFAULT_MAX_CONCURRENCY

__all__ = ["merge_capped"]

T = TypeVar("T")


async def merge_capped(generators: Iterable[AsyncIterator[T]], cap: int = DEFAULT_MAX_CONCURRENCY) -> AsyncIterator[T]:
    """Interleave the items of several async generators, at most ``cap`` at a time."""
    waiting = list(generators)
    waiting.reverse()
    pending: dict[asyncio.Future[T], AsyncIterator[T]] = {}
    reads = TaskOwner()  # the reads ahead; each is awaited below, or cancelled and awaited at the end

    def advance(gen: AsyncIterator[T]) -> None:
        pending[reads.start(gen.__anext__())] = gen

    for _ in range(min(cap, len(waiting))):
        advance(waiting.pop())
    try:
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in _in_start_order(pending, done):
                gen = pending.pop(future)
                try:
                    value = future.result()
                except StopAsyncIteration:
                    if waiting:
                        advance(waiting.pop())
                    continue
                advance(gen)  # read one ahead while the consumer handles this item
                yield value
    finally:
        await reads.aclose()
        for future in pending:  # a read that finished after the consumer stopped: read, so never "unretrieved"
            future.cancelled() or future.exception()
        for gen in list(pending.values()) + waiting:
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                await aclose()


def _in_start_order(pending: dict[asyncio.Future[T], Any], done: set[asyncio.Future[T]]) -> list[asyncio.Future[T]]:
    return [f for f in pending if f in done]
