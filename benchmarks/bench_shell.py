"""Time the read-only check over the shell corpus.

    python benchmarks/bench_shell.py [--rounds N]

Microseconds per ``analyze()`` call, per corpus command:

* uncached: parse + walk + decide with every cache bypassed (``use_cache=False``);
* parse only: ``parse_command`` without its cache;
* cached: the lru_cache hit a scheduler sees when the same command is checked again
  (permission, concurrency, speculation).

Two clocks: CPU time of this thread, best of N rounds (the intrinsic cost, robust on a
shared machine), and wall time, median of N rounds (what this machine gave right now).
Target: uncached median <= 100 us.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nbtoolsched.shell._readonly import analyze
from nbtoolsched.shell._parse import parse_command
from tests.shell.corpus import CORPUS  # noqa: E402

TARGET_MEDIAN_US = 100.0


def sample(
    fn: Callable[[str], object], commands: list[str], rounds: int,
) -> tuple[list[float], list[float]]:
    """Per command: best CPU time and median wall time over ``rounds``, in us."""
    cpu: list[list[float]] = [[] for _ in commands]
    wall: list[list[float]] = [[] for _ in commands]
    for _ in range(rounds):
        for i, command in enumerate(commands):
            cpu_start = time.thread_time_ns()
            wall_start = time.perf_counter_ns()
            fn(command)
            wall[i].append((time.perf_counter_ns() - wall_start) / 1000)
            cpu[i].append((time.thread_time_ns() - cpu_start) / 1000)
    return [min(c) for c in cpu], [statistics.median(w) for w in wall]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def row(name: str, values: list[float]) -> str:
    return (
        f"{name:34} {statistics.median(values):8.1f} {statistics.fmean(values):8.1f}"
        f" {percentile(values, 0.90):8.1f} {percentile(values, 0.99):8.1f} {max(values):8.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    commands = [case.command for case in CORPUS]
    for command in commands:  # warm up: imports, parser construction, caches
        analyze(command)

    uncached_cpu, uncached_wall = sample(lambda c: analyze(c, use_cache=False), commands, rounds)
    parse_cpu, parse_wall = sample(parse_command.__wrapped__, commands, rounds)
    _, cached_wall = sample(analyze, commands, rounds)

    print(f"{len(commands)} commands, {rounds} rounds each, microseconds per call\n")
    print(f"{'':34} {'median':>8} {'mean':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    print(row("analyze, uncached  (CPU, best)", uncached_cpu))
    print(row("analyze, uncached  (wall, median)", uncached_wall))
    print(row("  parse only       (CPU, best)", parse_cpu))
    print(row("  parse only       (wall, median)", parse_wall))
    print(row("analyze, cached    (wall, median)", cached_wall))

    slowest = sorted(zip(uncached_cpu, commands), reverse=True)[:3]
    print("\nslowest uncached (CPU):")
    for micros, command in slowest:
        print(f"  {micros:8.1f}  {command[:60]!r}")
    median = statistics.median(uncached_cpu)
    verdict = "meets" if median <= TARGET_MEDIAN_US else "MISSES"
    print(f"\nuncached median {median:.1f} us (CPU) {verdict} the {TARGET_MEDIAN_US:.0f} us target;"
          f" wall median {statistics.median(uncached_wall):.1f} us on this machine now")
    return 0 if median <= TARGET_MEDIAN_US else 1


if __name__ == "__main__":
    raise SystemExit(main())
