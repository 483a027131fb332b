"""The interrupt guard: SIGINT reaches the loop at once, and ipykernel's handler dance is respected."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from types import SimpleNamespace

from nbtoolsched.notebook._interrupt import InterruptGuard, is_interrupt


async def test_a_signal_landing_on_another_thread_still_wakes_the_loop():
    fired = asyncio.Event()
    guard = InterruptGuard(asyncio.get_running_loop(), fired.set)
    assert guard.install()
    try:
        started = time.monotonic()
        worker = threading.Thread(target=lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
        worker.start()
        worker.join()
        await asyncio.wait_for(fired.wait(), 10)  # nothing else would wake an idle loop
        assert time.monotonic() - started < 5
        assert guard.fired == 1
    finally:
        guard.uninstall()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


async def test_installing_during_a_kernel_message_uses_the_kernels_saved_slot():
    kernel = SimpleNamespace(saved_sigint_handler=signal.SIG_IGN)  # what ipykernel restores when idle
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as ipykernel sets it while handling a cell
    guard = InterruptGuard(asyncio.get_running_loop(), lambda: None, kernel)
    assert guard.install()
    try:
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the running cell keeps it
        assert callable(kernel.saved_sigint_handler)  # ours, once the cell ends
    finally:
        guard.uninstall()
    assert kernel.saved_sigint_handler is signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


async def test_install_elsewhere_than_the_main_thread_is_refused():
    guard = InterruptGuard(asyncio.get_running_loop(), lambda: None)
    answers: list[bool] = []
    thread = threading.Thread(target=lambda: answers.append(guard.install()))
    thread.start()
    thread.join()
    assert answers == [False]
    guard.uninstall()  # harmless when nothing was installed


def test_interrupt_errors():
    assert is_interrupt(KeyboardInterrupt()) and is_interrupt(asyncio.CancelledError())
    assert not is_interrupt(ValueError()) and not is_interrupt(None)
