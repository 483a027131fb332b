"""The tool layer: fail-closed defaults, the @tool decorator, and the abort tree."""

import asyncio
import threading
from typing import Any

import pytest

import nbtoolsched as nts

from tests.spies import Bare

def test_tool_defaults_fail_closed() -> None:
    tool = Bare()
    assert tool.is_concurrency_safe(None) is False
    assert tool.is_read_only(None) is False
    assert tool.is_destructive(None) is False
    assert tool.is_enabled() is True
    assert tool.interrupt_behavior == "block"
    decision = asyncio.run(tool.check_permissions(None, nts.ToolContext()))
    assert decision.behavior == "passthrough"


def test_decorator_derives_input_model_and_injects_context() -> None:
    seen: dict[str, Any] = {}

    @nts.tool(read_only=True)
    async def word_count(path: str, ctx: nts.ToolContext, limit: int = 10) -> int:
        """Count the words of a file."""
        seen["ctx"] = ctx
        return len(path) + limit

    schema = word_count.input_schema()
    assert schema["required"] == ["path"]
    assert set(schema["properties"]) == {"path", "limit"}  # ctx is not an input
    assert word_count.is_concurrency_safe(None) and word_count.is_read_only(None)
    assert word_count.to_api()["description"] == "Count the words of a file."
    results = asyncio.run(nts.Scheduler(nts.ToolRegistry([word_count])).run([{"type": "tool_use", "id": "a", "name": "word_count", "input": {"path": "abc"}}]))
    assert results[0].content == "13"
    assert isinstance(seen["ctx"], nts.ToolContext) and seen["ctx"].tool_use_id == "a"


def test_sync_functions_run_off_the_event_loop() -> None:
    threads: list[str] = []

    @nts.tool
    def where() -> str:
        threads.append(threading.current_thread().name)
        return "done"

    asyncio.run(nts.Scheduler(nts.ToolRegistry([where])).run([{"type": "tool_use", "id": "a", "name": "where", "input": {}}]))
    assert threads and threads[0] != threading.main_thread().name
    assert where.is_concurrency_safe(None) is False  # not read-only, so not safe


def test_abort_tree_children_follow_parents_not_the_reverse() -> None:
    root = nts.AbortSignal()
    child = root.child()
    grandchild = child.child()
    grandchild.abort("sibling_error")
    assert grandchild.aborted and not child.aborted and not root.aborted
    fired: list[str] = []
    remove = child.on_abort(fired.append)
    root.abort("user_abort")
    assert child.reason == "user_abort" and fired == ["user_abort"]
    remove()
    bubbled = nts.AbortSignal()
    leaf = bubbled.child(bubble=bubbled.abort)
    leaf.abort("user_abort")
    assert bubbled.reason == "user_abort"


def test_decorator_refuses_parameters_it_could_never_pass() -> None:
    """A call passes the input by name: a positional-only parameter would fail every call
    with a TypeError, so it is refused when the tool is made, naming the parameter."""
    with pytest.raises(TypeError, match=r"@tool shift: the positional-only parameter 'x'"):
        @nts.tool
        async def shift(x: int, /, by: int = 1) -> int:
            return x + by
    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):
        @nts.tool
        def spread(*names: str) -> int:
            return len(names)
