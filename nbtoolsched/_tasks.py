"""Tasks with an owner: outside the engine's TaskGroup, every task is started here.

Each task belongs to one ``TaskOwner``, which cancels it and waits for it when the owner's
lifetime ends: the end of an ``async with TaskOwner() as tasks:`` block (a subprocess's
pipe readers, a race against an abort), or ``aclose`` of an object that owns one (a
scheduler's submitted runs, a notebook session's background work). It is trio's nursery
without the error handling: a task's failure goes to whoever awaits the task, and leaving
the block cancels what is still running rather than waiting for it (these are helpers of
the block, not its result). ``asyncio.TaskGroup`` is the right tool where a failure must
stop the siblings, and the engine uses it; it wraps every error in an ExceptionGroup,
which the callers here must not see.

``finish_despite_cancel`` awaits work that must not be cut in half (starting a process,
stopping one, entering a context manager in a worker thread): a cancel waits for it to
end, undoes it if asked, and then goes on.
"""

from __future__ import annotations

import asyncio
import inspect
from types import TracebackType
from typing import Any, Awaitable, Callable, TypeVar

__all__ = ["TaskOwner", "finish_despite_cancel"]

T = TypeVar("T")


class TaskOwner:
    """The tasks started through it live no longer than it does."""

    __slots__ = ("_loop", "_tasks", "_closed")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop  # None: the running loop at each start
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def start(self, work: Awaitable[T], *, name: str | None = None) -> asyncio.Task[T]:
        """Run ``work`` as a task of this owner (it holds the task: no reference is lost)."""
        if self._closed:
            if inspect.iscoroutine(work):
                work.close()  # never awaited, and never to be: no "was never awaited" warning
            raise RuntimeError("this TaskOwner is closed: its lifetime ended, so it starts nothing more")
        loop = self._loop or asyncio.get_running_loop()
        task: asyncio.Task[T]
        if inspect.iscoroutine(work):
            task = loop.create_task(work, name=name)
        else:  # an awaitable that is not a coroutine (an async generator's __anext__, a future)
            task = asyncio.ensure_future(work, loop=loop)
            if name is not None:
                task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        """The tasks still running."""
        return frozenset(t for t in self._tasks if not t.done())

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self.tasks)

    def cancel(self) -> None:
        """Cancel every task and start nothing more, without waiting (a teardown that cannot
        await, such as a kernel unload: the tasks end on the loop's next turns)."""
        self._closed = True
        for task in self.tasks:
            if not task.cancelling():
                task.cancel()

    async def aclose(self) -> None:
        """Cancel every task still running and wait until each has ended. A cancel of the
        caller meanwhile does not cut the wait short; it is raised once they have ended."""
        self._closed = True
        interrupted = False
        current = asyncio.current_task()
        while True:
            live = [t for t in self._tasks if not t.done() and t is not current]
            if not live:
                break
            for task in live:
                if not task.cancelling():  # once: a second cancel would cut its cleanup short
                    task.cancel()
            try:
                await asyncio.wait(live)
            except asyncio.CancelledError:
                interrupted = True
        if interrupted:
            raise asyncio.CancelledError

    async def __aenter__(self) -> "TaskOwner":
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def finish_despite_cancel(work: Awaitable[T], on_cancel: Callable[[T], Awaitable[Any]] | None = None) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile.

    Without a cancel this is ``await work``. With one, ``work`` still runs to its end; if it
    succeeded, ``on_cancel(result)`` undoes it (itself run to its end), and then the
    cancel is raised. Nothing is left running either way."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        pass
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:
            pass  # cancelled again: the work still has to end first
    if task.cancelled() or task.exception() is not None:  # read, so it is never "unretrieved"
        raise asyncio.CancelledError
    if on_cancel is not None:
        await finish_despite_cancel(on_cancel(task.result()))
    raise asyncio.CancelledError
