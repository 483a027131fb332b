"""Kernel interrupts abort the session's running runs.

Two cases. A cell is running: ipykernel raises KeyboardInterrupt in it (or cancels an
awaiting cell), and our ``post_run_cell`` hook sees that and aborts. The kernel is idle
while runs go on as tasks: ipykernel ignores SIGINT then, so we register an asyncio
signal handler for it. That sets the wakeup fd, so the loop wakes at once whichever
thread the signal lands on (a plain ``signal.signal`` handler would wait for the main
thread's next bytecode, and then possibly run as ipykernel's KeyboardInterrupt inside
the next cell). ipykernel swaps SIGINT to ``default_int_handler`` around every message
and puts back what it saved, so when we install during a message (the ``%load_ext``
cell) we hand our C-level handler to the kernel's saved slot instead of the live one.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any, Callable

__all__ = ["InterruptGuard", "is_interrupt"]


def is_interrupt(error: BaseException | None) -> bool:
    return isinstance(error, (KeyboardInterrupt, asyncio.CancelledError))


class InterruptGuard:
    def __init__(self, loop: asyncio.AbstractEventLoop, on_interrupt: Callable[[], None], kernel: Any = None) -> None:
        self.loop = loop
        self.on_interrupt = on_interrupt
        self.kernel = kernel
        self._kernel_saved: Any = None  # what the kernel meant to restore before we took the slot
        self._installed = False
        self.fired = 0

    def _fired(self) -> None:
        """On the loop, via asyncio's signal dispatch."""
        self.fired += 1
        self.on_interrupt()

    def install(self) -> bool:
        """Start listening for interrupts; False where signals cannot be used (not the main thread)."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            return False
        in_message = self._in_kernel_message()
        try:
            self.loop.add_signal_handler(signal.SIGINT, self._fired)
        except (NotImplementedError, RuntimeError, ValueError):
            return False
        if in_message:
            ours = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, signal.default_int_handler)  # the running cell keeps ipykernel's
            self._kernel_saved = self.kernel.saved_sigint_handler
            self.kernel.saved_sigint_handler = ours  # restored by ipykernel when the cell ends
        self._installed = True
        return True

    def uninstall(self) -> None:
        if not self._installed:
            return
        self._installed = False
        in_message = self._in_kernel_message()
        try:
            self.loop.remove_signal_handler(signal.SIGINT)  # leaves default_int_handler live
        except (RuntimeError, ValueError, AttributeError):
            pass
        if self.kernel is not None and self._kernel_saved is not None:
            if in_message:
                self.kernel.saved_sigint_handler = self._kernel_saved
            elif threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, self._kernel_saved)

    def _in_kernel_message(self) -> bool:
        """True while ipykernel handles a message: SIGINT is then its default_int_handler."""
        return (self.kernel is not None and hasattr(self.kernel, "saved_sigint_handler")
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
