"""A tool's code that calls sys.exit or raises KeyboardInterrupt answers its own call; the run goes on (or stops as an abort)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts
from nbtoolsched.permissions._base import PostToolUseOutcome, PreToolUseOutcome
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.tools._bash import BashTool


@nts.tool(read_only=True)
async def count_cli(args: list[str]) -> str:
    """A wrapped argparse CLI: bad arguments make argparse call sys.exit(2)."""
    parser = argparse.ArgumentParser(prog="count")
    parser.add_argument("--count", type=int, required=True)
    return f"count={parser.parse_args(args).count}"


@nts.tool(read_only=True)
def threaded_exit(code: int) -> str:
    """A sync tool (run in a thread) that exits."""
    sys.exit(code)


@nts.tool(read_only=True)
async def ctrl_c() -> str:
    raise KeyboardInterrupt


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExitingChecks(nts.Tool):
    """A tool whose own checks call sys.exit, in the stage given by ``where``."""

    input_model = NoInput

    def __init__(self, name: str, where: str) -> None:
        self.name = name  # type: ignore[misc]
        self.where = where

    def is_concurrency_safe(self, input: Any) -> bool:
        if self.where == "is_concurrency_safe":
            sys.exit("unsafe to ask")
        return True

    def is_read_only(self, input: Any) -> bool:
        return True

    async def validate_input(self, input: Any, ctx: nts.ToolContext) -> nts.Validation:
        if self.where == "validate_input":
            sys.exit(3)
        return nts.Validation.OK  # type: ignore[attr-defined,no-any-return]

    async def check_permissions(self, input: Any, ctx: nts.ToolContext) -> nts.Decision:
        if self.where == "check_permissions":
            sys.exit(4)
        return nts.Decision.allow()

    async def call(self, input: Any, ctx: nts.ToolContext) -> nts.ToolOutput:
        return nts.ToolOutput("ran")


def run_guarded(make: Callable[[], Awaitable[Any]]) -> Any:
    """Run on a fresh loop; SystemExit or KeyboardInterrupt escaping the run fails the test instead of pytest."""
    try:
        return asyncio.run(make())  # type: ignore[arg-type]
    except (SystemExit, KeyboardInterrupt) as err:
        escaped = repr(err)
    pytest.fail(f"{escaped} escaped the run: no results at all", pytrace=False)


def use(id: str, name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def scheduler(tmp_path: Path, *tools: nts.Tool) -> nts.Scheduler:
    return nts.Scheduler(ToolRegistry([BashTool(), count_cli, threaded_exit, ctrl_c, *tools]), cwd=tmp_path, session_dir=tmp_path / "s")


BATCH = [
    use("before", "Bash", command="echo before"),
    use("cli", "count_cli", args=["--count", "many"]),
    use("thread", "threaded_exit", code=5),
    use("after", "Bash", command="echo after"),
    use("good", "count_cli", args=["--count", "3"]),
]


def check_batch(results: dict[str, nts.ToolResultBlock]) -> None:
    assert set(results) == {"before", "cli", "thread", "after", "good"}
    assert results["before"].text == "before" and results["after"].text == "after"
    assert results["good"].text == "count=3" and not results["good"].is_error
    cli = results["cli"]
    assert cli.is_error and "the tool called sys.exit(2)" in cli.text
    assert "invalid int value: 'many'" in cli.text  # argparse's own message travels with it
    assert results["thread"].is_error and "sys.exit(5)" in results["thread"].text


def test_sys_exit_in_a_tool_is_its_error_and_siblings_finish_through_run(tmp_path: Path) -> None:
    sched = scheduler(tmp_path)
    results = run_guarded(lambda: sched.run(BATCH))
    check_batch({block["id"]: r for block, r in zip(BATCH, results)})


def test_sys_exit_in_a_tool_is_its_error_and_siblings_finish_through_the_streaming_executor(tmp_path: Path) -> None:
    sched = scheduler(tmp_path)

    async def go() -> dict[str, nts.ToolResultBlock]:
        async with sched.streaming_executor() as ex:
            for block in BATCH:
                ex.add_tool(block)
            outcomes = [u async for u in ex.get_remaining_results() if isinstance(u, nts.events.ResultEvent)]
        return {o.tool_use_id: o.result for o in outcomes}

    check_batch(run_guarded(go))


@pytest.mark.parametrize("where", ["is_concurrency_safe", "validate_input", "check_permissions"])
def test_sys_exit_in_a_tools_checks_is_its_error(tmp_path: Path, where: str) -> None:
    sched = scheduler(tmp_path, ExitingChecks("Exits", where))
    blocks = [use("x", "Exits"), use("after", "Bash", command="echo after")]
    results = run_guarded(lambda: sched.run(blocks))
    assert results[1].text == "after"
    if where == "is_concurrency_safe":
        assert results[0].text == "ran"  # it ran, as an unsafe call (fail closed)
    else:
        assert results[0].is_error and "the tool called sys.exit(" in results[0].text


def test_sys_exit_in_a_hook_is_an_error_of_that_call(tmp_path: Path) -> None:
    class ExitingHooks:
        async def pre_tool_use(self, event: Any) -> Any:
            if event.tool_use_id == "x":
                sys.exit("hook gave up")
            return PreToolUseOutcome()

        async def post_tool_use(self, event: Any) -> Any:
            return PostToolUseOutcome()

        async def post_tool_use_failure(self, event: Any) -> Any:
            return await self.post_tool_use(event)

    sched = nts.Scheduler(ToolRegistry([BashTool()]), cwd=tmp_path, session_dir=tmp_path / "s", hooks=ExitingHooks())  # type: ignore[arg-type]
    results = run_guarded(lambda: sched.run([use("x", "Bash", command="echo x"), use("y", "Bash", command="echo y")]))
    assert results[0].is_error and "sys.exit('hook gave up')" in results[0].text
    assert results[1].text == "y"


def test_keyboard_interrupt_in_a_tool_interrupts_the_run_like_an_abort(tmp_path: Path) -> None:
    sched = scheduler(tmp_path)
    blocks = [use("c", "ctrl_c"), use("w", "Bash", command=f"touch {tmp_path / 'ran'}")]  # the second is unsafe: runs after
    results = run_guarded(lambda: sched.run(blocks))
    assert results[0].is_error and "interrupted" in results[0].text
    assert results[1].is_error and "did not run" in results[1].text
    assert not (tmp_path / "ran").exists()


def test_keyboard_interrupt_in_the_streaming_executor_answers_every_call(tmp_path: Path) -> None:
    sched = scheduler(tmp_path)

    async def go() -> dict[str, Any]:
        async with sched.streaming_executor() as ex:
            ex.add_tool(use("c", "ctrl_c"))
            ex.add_tool(use("w", "Bash", command=f"touch {tmp_path / 'ran'}"))
            outcomes = [u async for u in ex.get_remaining_results() if isinstance(u, nts.events.ResultEvent)]
        return {o.tool_use_id: o for o in outcomes}

    outcomes = run_guarded(go)
    assert outcomes["c"].status == "cancelled" and "interrupted" in outcomes["c"].result.text
    assert outcomes["w"].status == "cancelled"
    assert not (tmp_path / "ran").exists()
