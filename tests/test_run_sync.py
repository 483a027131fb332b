"""``nts.run_sync``: a batch run to its end from synchronous code, in a script or in a running loop."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import nbtoolsched as nts


def test_run_sync_in_a_script_returns_the_results(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    sched = nts.Scheduler(nts.default_registry(tmp_path), cwd=tmp_path)
    results = nts.run_sync(sched.run([{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "a.txt"}}]))
    assert "hello" in results[0].text


@pytest.mark.heavy  # a subprocess that imports the package
def test_run_sync_inside_a_running_loop_applies_nest_asyncio2_only_then(tmp_path):
    """In a running loop (a notebook cell) it drives that loop; nest-asyncio2 is applied lazily.

    A subprocess keeps the patch away from this test process."""
    script = textwrap.dedent(f"""
        import asyncio, sys
        import nbtoolsched as nts
        assert "nest_asyncio2" not in sys.modules, "imported at import time"
        sched = nts.Scheduler(nts.default_registry({str(tmp_path)!r}), cwd={str(tmp_path)!r})

        async def cell():
            assert "nest_asyncio2" not in sys.modules, "applied before a blocking call"
            results = nts.run_sync(sched.run([{{"type": "tool_use", "id": "s", "name": "Sleep", "input": {{"seconds": 0.05}}}}]))
            print(results[0].text, "nest_asyncio2" in sys.modules)

        asyncio.run(cell())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("True") and "Slept" in done.stdout
