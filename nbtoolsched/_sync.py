"""``run_sync``: run a batch (or any awaitable) to its end from synchronous code.

In a script there is no event loop running, so it is ``asyncio.run``. Inside a running
loop (a notebook cell, where ``asyncio.run`` refuses) it drives that same loop until the
awaitable is done, which needs asyncio to be re-entrant: the maintained fork
``nest-asyncio2`` (ipykernel 7 depends on it already) is applied then, and only then,
never at import. It patches asyncio for the whole process, so nothing here applies it
unless a blocking call is made inside a running loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, Awaitable, Callable, ContextManager, TypeVar

from ._errors import ConfigurationError

__all__ = ["add_blocking_hook", "run_sync"]

T = TypeVar("T")
_hooks: list[Callable[[], ContextManager[Any]]] = []
_nested: set[int] = set()  # ids of the loops made re-entrant


def run_sync(awaitable: Awaitable[T], *, reenter: bool = True) -> T:
    """Run ``awaitable`` to the end and return its value, blocking the caller.

    ``results = nts.run_sync(scheduler.run(blocks))`` in a script or a notebook cell. In
    a notebook the loop keeps running meanwhile (other runs, the panel); a call that
    waits for a person can only be answered where a click reaches a busy cell (the
    notebook extension refuses, rather than hangs, where it cannot).

    ``reenter=False`` is for work that needs nothing of the caller's loop (judging a call,
    as ``Permissions.explain`` does): inside a running loop it runs on a loop of its own,
    in a worker thread, while the caller waits. The caller's loop is then neither
    re-entered nor patched, and nothing else runs on it meanwhile."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(awaitable))
    if not reenter:
        return _on_a_loop_of_its_own(awaitable)
    make_reentrant(loop)
    future = asyncio.ensure_future(awaitable)
    with contextlib.ExitStack() as stack:
        for hook in list(_hooks):
            stack.enter_context(hook())
        try:
            return loop.run_until_complete(future)
        except BaseException:
            if not future.done():
                future.cancel()
            raise


def make_reentrant(loop: asyncio.AbstractEventLoop) -> None:
    """Apply nest-asyncio2 to ``loop`` (once); a clear error when it is not installed."""
    if id(loop) in _nested:
        return
    try:
        import nest_asyncio2
    except ImportError:
        raise ConfigurationError(
            "blocking inside a running event loop (a notebook cell) needs nest-asyncio2: "
            "pip install 'nbtoolsched[notebook]', or await the run instead"
        ) from None
    nest_asyncio2.apply(loop)
    _nested.add(id(loop))


def add_blocking_hook(hook: Callable[[], ContextManager[Any]]) -> Callable[[], None]:
    """A context manager entered around every blocking wait inside a running loop (the
    notebook layer uses it to answer approvals nobody could click); returns the remover."""
    _hooks.append(hook)
    return lambda: _hooks.remove(hook) if hook in _hooks else None


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _on_a_loop_of_its_own(awaitable: Awaitable[T]) -> T:
    """``asyncio.run`` in a worker thread, the caller's thread waiting for its end."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_awaited(awaitable))
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name="nbtoolsched-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
