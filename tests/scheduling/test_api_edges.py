"""The public entry points refuse what is not a list of blocks, naming what they got.

A single dict or a string is never iterated (its keys or characters would each become
a bogus call); a bad item inside a list still gets its own error result.
"""

from __future__ import annotations

from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.tools import default_registry

READ = {"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "README.md"}}
EXPECTED = r"blocks must be a list of tool_use blocks \(dicts or ToolUseBlock\), got "

BAD = [
    (None, "None"),
    (5, "int"),
    ("Read", "str"),
    (b"Read", "bytes"),
    (READ, "a single dict; wrap it in a list"),
    (nts.ToolUseBlock(id="r1", name="Read", input={}), "a single ToolUseBlock; wrap it in a list"),
]


@pytest.fixture
def sched(tmp_path) -> nts.Scheduler:
    (tmp_path / "README.md").write_text("# hi\n")
    return nts.Scheduler(default_registry(), cwd=tmp_path)


async def _call(sched: nts.Scheduler, entry: str, blocks: Any) -> Any:
    if entry == "stream":
        return [event async for event in sched.stream(blocks)]
    if entry == "partition_tool_calls":
        return nts.partition_tool_calls(blocks, sched.registry)
    result = getattr(sched, entry)(blocks)
    return await result if entry in ("run", "run_outcomes", "submit") else result  # a RunHandle is awaitable


ENTRIES = ["run", "run_outcomes", "stream", "submit", "prepare", "partition", "partition_tool_calls"]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(("blocks", "got"), BAD, ids=[g.split(";")[0] for _, g in BAD])
async def test_not_a_list_of_blocks_is_a_clear_type_error(sched, entry, blocks, got):
    name = entry if entry == "partition_tool_calls" else f"Scheduler.{entry}"
    with pytest.raises(TypeError, match=rf"^{name}\(\): {EXPECTED}{got}"):
        await _call(sched, entry, blocks)


@pytest.mark.parametrize("entry", ENTRIES)
async def test_lists_tuples_and_generators_still_run(sched, entry):
    for blocks in ([READ], (READ,), (b for b in [READ])):
        assert await _call(sched, entry, blocks)


async def test_a_bad_item_in_a_list_still_gets_its_own_error_result(sched):
    results = await sched.run([READ, 5, "garbage"])
    assert [r.is_error for r in results] == [None, True, True]
    assert "block 1 is a int, not a tool_use object" in results[1].content


@pytest.mark.parametrize(("item", "got"), [(5, "int$"), (None, "None$"), ([READ], "list; call add_tool once per block")])
async def test_add_tool_refuses_what_is_not_one_block(sched, item, got):
    async with sched.streaming_executor() as ex:
        with pytest.raises(TypeError, match=rf"^StreamingToolExecutor.add_tool\(\): expected one tool_use block \(a dict or ToolUseBlock\), got {got}"):
            ex.add_tool(item)
        assert ex.tools == []  # nothing half-tracked: the executor is still usable
        ex.add_tool(READ)
        assert [u async for u in ex.get_remaining_results()][-1].result.tool_use_id == "r1"


async def test_add_tool_still_answers_a_malformed_block_with_an_error_result(sched):
    async with sched.streaming_executor() as ex:
        tracked = ex.add_tool({"type": "tool_use", "name": "Read"})
    assert tracked.outcome is not None and tracked.outcome.result.is_error
    assert "has no string 'id'" in tracked.outcome.result.content


@pytest.mark.parametrize("entry", ["run", "run_outcomes", "submit", "stream", "streaming_executor"])
async def test_an_unknown_per_run_mode_is_refused_before_anything_runs(tmp_path, entry):
    """A typo in ``mode=`` is the caller's error: it raises, naming the mode, instead of
    turning every call into a tool error the model would read."""
    ran: list[str] = []

    @nts.tool
    async def poke() -> str:
        ran.append("poke")
        return "poked"

    sched = nts.Scheduler(nts.ToolRegistry([poke]), permissions=nts.Permissions(cwd=tmp_path))
    blocks = [{"type": "tool_use", "id": "p", "name": "poke", "input": {}}]
    with pytest.raises(nts.PermissionConfigError, match="bypass_permissions"):
        if entry == "stream":
            [e async for e in sched.stream(blocks, mode="bypass_permissions")]
        elif entry == "streaming_executor":
            async with sched.streaming_executor(mode="bypass_permissions") as ex:
                ex.add_tool(blocks[0])
        elif entry == "submit":
            await sched.submit(blocks, mode="bypass_permissions")
        else:
            await getattr(sched, entry)(blocks, mode="bypass_permissions")
    assert ran == []
