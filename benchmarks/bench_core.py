"""Scheduler core benchmark: the cost users pay, against a floor measured in the same run.

Run: python benchmarks/bench_core.py   (prints a Markdown table)

"default" is the configuration a user gets: ``Permissions.from_settings`` over a realistic
settings file of 50 rules, the event trace on (``Scheduler.last_trace``). "stripped" has
no permission system and no trace. Every ratio is against B2 (asyncio.gather + pydantic
validation + a result dict), the least any real scheduler does, measured in this run, so
the numbers travel between machines. Times are the best of several runs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts

N = 10_000
REPEATS = 7

# A settings file of the kind teams commit: 50 rules over shell, files, web and MCP tools.
SETTINGS = {
    "permissions": {
        "allow": [
            "Bash(git log:*)", "Bash(git status:*)", "Bash(git diff:*)", "Bash(npm test:*)", "Bash(npm run lint:*)",
            "Bash(pytest:*)", "Bash(python -m pytest:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(make test:*)",
            "Read(src/**)", "Read(tests/**)", "Edit(src/**)", "Edit(tests/**)", "Edit(docs/**)", "Edit(README.md)",
            "WebFetch(domain:docs.python.org)", "WebFetch(domain:github.com)", "mcp__github__get_issue",
            "mcp__github__list_issues", "Grep", "Glob", "Bash(cargo test:*)", "Bash(go test:*)", "Bash(uv run:*)",
        ],
        "deny": [
            "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)", "Read(~/.ssh/**)", "Bash(rm -rf:*)", "Bash(sudo:*)",
            "Bash(curl:*)", "Bash(wget:*)", "Edit(./.github/workflows/**)", "WebFetch(domain:pastebin.com)",
            "Bash(git push --force:*)", "Read(//etc/shadow)", "mcp__github__delete_repo", "Bash(dd:*)", "Bash(mkfs:*)",
        ],
        "ask": [
            "Bash(git push:*)", "Bash(npm publish:*)", "Bash(docker:*)", "Edit(package.json)", "Edit(pyproject.toml)",
            "Bash(pip install:*)", "WebFetch", "mcp__github__create_issue", "Bash(kubectl:*)", "Bash(terraform:*)",
        ],
    }
}


class NoopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


@nts.tool(read_only=True)
async def noop(x: int) -> str:
    """Does nothing, quickly (returns what B2 returns: the input as text)."""
    return str(x)


@nts.tool
async def touch(x: int) -> str:
    """A no-op that says nothing about itself: not read-only, so it runs alone (a write, to the scheduler)."""
    return str(x)


@nts.tool(read_only=True)
async def nap(ms: int) -> str:
    """Sleeps; stands in for a read-only tool doing I/O."""
    await asyncio.sleep(ms / 1000)
    return "done"


def blocks(n: int, name: str = "noop") -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"x": i}} for i in range(n)]


def project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="nbtoolsched-bench-"))
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    return root


def default_scheduler(root: Path, *tools: Any, **options: Any) -> nts.Scheduler:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file is read as it is: its warnings are not the point here
        permissions = nts.Permissions.from_settings(root, user_dir=root / "no-user-settings")
    assert len(permissions.rules) == 50, len(permissions.rules)
    return nts.Scheduler(nts.ToolRegistry(list(tools)), permissions=permissions, cwd=root, **options)


def stripped_scheduler(root: Path, *tools: Any, **options: Any) -> nts.Scheduler:
    return nts.Scheduler(nts.ToolRegistry(list(tools)), cwd=root, record_trace=False, **options)


async def floor_b1(batch: list[dict[str, Any]]) -> None:
    async def one(b: dict[str, Any]) -> dict[str, Any]:
        return b["input"]  # type: ignore[no-any-return]

    await asyncio.gather(*(one(b) for b in batch))


async def floor_b2(batch: list[dict[str, Any]]) -> None:
    """gather + pydantic validation + a dict result: the least any real scheduler does."""

    async def one(b: dict[str, Any]) -> dict[str, Any]:
        parsed = NoopInput.model_validate(b["input"])
        return {"type": "tool_result", "tool_use_id": b["id"], "content": str(parsed.x)}

    await asyncio.gather(*(one(b) for b in batch))


def best_of(fn: Callable[[], Awaitable[Any]], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        asyncio.run(fn())  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
    return min(times)


def per_call(root: Path) -> dict[str, float]:
    batch = blocks(N)
    default, stripped = default_scheduler(root, noop), stripped_scheduler(root, noop)
    return {
        "B1": best_of(lambda: floor_b1(batch)) / N * 1e6,
        "B2": best_of(lambda: floor_b2(batch)) / N * 1e6,
        "default": best_of(lambda: default.run(batch)) / N * 1e6,
        "stripped": best_of(lambda: stripped.run(batch)) / N * 1e6,
    }


def memory(root: Path) -> tuple[float, float]:
    """Peak bytes per call during a 10,000-call run, and bytes still held afterwards.

    "Held" is what the scheduler keeps once the caller has dropped the results: the
    bounded trace in ``last_trace``.
    """
    sched = default_scheduler(root, noop)
    batch = blocks(N)
    out: dict[str, float] = {}

    async def run() -> None:
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        results = await sched.run(batch)
        out["peak"] = (tracemalloc.get_traced_memory()[1] - base) / N
        del results
        gc.collect()
        out["held"] = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()

    asyncio.run(run())
    assert sched.last_trace is not None and len(sched.last_trace) >= 3 * N  # the trace is really kept
    return out["peak"], out["held"]


def cap_efficiency(root: Path) -> tuple[float, float]:
    """100 calls of 50 ms at cap 10, and the same sleeps under a bare asyncio.Semaphore(10):
    asyncio's timers alone overshoot each wave a little (epoll waits in whole ms)."""
    sched = default_scheduler(root, nap, max_concurrency=10)
    batch = [{"type": "tool_use", "id": f"n{i}", "name": "nap", "input": {"ms": 50}} for i in range(100)]

    async def bare() -> None:
        limit = asyncio.Semaphore(10)

        async def one() -> None:
            async with limit:
                await asyncio.sleep(0.05)

        await asyncio.gather(*(one() for _ in range(100)))

    return best_of(lambda: sched.run(batch), 3) * 1000, best_of(bare, 3) * 1000


def alternating(root: Path) -> tuple[float, float]:
    """Read-only and write calls taking turns (every call alone) against all read-only."""
    sched = default_scheduler(root, noop, touch)
    sched.permissions.add_rule("touch")  # a tool the team allows: the writes must run, not be asked about
    mixed = [{"type": "tool_use", "id": f"m{i}", "name": "noop" if i % 2 else "touch", "input": {"x": i}} for i in range(N)]
    reads = blocks(N)
    statuses = {o.status for o in asyncio.run(sched.run_outcomes(mixed)).outcomes}
    assert statuses == {"completed"}, f"every call must run, got {statuses}"
    return best_of(lambda: sched.run(mixed)) / N * 1e6, best_of(lambda: sched.run(reads)) / N * 1e6


def queued_behind_unsafe(root: Path, n: int = 5000) -> tuple[float, float]:
    """``n`` safe calls arriving while an unsafe call runs, against the same calls unblocked."""
    gate: dict[str, asyncio.Event] = {}

    @nts.tool
    async def hold(x: int) -> str:
        """Runs alone until released."""
        await gate["go"].wait()
        return "released"

    sched = stripped_scheduler(root, noop, hold)

    async def blocked() -> float:
        gate["go"] = asyncio.Event()
        async with sched.streaming_executor() as ex:
            ex.add_tool({"type": "tool_use", "id": "h", "name": "hold", "input": {"x": 0}})
            start = time.perf_counter()
            for block in blocks(n):
                ex.add_tool(block)
            gate["go"].set()
        return time.perf_counter() - start

    async def unblocked() -> float:
        start = time.perf_counter()
        async with sched.streaming_executor() as ex:
            for block in blocks(n):
                ex.add_tool(block)
        return time.perf_counter() - start

    def best(fn: Callable[[], Awaitable[float]]) -> float:
        return min(asyncio.run(fn()) for _ in range(REPEATS))  # type: ignore[arg-type]

    return best(blocked) / n * 1e6, best(unblocked) / n * 1e6


def streaming_start_latency(root: Path) -> tuple[float, float]:
    samples: list[float] = []
    added: dict[int, float] = {}

    @nts.tool(read_only=True)
    async def stamp(i: int) -> str:
        """Notes when it started."""
        samples.append(time.perf_counter() - added[i])
        return "ok"

    sched = default_scheduler(root, stamp)

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


def main() -> int:
    root = project()
    costs = per_call(root)
    b2 = costs["B2"]
    peak, held = memory(root)
    took, bare = cap_efficiency(root)
    mixed, reads = alternating(root)
    queued, free = queued_behind_unsafe(root)
    p50, p99 = streaming_start_latency(root)
    rows = [
        ("B1: bare asyncio.gather, per call", f"{costs['B1']:.1f} us", ""),
        ("B2: gather + pydantic + dict (the floor), per call", f"{b2:.1f} us", ""),
        ("default: 10,000 no-op calls, 50-rule settings file, trace on, per call",
         f"{costs['default']:.1f} us", f"{costs['default'] / b2:.2f} x B2 (target <= 2.5 x)"),
        ("stripped: no permission system, no trace, per call", f"{costs['stripped']:.1f} us", f"{costs['stripped'] / b2:.2f} x B2"),
        ("default: peak memory per call", f"{peak:.0f} B", "target <= 1,536 B"),
        ("default: memory still held after the run (last_trace)", f"{held / 2**20:.2f} MiB", "target <= 4 MiB"),
        ("default: 100 read-only calls of 50 ms at cap 10", f"{took:.0f} ms",
         f"{took - 500:+.0f} ms vs ideal 500 ms (target <= +10); bare Semaphore(10): {bare:.0f} ms ({bare - 500:+.0f})"),
        ("default: alternating read/write calls (each alone), per call", f"{mixed:.1f} us",
         f"{mixed / reads:.2f} x all read-only ({reads:.1f} us) (target <= 1.5 x)"),
        ("5,000 calls queued behind a running unsafe call, per call", f"{queued:.1f} us",
         f"{queued / free:.2f} x unblocked ({free:.1f} us) (target <= 1.5 x)"),
        ("default: streaming add_tool -> call start, median", f"{p50:.0f} us", ""),
        ("default: streaming add_tool -> call start, p99", f"{p99:.0f} us", "target < 1,000 us"),
    ]
    print(f"nbtoolsched core benchmark (Python {sys.version.split()[0]})\n")
    print("| measure | value | against baseline |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
