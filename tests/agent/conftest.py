"""Small tools for the agent-loop tests: each records when it ran and can be slow or fail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.permissions._base import PostToolUseOutcome, PreToolUseOutcome


def make_registry(log: list[tuple[str, str]] | None = None) -> nts.ToolRegistry:
    """read (safe), write (unsafe), sh (a shell tool: its failure cancels siblings), tick (cancels on interrupt)."""
    log = log if log is not None else []

    @nts.tool(read_only=True)
    async def read(path: str, seconds: float = 0.0) -> str:
        """Read a file (pretend)."""
        log.append(("read", path))
        await asyncio.sleep(seconds)
        return f"read {path}"

    @nts.tool()
    async def write(path: str, seconds: float = 0.0) -> str:
        """Write a file (pretend)."""
        log.append(("write", path))
        await asyncio.sleep(seconds)
        return f"wrote {path}"

    @nts.tool(read_only=True)
    async def sh(command: str, seconds: float = 0.0, fail: bool = False) -> nts.ToolOutput:
        """Run a command (pretend)."""
        log.append(("sh", command))
        await asyncio.sleep(seconds)
        return nts.ToolOutput(f"ran {command}", is_error=fail)

    @nts.tool(read_only=True, interrupt_behavior="cancel")
    async def tick(seconds: float = 0.0) -> str:
        """Wait."""
        await asyncio.sleep(seconds)
        return "ticked"

    @nts.tool()
    async def reject(ctx: nts.ToolContext) -> str:
        """Acts like a permission prompt the user rejects: aborts its own signal."""
        ctx.abort.abort("user_abort")
        raise nts.AbortError("rejected")

    sh.errors_cancel_siblings = True  # type: ignore[misc]
    return nts.ToolRegistry([read, write, sh, tick, reject])


class StopAfterHook:
    """A PostToolUse hook that stops the loop after the named tool ran."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name

    async def pre_tool_use(self, event: Any) -> PreToolUseOutcome:
        return PreToolUseOutcome()

    async def post_tool_use(self, event: Any) -> PostToolUseOutcome:
        if event.tool_name == self.tool_name:
            return PostToolUseOutcome(prevent_continuation=True, stop_reason=f"hook stopped after {self.tool_name}")
        return PostToolUseOutcome()

    async def post_tool_use_failure(self, event: Any) -> PostToolUseOutcome:
        return PostToolUseOutcome()


@pytest.fixture(autouse=True)
def _sessions_in_tmp_path(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents write their transcript under the session folder, by default in the system
    temp dir: keep those of these tests in the test's own folder."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()


@pytest.fixture
def tool_log() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def registry(tool_log: list[tuple[str, str]]) -> nts.ToolRegistry:
    return make_registry(tool_log)


@pytest.fixture
def scheduler(registry: nts.ToolRegistry, tmp_path: Any) -> nts.Scheduler:
    return nts.Scheduler(registry, cwd=tmp_path, session_dir=tmp_path / "session")
