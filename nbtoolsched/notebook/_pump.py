"""The UI pump: the one task that turns state changes into widget updates.

Tools, the scheduler and click handlers never touch widgets. They mark a view dirty
(cheap, any number of times); one task on the kernel's loop wakes at most ``rate``
times a second and re-renders the dirty views, each inside ``hold_sync`` so a view
sends one update per tick however many of its traits changed. A view marked ``final``
is rendered on the next tick even if the pump is being stopped, so the last state is
never lost to throttling.

Widget callbacks may run on a kernel subshell thread (JupyterLab 4.4+ sends comms to
subshells): ``Handoff`` is how they pass work to the loop thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any, Callable, Protocol

from .._tasks import TaskOwner

__all__ = ["Handoff", "PumpView", "UIPump"]

log = logging.getLogger(__name__)


class PumpView(Protocol):
    def render(self) -> None:
        """Bring the widgets up to date with the model (called on the loop thread)."""

    def live(self) -> bool:
        """True while the view changes on its own (a clock to tick), e.g. a running run."""


class Handoff:
    """Run a function on the loop thread, from any thread (a widget click on a subshell)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.caller_threads: list[str] = []  # where the last hand-overs came from (subshell-... in JupyterLab)

    def __call__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.caller_threads = [*self.caller_threads[-9:], threading.current_thread().name]
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._guarded, fn, args)

    @staticmethod
    def _guarded(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except Exception:  # a broken handler must not take the loop down
            log.exception("notebook handler %r failed", fn)


class UIPump:
    """Coalesces view updates: at most ``rate`` renders per view per second, plus a final one."""

    def __init__(self, loop: asyncio.AbstractEventLoop, rate: float = 10.0, clock_every: float = 1.0, *,
                 tasks: TaskOwner | None = None) -> None:
        """``tasks``: who owns the pump's task (a session passes its own, so unloading the
        session ends it); a pump made alone owns it itself."""
        if rate <= 0:
            raise ValueError(f"the pump rate must be positive, got {rate}")
        self._tasks = tasks if tasks is not None else TaskOwner(loop)
        self.loop = loop
        self.loop_thread = threading.get_ident()  # made on the loop's thread
        self.interval = 1.0 / rate
        self.clock_every = clock_every  # live views re-render this often with no event (elapsed time)
        self._dirty: dict[int, PumpView] = {}
        self._live: dict[int, PumpView] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last_clock = 0.0
        self.renders = 0  # how many view renders ran (for tests and the benchmark)
        self.closed = False

    # -- marking (loop thread) -----------------------------------------------------------------
    def mark(self, view: PumpView) -> None:
        """Ask for ``view`` to be re-rendered on the next tick (from any thread)."""
        if self.closed:
            return
        if threading.get_ident() != self.loop_thread:
            if not self.loop.is_closed():
                self.loop.call_soon_threadsafe(self.mark, view)
            return
        self._dirty[id(view)] = view
        if view.live():
            self._live[id(view)] = view
        self._ensure_running()
        self._wake.set()

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = self._tasks.start(self._run(), name="nbtoolsched-ui-pump")

    # -- the loop ---------------------------------------------------------------------------------
    async def _run(self) -> None:
        while not self.closed:
            if not self._dirty and not self._live:
                self._wake.clear()
                await self._wake.wait()
                continue
            started = time.monotonic()
            self.tick()
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - started)))

    def tick(self) -> None:
        """Render every dirty view once (and live views on the clock). Loop thread only."""
        now = time.monotonic()
        if self._live and now - self._last_clock >= self.clock_every:
            self._last_clock = now
            for key, view in list(self._live.items()):
                self._dirty.setdefault(key, view)
        dirty, self._dirty = self._dirty, {}
        for key, view in dirty.items():
            self._render(view)
            if not view.live():
                self._live.pop(key, None)

    def _render(self, view: PumpView) -> None:
        try:
            view.render()
        except Exception:  # one broken view must not stop the others
            log.exception("rendering %r failed", view)
        self.renders += 1

    def flush(self) -> None:
        """Render everything pending now (the final update when stopping)."""
        self.tick()

    async def aclose(self) -> None:
        self.flush()
        self.closed = True
        self._wake.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def close(self) -> None:
        """Stop without awaiting (unload): flush, then cancel the task."""
        self.flush()
        self.closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
