import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts


class TodoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    count: int
    tags: list[str] = []


class Todo(nts.Tool):
    name = "Todo"
    input_model = TodoInput

    async def validate_input(self, input: TodoInput, ctx: nts.ToolContext) -> nts.Validation:
        if input.count < 0:
            return nts.Validation.fail("count must not be negative")
        return nts.Validation.OK  # type: ignore[attr-defined]

    async def call(self, input: TodoInput, ctx: nts.ToolContext) -> str:
        return "ok"


class LazyTool(Todo):
    name = "Lazy"
    should_defer = True


class ToolSearch(nts.Tool):
    name = "ToolSearch"


def run(blocks: list[dict[str, Any]], tools: list[nts.Tool] | None = None, messages: list[Any] | None = None) -> list[str]:
    sched = nts.Scheduler(nts.ToolRegistry(tools or [Todo()]))
    if messages:
        sched.context.messages.extend(messages)
    return [r.content for r in asyncio.run(sched.run(blocks))]  # type: ignore[misc]


def call(name: str, input: Any, id: str = "t1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def test_each_problem_is_named() -> None:
    text = run([call("Todo", {"count": "many", "extra": 1, "tags": [1]})])[0]
    assert text.startswith("<tool_use_error>InputValidationError: Todo could not run because of the following problems:")
    assert "The required parameter `title` is missing" in text
    assert "An unexpected parameter `extra` was provided" in text
    assert "The parameter `count` should be an integer but a string was given" in text
    assert "The parameter `tags[0]` should be a string but an integer was given" in text


def test_the_tools_own_check_runs_second() -> None:
    assert run([call("Todo", {"title": "x", "count": -1})]) == ["<tool_use_error>count must not be negative</tool_use_error>"]


def test_deferred_tool_never_loaded_gets_a_toolsearch_hint() -> None:
    blocks = [call("Lazy", {"title": "x", "count": "2x"})]
    text = run(blocks, [LazyTool(), ToolSearch()])[0]
    assert 'query "select:Lazy"' in text
    loaded = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s", "content": [{"type": "tool_reference", "tool_name": "Lazy"}]}]}]
    assert "select:Lazy" not in run(blocks, [LazyTool(), ToolSearch()], loaded)[0]


def test_bad_blocks_get_clear_errors_and_the_scheduler_stays_usable() -> None:
    sched = nts.Scheduler(nts.ToolRegistry([Todo()]))
    blocks: list[Any] = [
        call("Todo", {"title": "a", "count": 1}, id="dup"),
        call("Todo", {"title": "b", "count": 1}, id="dup"),
        {"type": "tool_use", "name": "Todo", "input": {}},
        {"type": "tool_use", "id": "noname", "input": {}},
        call("Todo", ["not", "an", "object"], id="list"),
        call("Todo", None, id="none"),
        "garbage",
        call("Missing", {}, id="m"),
    ]
    results = asyncio.run(sched.run(blocks))
    assert len(results) == len(blocks)
    assert results[0].is_error is None and results[0].content == "ok"
    texts = [r.content for r in results[1:]]
    assert "repeats the id 'dup'" in texts[0]
    assert "has no string 'id'" in texts[1]
    assert "has no string 'name'" in texts[2]
    assert "input of type list" in texts[3]
    assert "got no 'input'" in texts[4]
    assert "is a str, not a tool_use object" in texts[5]
    assert "no tool named 'Missing'" in texts[6]
    assert all(r.is_error for r in results[1:])
    again = asyncio.run(sched.run([call("Todo", {"title": "c", "count": 2}, id="z")]))
    assert again[0].content == "ok"
