"""Scheduler core benchmark: per-call overhead, cap efficiency, streaming start latency.

Run: python benchmarks/bench_core.py   (prints a Markdown table; ratios are against
baselines measured in the same run, so the numbers travel between machines)
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts

N = 10_000
REPEATS = 5


class NoopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


@nts.tool(read_only=True)
async def noop(x: int) -> str:
    """Does nothing, quickly (returns what B2 returns: the input as text)."""
    return str(x)


def blocks(n: int, name: str = "noop") -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"x": i}} for i in range(n)]


async def bare_gather(batch: list[dict[str, Any]]) -> None:
    async def one(b: dict[str, Any]) -> dict[str, Any]:
        return b["input"]

    await asyncio.gather(*(one(b) for b in batch))


async def floor_b2(batch: list[dict[str, Any]]) -> None:
    """gather + pydantic validation + a dict result: the least any real scheduler does."""

    async def one(b: dict[str, Any]) -> dict[str, Any]:
        parsed = NoopInput.model_validate(b["input"])
        return {"type": "tool_result", "tool_use_id": b["id"], "content": str(parsed.x)}

    await asyncio.gather(*(one(b) for b in batch))


def best_of(fn: Callable[[], Awaitable[Any]]) -> float:
    times = []
    for _ in range(REPEATS):
        gc.collect()
        start = time.perf_counter()
        asyncio.run(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def per_call_costs() -> dict[str, float]:
    batch = blocks(N)
    sched = nts.Scheduler(nts.ToolRegistry([noop]), record_trace=False)
    traced = nts.Scheduler(nts.ToolRegistry([noop]), record_trace=True)
    results: dict[str, float] = {}
    results["B1 bare gather"] = best_of(lambda: bare_gather(batch)) / N * 1e6
    results["B2 gather + validate + dict"] = best_of(lambda: floor_b2(batch)) / N * 1e6
    results["nbtoolsched Scheduler.run"] = best_of(lambda: sched.run(batch)) / N * 1e6
    results["with trace"] = best_of(lambda: traced.run(batch)) / N * 1e6
    return results


def memory_per_call() -> float:
    batch = blocks(N)
    sched = nts.Scheduler(nts.ToolRegistry([noop]), record_trace=False)

    async def run() -> None:
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        await sched.run(batch)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        holder.append(peak - base)

    holder: list[int] = []
    asyncio.run(run())
    return holder[0] / N


@nts.tool(read_only=True)
async def nap(ms: int) -> str:
    """Sleeps; stands in for a read-only tool doing I/O."""
    await asyncio.sleep(ms / 1000)
    return "done"


def cap_efficiency() -> tuple[float, float]:
    sched = nts.Scheduler(nts.ToolRegistry([nap]), max_concurrency=10)
    batch = [{"type": "tool_use", "id": f"n{i}", "name": "nap", "input": {"ms": 50}} for i in range(100)]
    times: list[float] = []

    async def timed() -> None:
        start = time.perf_counter()
        await sched.run(batch)
        times.append(time.perf_counter() - start)

    for _ in range(3):
        asyncio.run(timed())
    return min(times) * 1000, 500.0


def streaming_start_latency() -> tuple[float, float]:
    samples: list[float] = []

    @nts.tool(read_only=True)
    async def stamp(i: int) -> str:
        samples.append(time.perf_counter() - added[i])
        return "ok"

    added: dict[int, float] = {}
    sched = nts.Scheduler(nts.ToolRegistry([stamp]))

    async def run() -> None:
        for round_ in range(200):
            async with sched.streaming_executor() as ex:
                for j in range(5):
                    i = round_ * 5 + j
                    added[i] = time.perf_counter()
                    ex.add_tool({"type": "tool_use", "id": f"s{i}", "name": "stamp", "input": {"i": i}})
                    await asyncio.sleep(0)  # the stream yields to the loop between blocks

    asyncio.run(run())
    samples.sort()
    return statistics.median(samples) * 1e6, samples[int(len(samples) * 0.99) - 1] * 1e6


def streaming_per_call(n: int = 5000) -> float:
    """The streaming executor's cost per call when a whole large answer arrives at once.

    Every step of the executor is O(cap), so this should stay flat as n grows (it was
    quadratic before: walking all calls on every start and every drain).
    """
    sched = nts.Scheduler(nts.ToolRegistry([noop]), record_trace=False)
    batch = blocks(n)

    async def run() -> None:
        async with sched.streaming_executor() as ex:
            for block in batch:
                ex.add_tool(block)

    return best_of(run) / n * 1e6


def main() -> int:
    costs = per_call_costs()
    b2 = costs["B2 gather + validate + dict"]
    ours = costs["nbtoolsched Scheduler.run"]
    mem = memory_per_call()
    took, ideal = cap_efficiency()
    p50, p99 = streaming_start_latency()
    small, large = streaming_per_call(500), streaming_per_call(5000)
    rows = [
        ("(a) B1: bare asyncio.gather, per call", f"{costs['B1 bare gather']:.1f} us", ""),
        ("(a) B2: gather + pydantic + dict (floor), per call", f"{b2:.1f} us", ""),
        ("(a) full pipeline, per call (10,000 no-op calls)", f"{ours:.1f} us", f"{ours / b2:.2f} x B2 (target <= 2.5 x, <= 50 us)"),
        ("(a) same, recording the event trace", f"{costs['with trace']:.1f} us", f"{costs['with trace'] / b2:.2f} x B2"),
        ("(a) peak memory per call", f"{mem:.0f} B", "target <= 2048 B"),
        ("(b) 100 x 50 ms read-only calls at cap 10", f"{took:.0f} ms", f"{took - ideal:+.0f} ms vs ideal {ideal:.0f} ms (target <= +10)"),
        ("(c) streaming add_tool -> call start, median", f"{p50:.0f} us", ""),
        ("(c) streaming add_tool -> call start, p99", f"{p99:.0f} us", "target < 1000 us"),
        ("(d) streaming executor, 500 calls at once, per call", f"{small:.1f} us", ""),
        ("(d) streaming executor, 5,000 calls at once, per call", f"{large:.1f} us", f"{large / small:.2f} x the 500-call cost (flat = linear)"),
    ]
    print(f"nbtoolsched core benchmark (Python {sys.version.split()[0]})\n")
    print("| measure | value | against baseline |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
