"""The UI pump: coalesced renders, a final render, any-thread marking, hand-over to the loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from nbtoolsched.notebook._pump import Handoff, UIPump

from .conftest import wait_for


class View:
    def __init__(self, live: bool = False, fail: bool = False) -> None:
        self.renders = 0
        self.threads: set[str] = set()
        self._live = live
        self.fail = fail

    def live(self) -> bool:
        return self._live

    def render(self) -> None:
        self.renders += 1
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("broken view")


@pytest.mark.heavy  # renders at the pump's real rate for about a second
async def test_many_marks_coalesce_into_few_renders():
    pump = UIPump(asyncio.get_running_loop(), rate=10)
    view = View()
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.0
    marks = 0
    while loop.time() < end:  # a storm of changes for one second
        for _ in range(50):
            pump.mark(view)
            marks += 1
        await asyncio.sleep(0.001)
    await pump.aclose()
    assert marks > 1000
    assert 1 <= view.renders <= 20, view.renders  # about 10 a second, plus the final one


async def test_the_last_change_is_always_rendered():
    pump = UIPump(asyncio.get_running_loop(), rate=2)
    view = View()
    pump.mark(view)
    await wait_for(lambda: view.renders == 1, what="the first render")
    pump.mark(view)  # throttled: the next tick is up to 0.5 s away
    await pump.aclose()  # stopping still renders it
    assert view.renders == 2


async def test_marks_from_other_threads_render_on_the_loop_thread():
    pump = UIPump(asyncio.get_running_loop())
    view = View()
    worker = threading.Thread(target=lambda: [pump.mark(view) for _ in range(100)], name="not-the-loop")
    worker.start()
    worker.join()
    await wait_for(lambda: view.renders >= 1, what="a render after marks from a thread")
    await pump.aclose()
    assert view.threads == {threading.current_thread().name}


async def test_a_broken_view_does_not_stop_the_others():
    pump = UIPump(asyncio.get_running_loop())
    broken, fine = View(fail=True), View()
    pump.mark(broken)
    pump.mark(fine)
    await wait_for(lambda: fine.renders == 1, what="the healthy view to render")
    pump.mark(fine)
    await wait_for(lambda: fine.renders == 2, what="the pump to keep going")
    await pump.aclose()


async def test_live_views_tick_without_events_and_stop_when_done():
    pump = UIPump(asyncio.get_running_loop(), rate=20, clock_every=0.1)
    view = View(live=True)
    pump.mark(view)
    await wait_for(lambda: view.renders >= 3, what="clock renders of a live view")
    view._live = False
    pump.mark(view)
    await asyncio.sleep(0.2)
    settled = view.renders
    await asyncio.sleep(0.4)
    assert view.renders == settled  # no more clock ticks once it is no longer live
    await pump.aclose()


async def test_handoff_runs_on_the_loop_thread_and_records_the_caller():
    loop = asyncio.get_running_loop()
    handoff = Handoff(loop)
    ran_on: list[str] = []
    thread = threading.Thread(target=lambda: handoff(lambda: ran_on.append(threading.current_thread().name)), name="subshell-fake")
    thread.start()
    thread.join()
    await wait_for(lambda: ran_on, what="the handed-over call")
    assert ran_on == [threading.current_thread().name]
    assert handoff.caller_threads[-1] == "subshell-fake"


async def test_handoff_survives_a_failing_function():
    handoff = Handoff(asyncio.get_running_loop())
    done = []
    handoff(lambda: 1 / 0)
    handoff(lambda: done.append(True))
    await wait_for(lambda: done, what="the call after a failing one")


async def test_rate_must_be_positive():
    import pytest

    with pytest.raises(ValueError, match="positive"):
        UIPump(asyncio.get_running_loop(), rate=0)
