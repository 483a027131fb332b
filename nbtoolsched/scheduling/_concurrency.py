"""Bounded concurrency: the cap, and a merge of async generators under it.

``merge_capped`` has the semantics of Claude Code's ``all()``: at most ``cap``
generators active, a new one starts only when one finishes, items interleave in the
order they are produced, each generator is read one item ahead, and the order within
a generator is kept.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Sequence, TypeVar

__all__ = ["DEFAULT_MAX_CONCURRENCY", "ENV_MAX_CONCURRENCY", "max_tool_use_concurrency", "merge_capped", "running_loop", "start_workers"]

T = TypeVar("T")
DEFAULT_MAX_CONCURRENCY = 10
ENV_MAX_CONCURRENCY = "NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY"


def running_loop(what: str) -> asyncio.AbstractEventLoop:
    """The running loop, or a clear error: a task made without one would never run."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            f"{what} starts tasks on the running event loop, and none is running: call it from async code "
            "(a notebook cell, or a coroutine under asyncio.run)"
        ) from None


def max_tool_use_concurrency(value: int | str | None = None) -> int:
    """The cap: explicit value, else the env var, else 10; 0, negative or junk mean 10."""
    raw: Any = value if value is not None else os.environ.get(ENV_MAX_CONCURRENCY, "")
    try:
        cap = int(str(raw).strip())
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return cap if cap > 0 else DEFAULT_MAX_CONCURRENCY


def start_workers(items: Sequence[T], work: Callable[[T], Awaitable[None]], cap: int) -> list[asyncio.Future[None]]:
    """Start at most ``cap`` workers that each take the next item when the last is done.

    Returns the worker tasks (already started); the caller awaits them. Workers, not
    items, are tasks: 10,000 items at cap 10 create 10 tasks.
    """
    feed = iter(items)

    async def worker() -> None:
        for item in feed:
            await work(item)

    return [asyncio.ensure_future(worker()) for _ in range(min(cap, len(items)))]


async def merge_capped(generators: Iterable[AsyncIterator[T]], cap: int = DEFAULT_MAX_CONCURRENCY) -> AsyncIterator[T]:
    """Interleave the items of several async generators, at most ``cap`` at a time."""
    waiting = list(generators)
    waiting.reverse()
    pending: dict[asyncio.Future[T], AsyncIterator[T]] = {}

    def advance(gen: AsyncIterator[T]) -> None:
        pending[asyncio.ensure_future(gen.__anext__())] = gen

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
        for future, gen in pending.items():
            future.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for gen in list(pending.values()) + waiting:
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                await aclose()


def _in_start_order(pending: dict[asyncio.Future[T], Any], done: set[asyncio.Future[T]]) -> list[asyncio.Future[T]]:
    return [f for f in pending if f in done]
