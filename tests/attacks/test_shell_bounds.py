"""The read-only analysis runs on the event loop for every Bash call (partitioning and
the permission step): its cost must stay linear in the command's length."""

from __future__ import annotations

from tests.bypass_kit import loop_lag

from .conftest import Refuser, run_one, scheduler


async def test_many_heredocs_do_not_stall_the_event_loop(project):
    # _every_operator_is_known checks each "<<" against every literal span (one per
    # heredoc): 8,000 small heredocs (160 KB, no other syntax) blocked it for about 12 s
    # when this was written, 400 KB for over a minute; BashInput.command has no
    # length limit.
    command = "".join(f"cat <<E{i}\nx\nE{i}\n" for i in range(8_000))
    refuser = Refuser()
    sched = scheduler(project, refuser)
    async with loop_lag() as lag:
        await run_one(sched, "Bash", command=command, timeout=5000)
    longest = lag.longest
    assert longest < 3.0, f"the event loop was blocked for {longest:.1f} s by one command's analysis"
