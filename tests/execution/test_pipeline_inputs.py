"""What the call sees versus what hooks and permissions see (backfill, updated input)."""

import math
from typing import Any

from pydantic import BaseModel

import nbtoolsched as nts
from nbtoolsched.permissions._base import PostToolUseOutcome, PreToolUseOutcome


class PathInput(BaseModel):
    file_path: str
    note: str = ""


class Echo(nts.Tool):
    name = "Echo"
    input_model = PathInput
    max_result_size_chars = math.inf  # never persisted

    def backfill_observable_input(self, observable: dict[str, Any], ctx: nts.ToolContext) -> None:
        observable["file_path"] = ctx.resolve_path(observable["file_path"])

    async def call(self, input: PathInput, ctx: nts.ToolContext) -> str:
        return f"{input.file_path}|{input.note}"


class Hooks:
    def __init__(self, change: dict[str, Any] | None) -> None:
        self.change = change
        self.observed: list[dict[str, Any]] = []

    async def pre_tool_use(self, event: Any) -> PreToolUseOutcome:
        self.observed.append(dict(event.tool_input))
        if self.change is None:
            return PreToolUseOutcome()
        return PreToolUseOutcome(updated_input={**event.tool_input, **self.change})

    async def post_tool_use(self, event: Any) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def post_tool_use_failure(self, event: Any) -> PostToolUseOutcome:
        return PostToolUseOutcome()


def call(**input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "e1", "name": "Echo", "input": input}


async def test_hooks_see_the_backfilled_path_but_the_call_gets_the_models_input(tmp_path: Any) -> None:
    hooks = Hooks(None)
    sched = nts.Scheduler(nts.ToolRegistry([Echo()]), hooks=hooks, cwd=tmp_path)
    result = (await sched.run([call(file_path="a.txt")]))[0]
    assert hooks.observed == [{"file_path": str(tmp_path.resolve() / "a.txt")}]
    assert result.content == "a.txt|"


async def test_an_updated_input_is_used_but_an_unchanged_backfilled_path_is_restored(tmp_path: Any) -> None:
    sched = nts.Scheduler(nts.ToolRegistry([Echo()]), hooks=Hooks({"note": "from hook"}), cwd=tmp_path)
    assert (await sched.run([call(file_path="a.txt")]))[0].content == "a.txt|from hook"
    moved = nts.Scheduler(nts.ToolRegistry([Echo()]), hooks=Hooks({"file_path": "/elsewhere/b.txt"}), cwd=tmp_path)
    assert (await moved.run([call(file_path="a.txt")]))[0].content == "/elsewhere/b.txt|"


async def test_an_updated_input_that_no_longer_validates_is_an_error(tmp_path: Any) -> None:
    sched = nts.Scheduler(nts.ToolRegistry([Echo()]), hooks=Hooks({"file_path": 42}), cwd=tmp_path)
    result = (await sched.run([call(file_path="a.txt")]))[0]
    assert result.is_error and "changed by a hook" in result.content and "`file_path`" in result.content


async def test_infinite_limit_is_never_persisted(tmp_path: Any) -> None:
    big = "x" * 200_000
    sched = nts.Scheduler(nts.ToolRegistry([Echo()]), cwd=tmp_path, session_dir=tmp_path / "s")
    result = (await sched.run([call(file_path="a", note=big)]))[0]
    assert len(result.content) == 200_002 and not (tmp_path / "s").exists()
