import asyncio
from typing import Any, AsyncIterator

import pytest

import nbtoolsched as nts
from nbtoolsched.internals import merge_capped
from nbtoolsched.scheduling._engine import max_tool_use_concurrency

from tests.spies import block


def test_seeds_worked_example_gives_three_batches(spy_registry: nts.ToolRegistry) -> None:
    blocks = [block("Grep", output="g"), block("Read"), block("Edit"), block("Glob"), block("Read")]
    batches = nts.partition_tool_calls(blocks, spy_registry)
    assert [(b.concurrency_safe, b.names) for b in batches] == [
        (True, ["Grep", "Read"]),
        (False, ["Edit"]),
        (True, ["Glob", "Read"]),
    ]


class Moody(nts.Tool):
    name = "Moody"

    def is_concurrency_safe(self, input: Any) -> bool:
        raise ValueError("cannot parse")


def test_unsafe_when_unknown_invalid_or_raising(spy_registry: nts.ToolRegistry) -> None:
    spy_registry.register(Moody())
    blocks = [block("Read"), block("Nope"), block("Read"), block("Read", duration="x"), block("Moody"), block("Read")]
    assert [b.concurrency_safe for b in nts.partition_tool_calls(blocks, spy_registry)] == [True, False, True, False, False, True]


@pytest.mark.parametrize("raw, expected", [("4", 4), ("0", 10), ("-3", 10), ("abc", 10), ("", 10), (" 7 ", 7)])
def test_cap_from_environment(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv("NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY", raw)
    assert max_tool_use_concurrency() == expected


async def _gen(name: str, delays: list[float], log: list[str]) -> AsyncIterator[str]:
    log.append(f"start {name}")
    for i, delay in enumerate(delays):
        await asyncio.sleep(delay)
        yield f"{name}{i}"
    log.append(f"end {name}")


async def test_merge_interleaves_by_completion_and_keeps_order_within() -> None:
    log: list[str] = []
    gens = [_gen("a", [0.2, 0.2], log), _gen("b", [0.05, 0.05, 0.05], log)]
    out = [x async for x in merge_capped(gens, cap=5)]
    assert sorted(out) == ["a0", "a1", "b0", "b1", "b2"]
    assert out.index("b0") < out.index("a0")
    assert [x for x in out if x[0] == "a"] == ["a0", "a1"] and [x for x in out if x[0] == "b"] == ["b0", "b1", "b2"]


async def test_merge_cap_starts_a_generator_only_when_one_finishes() -> None:
    log: list[str] = []
    gens = [_gen(n, [0.01], log) for n in "abc"]
    out = [x async for x in merge_capped(gens, cap=2)]
    assert len(out) == 3
    assert log.index("start c") > min(log.index("end a"), log.index("end b"))


async def test_merge_reads_one_item_ahead() -> None:
    produced: list[int] = []

    async def counting() -> AsyncIterator[int]:
        for i in range(3):
            produced.append(i)
            yield i

    merged = merge_capped([counting()], cap=1)
    first = await merged.__anext__()
    await asyncio.sleep(0.01)
    assert first == 0 and produced == [0, 1]  # the next item was requested before the first was used
    await merged.aclose()
