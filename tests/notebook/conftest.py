"""Fixtures for the notebook layer: an in-process IPython shell with the extension loaded."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import pytest



@pytest.fixture
def project(tmp_path, monkeypatch):
    """An isolated working directory: no user or project settings, no approval policy from env."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# demo\nline two\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.delenv("NBTOOLSCHED_APPROVAL", raising=False)
    monkeypatch.delenv("NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY", raising=False)
    return work


@pytest.fixture
async def shell(project):
    """IPython with ``%load_ext nbtoolsched``; the session is made on the test's running loop."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    for name in [n for n in ip.user_ns if n in ("run", "r1", "r2", "touch", "nts")]:
        ip.user_ns.pop(name)
    ip.run_line_magic("load_ext", "nbtoolsched")
    ip.run_cell(TOUCH_TOOL)
    yield ip
    ip.run_line_magic("unload_ext", "nbtoolsched")


# A concurrency-safe tool that is not read-only: every call asks for approval in default mode.
TOUCH_TOOL = '''
import nbtoolsched as nts

@nts.tool(concurrency_safe=True)
async def touch(name: str) -> str:
    """Create an empty file."""
    open(name, "w").close()
    return "made " + name
'''


def session():
    from nbtoolsched.notebook import get_session

    found = get_session()
    assert found is not None, "the extension is not loaded"
    return found


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll (generously) until ``predicate()`` is truthy; fail naming what did not happen."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


def cell_error(result: Any) -> str:
    """The UsageError text of a cell that failed before or while running."""
    err = result.error_in_exec or result.error_before_exec
    assert err is not None, "the cell was expected to fail"
    return str(err)
