"""Policy simulation at scale, in one run: what a session costs, how fast here and on Ray,
what the driver holds, and agent sessions on reused workers.

1. **CPU per session**: ``cpu_ms_per_session`` (this process's CPU time, one event loop, the
   caches that span sessions emptied each round) on the real Claude Code transcripts of
   ``tests/fixtures/transcripts`` (three public sessions and the hand-written ones), without
   hooks (target: at most 10 ms) and under a settings file with a command hook on every call;
   and on the synthetic transcripts.
2. **Sessions per second**: synthetic transcripts (``write_synthetic_transcripts``: 6 answers,
   about 9 calls each) replayed on the local engine with 1 worker (the baseline: one thread)
   and 2 worker processes, and on a local Ray of 2 CPUs capped at 1 and at 2 workers; the
   ratios are against the baseline of the same run, and every engine's per-session results
   must be the baseline's.
3. **Agent sessions per second**: trivial ``ScriptedModel`` sessions (one Read, then an
   answer), a first and a second run on the same engine: locally (asyncio) and on the
   local Ray (actors created by the first run, reused by the second).
4. **Driver memory**: ``--memory-sessions`` (100,000) replays streamed into a run directory
   (``iter_sessions``, ``keep_results=False``, 2 worker processes, a consumer that keeps
   nothing): the driver's resident memory after each tenth (its growth from the first
   tenth to the end is what grows with the run), against holding every result
   (``run_sessions``) for a tenth as many.

    python benchmarks/bench_scale.py [--sessions 2000] [--memory-sessions 100000] [--agents 40] [--no-ray]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
import time
from pathlib import Path

from nbtoolsched import ScriptedModel
from nbtoolsched.scale import AgentTask, Policy, RayEngine, ReplayTask, iter_sessions, run_sessions, write_synthetic_transcripts
from nbtoolsched.scale._policy import SettingsSource
from nbtoolsched.scale._replay import cpu_ms_per_session

ROOT = Path(__file__).resolve().parent.parent
REAL = sorted(str(p) for p in (ROOT / "tests" / "fixtures" / "transcripts").glob("*.jsonl"))
POLICY = Policy(name="bench", allow=("Bash(git status)", "Bash(git diff:*)", "Bash(python -m pytest:*)"),
                deny=("Bash(rm:*)",), ask=("WebFetch",))
HOOKED = Policy(name="hooked", allow=POLICY.allow, deny=POLICY.deny, ask=POLICY.ask, settings=(SettingsSource(
    "userSettings", "hooks.json",
    {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "exit 0"}]}]}}),))
ROWS: list[tuple[str, str, str]] = []


def row(section: str, what: str, value: str) -> None:
    ROWS.append((section, what, value))
    print(f"  {what:<44} {value}")


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def replay_rate(label: str, tasks: list[ReplayTask], base: list[object] | None, base_s: float | None,
                **options: object) -> tuple[float, list[object]]:
    started = time.perf_counter()
    run = run_sessions(tasks, progress=False, **options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    failed = [r for r in run.results if not r.ok]
    assert not failed, failed[:3]
    values = [r.value for r in run.results]
    if base is not None:
        assert values == base, f"{label}: per-session results differ from the baseline's"
    ratio = f"  x{base_s / seconds:.2f} the baseline" if base_s else "  (baseline)"
    row("sessions/s", label, f"{len(tasks) / seconds:8.0f} sessions/s  {seconds:6.2f} s{ratio}")
    return seconds, values


def cpu_section(synthetic: list[str]) -> None:
    print("\n1. CPU per session (one event loop, this process)")
    row("cpu", f"real transcripts ({len(REAL)}), no hooks", f"{cpu_ms_per_session(REAL, POLICY, repeat=20):6.2f} ms"
        "  (target <= 10 ms)")
    row("cpu", f"real transcripts ({len(REAL)}), a command hook per call",
        f"{cpu_ms_per_session(REAL, HOOKED, repeat=3):6.2f} ms  (the hooks' own processes not counted)")
    row("cpu", f"synthetic transcripts ({len(synthetic[:200])}), no hooks",
        f"{cpu_ms_per_session(synthetic[:200], POLICY, repeat=2):6.2f} ms")


def rate_section(synthetic: list[str], engine: RayEngine | None) -> None:
    print(f"\n2. Sessions per second ({len(synthetic)} synthetic sessions)")
    tasks = [ReplayTask(p, POLICY) for p in synthetic]
    base_s, base = replay_rate("local, 1 worker (baseline)", tasks, None, None, workers=1)
    replay_rate("local, 2 processes", tasks, base, base_s, workers=2)
    if engine is not None:
        replay_rate("Ray (2 CPUs), 1 worker", tasks, base, base_s, engine=engine, workers=1)
        replay_rate("Ray (2 CPUs), 2 workers", tasks, base, base_s, engine=engine, workers=2)


def memory_section(folder: str, synthetic: list[str], sessions: int) -> None:
    print(f"\n4. Driver memory ({sessions} sessions streamed into a run directory, 2 processes)")
    tasks = [ReplayTask(synthetic[n % len(synthetic)], POLICY) for n in range(sessions)]
    before = rss_mib()
    marks: list[float] = []  # the driver's RSS after each tenth of the sessions came back
    started = time.perf_counter()
    with iter_sessions(tasks, workers=2, keep_results=False, run_dir=os.path.join(folder, "run"), progress=False) as stream:
        for n, _ in enumerate(stream, 1):  # the consumer keeps nothing, as a streaming user does
            if n % max(1, sessions // 10) == 0:
                marks.append(rss_mib())
    seconds = time.perf_counter() - started
    assert stream.summary.ok == sessions
    row("memory", "driver RSS before the run", f"{before:7.1f} MiB (the {sessions} tasks built)")
    row("memory", "driver RSS after each tenth", " ".join(f"{m:.0f}" for m in marks) + f" MiB  ({seconds:.0f} s)")
    growth = (marks[-1] - marks[0]) * 1024 * 1024 / (sessions * 0.9) if len(marks) > 1 else 0.0
    row("memory", "growth from the first tenth to the end", f"{growth:7.1f} bytes/session")
    kept_n = max(1, sessions // 10)
    before = rss_mib()
    kept = run_sessions(tasks[:kept_n], workers=2, progress=False)
    after = rss_mib()
    row("memory", f"holding every result instead ({kept_n} sessions)", f"{(after - before) * 1024 / kept_n:7.1f} KiB/session")
    del kept


def agent_tasks(folder: str, n: int, tag: str) -> list[AgentTask]:
    script = [[{"type": "tool_use", "name": "Read", "input": {"file_path": "README.md"}}], "done"]

    def seed(workdir: Path) -> None:
        (workdir / "README.md").write_text("# hello\n")

    return [AgentTask(functools.partial(ScriptedModel, script), "look", Policy(name="agents"),
                      workdir=os.path.join(folder, tag, f"s{i}"), setup=seed, name=f"{tag}{i}") for i in range(n)]


def agent_rate(label: str, tasks: list[AgentTask], **options: object) -> float:
    started = time.perf_counter()
    run = run_sessions(tasks, progress=False, **options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    assert all(r.ok for r in run.results), [r.error for r in run.results if not r.ok][:3]
    row("agents", label, f"{len(tasks) / seconds:8.1f} sessions/s  {seconds:6.2f} s")
    return seconds


def agent_section(folder: str, n: int, engine: RayEngine | None) -> None:
    print(f"\n3. Agent sessions ({n} trivial sessions: one Read, then an answer)")
    agent_rate("local (asyncio), first run", agent_tasks(folder, n, "l1"))
    agent_rate("local (asyncio), second run", agent_tasks(folder, n, "l2"))
    if engine is not None:
        agent_rate("Ray, first run (actors created)", agent_tasks(folder, n, "r1"), engine=engine)
        agent_rate("Ray, second run (actors reused)", agent_tasks(folder, n, "r2"), engine=engine)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000, help="synthetic sessions for the rates (default 2000)")
    parser.add_argument("--memory-sessions", type=int, default=100_000, help="sessions streamed for the memory row")
    parser.add_argument("--agents", type=int, default=40, help="agent sessions per run (default 40)")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; policy: {POLICY.describe()}")
    engine = None
    if not args.no_ray:
        started = time.perf_counter()
        engine = RayEngine(num_cpus=2).start()
        print(f"a local Ray with 2 CPUs started in {time.perf_counter() - started:.1f} s (not counted below)")
    try:
        with tempfile.TemporaryDirectory(prefix="nbtoolsched-bench-") as folder:
            synthetic = [str(p) for p in write_synthetic_transcripts(os.path.join(folder, "synthetic"), args.sessions, seed=7)]
            cpu_section(synthetic)
            rate_section(synthetic, engine)
            agent_section(folder, args.agents, engine)
            if engine is not None:
                engine.stop()
                engine = None
            memory_section(folder, synthetic, args.memory_sessions)
    finally:
        if engine is not None:
            engine.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(ROWS, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
