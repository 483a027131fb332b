"""The read-only analysis runs on the event loop for every Bash call (partitioning and
the permission step): its cost must stay linear in the command's length, a command too
long to check is refused without holding the loop, and a long one under the limit is
judged in a worker thread."""

from __future__ import annotations

import nbtoolsched as nts
from tests.bypass_kit import loop_lag

from ..conftest import Refuser, run_one, scheduler


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


async def test_a_one_megabyte_command_is_refused_without_holding_the_event_loop(project):
    for command in ("echo " + "a" * (1024 * 1024), "echo x; " * (128 * 1024)):
        refuser = Refuser()
        sched = scheduler(project, refuser)
        async with loop_lag() as lag:
            result = await run_one(sched, "Bash", command=command)
        assert refuser.asked and result.is_error
        assert "too long to be checked" in refuser.asked[0].reason
        assert lag.longest < 1.0, f"the event loop was held {lag.longest:.1f} s"  # it was 17 s


def test_the_config_place_check_judges_each_word_once_whatever_the_runners_and_folders(project, monkeypatch):
    """`env -C a -C b -C c -C d true; nice nice ... true` (60 KB): every peeled runner stage
    repeats the words, every folder the line may be in multiplies them; each word was judged
    again for each, 22 s for one decision (found by the outside review). Counted, not timed:
    a word is judged once per line."""
    from nbtoolsched.shell import _writes

    calls = []
    real = _writes._risky_name
    monkeypatch.setattr(_writes, "_risky_name", lambda *args: calls.append(args[0]) or real(*args))
    command = "env -C a -C b -C c -C d true; " + "nice " * 12_000 + "true"
    perms = nts.Permissions("bypassPermissions", cwd=project)
    assert perms.explain("Bash", {"command": command}).behavior in ("allow", "ask")
    assert len(calls) == len(set(calls)) < 100, len(calls)


def test_a_long_command_under_the_limit_is_judged_in_a_worker_thread(project):
    # 60 KiB of simple commands: judged (not refused for its length), off the loop.
    command = "; ".join(["ls -d src"] * 5000)
    assert len(command) < 65536
    refuser = Refuser()
    sched = scheduler(project, refuser)

    async def run() -> tuple[float, nts.ToolResultBlock]:
        async with loop_lag() as lag:
            result = await run_one(sched, "Bash", command=command)
        return lag.longest, result

    longest, result = nts.run_sync(run())
    assert longest < 1.0, f"the event loop was held {longest:.1f} s"
    assert refuser.asked and "too long" not in refuser.asked[0].reason, refuser.asked  # judged, not refused for its length
