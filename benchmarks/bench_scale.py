"""Policy simulation at scale: sessions/s and tool calls/s replayed, here and on Ray.

Synthetic Claude Code transcripts (``write_synthetic_transcripts``: 6 answers, about 9
tool calls each) are replayed under one policy (settings rules, default mode), each
call decided by the real permission engine and each answer partitioned, on:

* the local engine with 1 worker (one thread) and with 2 worker processes;
* a local Ray with 2 CPUs (started once; its start-up time is shown apart).

It prints one row per size and engine, the scaling from 1 to 2 workers, and checks
that every engine gave the same per-session results.

    python benchmarks/bench_scale.py [--sizes 1000 10000] [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from nbtoolsched.scale import Policy, RayEngine, ReplayTask, run_sessions, write_synthetic_transcripts

POLICY = Policy(name="bench", allow=("Bash(git status)", "Bash(git diff:*)", "Bash(python -m pytest:*)"),
                deny=("Bash(rm:*)",), ask=("WebFetch",))


def measure(label: str, tasks: list[ReplayTask], **options: object) -> tuple[float, list[object], int]:
    started = time.perf_counter()
    run = run_sessions(tasks, progress=False, **options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    values = [r.value for r in run.results]
    failed = [r for r in run.results if not r.ok]
    assert not failed, failed[:3]
    calls = sum(len(v.calls) for v in values)  # type: ignore[attr-defined]
    print(f"  {label:<22} {len(tasks):>6} sessions {calls:>7} calls  {seconds:7.2f} s  "
          f"{len(tasks) / seconds:8.0f} sessions/s  {calls / seconds:9.0f} calls/s")
    return seconds, values, calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; policy: {POLICY.describe()}")
    engine = None
    if not args.no_ray:
        started = time.perf_counter()
        engine = RayEngine(num_cpus=2).start()
        print(f"local Ray with 2 CPUs started in {time.perf_counter() - started:.1f} s")
    try:
        with tempfile.TemporaryDirectory(prefix="nbtoolsched-bench-") as folder:
            for size in args.sizes:
                started = time.perf_counter()
                paths = write_synthetic_transcripts(os.path.join(folder, str(size)), size, seed=size)
                print(f"\n{size} synthetic sessions written in {time.perf_counter() - started:.1f} s")
                tasks = [ReplayTask(str(p), POLICY) for p in paths]
                one, base, _ = measure("local, 1 worker", tasks, workers=1)
                two, values, _ = measure("local, 2 processes", tasks, workers=2)
                assert values == base
                print(f"  scaling 1 -> 2 local workers: x{one / two:.2f}")
                if engine is not None:
                    ray_s, on_ray, _ = measure("Ray, 2 CPUs", tasks, engine=engine)
                    assert on_ray == base
                    print(f"  scaling 1 local worker -> Ray with 2 CPUs: x{one / ray_s:.2f}")
                print("  identical per-session results on every engine: yes")
    finally:
        if engine is not None:
            engine.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
