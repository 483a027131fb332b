"""The read-only analysis runs on the event loop for every Bash call (partitioning and
the permission step): its cost must stay linear in the command's length."""

from __future__ import annotations

import asyncio

from .conftest import Refuser, run_one, scheduler


async def test_many_heredocs_do_not_stall_the_event_loop(project):
    # _every_operator_is_known checks each "<<" against every literal span (one per
    # heredoc): 8,000 small heredocs (160 KB, no other syntax) blocked it for about 12 s
    # when this was written, 400 KB for over a minute; BashInput.command has no
    # length limit.
    command = "".join(f"cat <<E{i}\nx\nE{i}\n" for i in range(8_000))
    refuser = Refuser()
    sched = scheduler(project, refuser)
    loop = asyncio.get_running_loop()
    longest = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = loop.time()
        while not done.is_set():
            await asyncio.sleep(0.05)
            now = loop.time()
            longest = max(longest, now - last)
            last = now

    watch = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    try:
        await run_one(sched, "Bash", command=command, timeout=5000)
    finally:
        done.set()
        await watch
    assert longest < 3.0, f"the event loop was blocked for {longest:.1f} s by one command's analysis"
