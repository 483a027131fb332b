"""The checkers of chapter 06 (``teaching.partition``): a wrong answer is named, the right one passes.

Each reference rule is also checked against the library it stands for: the partition
against ``partition_tool_calls``, the cap's fallback against ``max_tool_use_concurrency``,
``all()`` against ``merge_capped`` (on the checker's simulated clock).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, AsyncIterator

import pytest

from teaching import partition
from teaching.partition import (CAP_CASES, check_cap_fallback, check_capped_all, check_partition, reference_all,
                                reference_cap, reference_partition)


def unwritten(*args: Any) -> Any:
    raise NotImplementedError


# -- partition -----------------------------------------------------------------------------------
def unknown_is_safe(blocks: list[dict[str, Any]], registry: Any) -> list[tuple[bool, list[str]]]:
    """Wrong: a tool that does not exist counts as safe ("it will fail anyway")."""
    batches: list[tuple[bool, list[str]]] = []
    for block in blocks:
        tool = registry.get(block["name"])
        try:
            safe = tool is None or bool(tool.is_concurrency_safe(tool.input_model.model_validate(block["input"])))
        except Exception:
            safe = False
        if safe and batches and batches[-1][0]:
            batches[-1][1].append(block["id"])
        else:
            batches.append((safe, [block["id"]]))
    return batches


def joins_across_unsafe(blocks: list[dict[str, Any]], registry: Any) -> list[tuple[bool, list[str]]]:
    """Wrong: an unsafe call sits inside the safe batch before it instead of starting its own."""
    batches: list[tuple[bool, list[str]]] = []
    for block in blocks:
        safe = reference_partition([block], registry)[0][0]
        if batches and batches[-1][0]:
            batches[-1][1].append(block["id"])
        else:
            batches.append((safe, [block["id"]]))
    return batches


def every_call_alone(blocks: list[dict[str, Any]], registry: Any) -> list[tuple[bool, list[str]]]:
    return [(reference_partition([b], registry)[0][0], [b["id"]]) for b in blocks]


def test_partition_wrong_answers_are_named() -> None:
    text = str(check_partition(unknown_is_safe))
    assert text.startswith("✗ partition") and "no such tool" in text and "fail closed" in text
    text = str(check_partition(joins_across_unsafe))
    assert "an unsafe call is always a batch of its own" in text
    text = str(check_partition(every_call_alone))
    assert "share a batch" in text


def asks_read_only(blocks: list[dict[str, Any]], registry: Any) -> list[tuple[bool, list[str]]]:
    """Wrong: asks is_read_only where the partition asks is_concurrency_safe."""
    batches: list[tuple[bool, list[str]]] = []
    for block in blocks:
        try:
            tool = registry.get(block["name"])
            safe = bool(tool.is_read_only(tool.input_model.model_validate(block["input"])))
        except Exception:
            safe = False
        if safe and batches and batches[-1][0]:
            batches[-1][1].append(block["id"])
        else:
            batches.append((safe, [block["id"]]))
    return batches


def test_partition_read_only_for_concurrency_safe_is_caught_and_named() -> None:
    registry = partition.probe_registry()
    screenshot = registry.get("Screenshot")
    assert screenshot is not None
    parsed = screenshot.input_model.model_validate({})
    assert screenshot.is_read_only(parsed) and not screenshot.is_concurrency_safe(parsed)
    verdict = check_partition(asks_read_only)
    text = str(verdict)
    assert not verdict.ok
    assert "your batches are the ones is_read_only gives" in text
    assert "Screenshot() is read-only but not concurrency-safe" in text


def test_partition_right_answer_passes() -> None:
    verdict = check_partition(reference_partition)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ partition: all 300 cases agree")


def test_partition_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_partition(unwritten))


def test_partition_reference_matches_the_library() -> None:
    import nbtoolsched as nts

    registry = partition.probe_registry()
    rng = random.Random(11)
    for _ in range(400):
        blocks = partition.random_answer(rng)
        library = [(b.concurrency_safe, [c.tool_use_id for c in b.calls]) for b in nts.partition_tool_calls(blocks, registry)]
        assert reference_partition(blocks, registry) == library


# -- the cap's fallback --------------------------------------------------------------------------
def test_cap_fallback_wrong_answers_are_named() -> None:
    text = str(check_cap_fallback(lambda raw: int(raw) if raw else 10))
    assert "parseInt('0') is 0" in text and "your code raised ValueError" in text


def test_cap_fallback_right_answer_passes() -> None:
    verdict = check_cap_fallback(reference_cap)
    assert verdict.ok, str(verdict)


def test_cap_fallback_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_cap_fallback(unwritten))


def test_cap_reference_matches_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    from nbtoolsched.internals import ENV_MAX_CONCURRENCY, max_tool_use_concurrency

    for raw in CAP_CASES:
        if raw is None:
            monkeypatch.delenv(ENV_MAX_CONCURRENCY, raising=False)
        else:
            monkeypatch.setenv(ENV_MAX_CONCURRENCY, raw)
        assert max_tool_use_concurrency() == reference_cap(raw), raw


# -- the capped all() ----------------------------------------------------------------------------
async def ignores_the_cap(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    """Wrong: every generator at once."""
    from nbtoolsched.internals import merge_capped

    async for item in merge_capped(generators, cap=len(generators) or 1):
        yield item


async def groups_of_cap(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    """Wrong: ``cap`` at a time, the next group only when the whole group is done."""
    from nbtoolsched.internals import merge_capped

    for i in range(0, len(generators), cap):
        async for item in merge_capped(generators[i:i + cap], cap=cap):
            yield item


async def one_after_another(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    """Wrong: each generator drained before the next starts."""
    for gen in generators:
        async for item in gen:
            yield item


async def last_first(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    """Wrong: started from the end of the list."""
    from nbtoolsched.internals import merge_capped

    async for item in merge_capped(list(reversed(generators)), cap=cap):
        yield item


async def right(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    """Right: the notebook's solution (a task per active generator, one read ahead)."""
    waiting = list(generators)
    pending: dict[asyncio.Task[str], AsyncIterator[str]] = {}

    def advance(gen: AsyncIterator[str]) -> None:
        pending[asyncio.ensure_future(gen.__anext__())] = gen

    while waiting and len(pending) < cap:
        advance(waiting.pop(0))
    while pending:
        done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in [t for t in pending if t in done]:
            gen = pending.pop(task)
            try:
                item = task.result()
            except StopAsyncIteration:
                if waiting:
                    advance(waiting.pop(0))
                continue
            advance(gen)
            yield item


async def never_ends(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
    await asyncio.get_running_loop().create_future()
    yield "never"


def test_capped_all_wrong_answers_are_named() -> None:
    assert "may run together" in str(check_capped_all(ignores_the_cap))
    text = str(check_capped_all(groups_of_cap))
    assert "freed a slot; the next generator starts the moment one finishes" in text
    assert not check_capped_all(one_after_another).ok
    assert "they start in list order" in str(check_capped_all(last_first))
    assert "never finished" in str(check_capped_all(never_ends, cases=2))


def test_capped_all_right_answer_passes() -> None:
    verdict = check_capped_all(right)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ capped_all: all 60 cases agree")


def test_capped_all_unfilled_stub_is_not_written_yet() -> None:
    async def stub(generators: list[AsyncIterator[str]], cap: int) -> AsyncIterator[str]:
        raise NotImplementedError
        yield  # an async generator, as the notebook's stub

    assert "not written yet" in str(check_capped_all(stub))
    assert "not written yet" in str(check_capped_all(unwritten))


def test_capped_all_reference_matches_merge_capped() -> None:
    from nbtoolsched.internals import merge_capped

    rng = random.Random(13)
    for _ in range(80):
        delays, cap = partition.random_generators(rng)
        seen = partition.run_capped(lambda gens, c: merge_capped(gens, cap=c), delays, cap)
        want = reference_all(delays, cap)
        assert seen["items"] == want["items"]
        assert seen["starts"] == want["starts"] and seen["ends"] == want["ends"]
        assert seen["peak"] <= cap


def test_the_simulated_clock_takes_no_real_time() -> None:
    import time

    start = time.perf_counter()
    partition.run_capped(lambda gens, c: one_after_another(gens, c), [[500.0], [400.0]], 1)
    assert time.perf_counter() - start < 2


# -- pictures ------------------------------------------------------------------------------------
def test_slots_diagram_is_wide_enough_for_its_title() -> None:
    log = [("start", "A"), ("start", "B"), ("item", "A1"), ("end", "A"), ("start", "C"), ("item", "C1"),
           ("end", "C"), ("item", "B1"), ("end", "B")]
    title = "all() with cap 2: A and B start, C waits for a free slot, then takes the one A freed" * 2
    picture = partition.slots_diagram(log, 2, title)
    width = float(picture.svg.split('width="')[1].split('"')[0])
    assert width >= len(title) * 7
    assert picture.svg.count("slot ") >= 2 and "C1" in picture.svg
