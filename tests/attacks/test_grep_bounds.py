"""Grep (read-only, auto-allowed, run in parallel) must keep its memory bounded.

The ripgrep engine reads rg's whole stdout (``communicate()``) and then turns every
line of it into a dict entry on the event loop, before head_limit is applied: a
repository file of 28 MB of short lines took 1.5 GB and 11 s of blocked loop when this
was written, about 50 times the file's size, so a few hundred MB of text (a log, a
data dump, a minified bundle) exhausts the machine's memory.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent(
    """
    import asyncio, resource, sys
    import nbtoolsched as nts
    from nbtoolsched.models import tool_use

    class Refuser:
        async def __call__(self, request):
            return nts.ApprovalAnswer.deny("no")

    project = sys.argv[1]
    perms = nts.Permissions(mode="default", cwd=project, approver=Refuser())
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    block = tool_use("Grep", id="toolu_1", pattern="a", output_mode="content", head_limit=5)
    (result,) = asyncio.run(sched.run([block]))
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    print("GROWN_MB", grown, result.is_error)
    """
)


@pytest.mark.heavy  # a child process greps a 16 MB file
def test_grep_content_mode_memory_does_not_scale_with_the_matches(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    with open(project / "big.log", "w") as handle:
        handle.write("abcdefghi\n" * 1_600_000)  # 16 MB of short matching lines
    done = subprocess.run([sys.executable, "-c", _CHILD, str(project)], capture_output=True, text=True, timeout=110)
    assert "GROWN_MB" in done.stdout, done.stderr[-800:]
    grown = int(done.stdout.split("GROWN_MB")[1].split()[0])
    assert grown < 300, f"Grep over a 16 MB file grew the process by {grown} MB to show 5 lines"
