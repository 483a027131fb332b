"""Memory and time of commands with huge output, through ``Scheduler.run``.

    python benchmarks/bench_output.py

Each case runs the real Bash tool under ``Permissions(mode="default")`` with one allow
rule, ``Bash(yes:*)`` (``seq``, ``head`` and ``tr`` are read-only and need none; the 100
MB line comes from ``yes`` because reading ``/dev/zero`` is outside the working
directory, which default permissions refuse), trace on (the default) or off, in a fresh
interpreter: once for wall and CPU time and peak RSS, once more under
tracemalloc for the peak of Python allocations. Cases: one line (the interpreter's own
footprint), 2 M lines (``seq``), 200 K lines (for the linearity ratio) and one 100 MB
line.

Targets: memory flat in the number of lines (the 2 M-line peak close to the 200 K-line
one), time linear or better (2 M / 200 K time ratio at most 10).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbtoolsched as nts  # noqa: E402
from nbtoolsched import ToolRegistry  # noqa: E402
from nbtoolsched.tools import BashTool  # noqa: E402

COMMANDS = {
    "1 line": "echo baseline",
    "2M lines": "seq 1 2000000",
    "200K lines": "seq 1 200000",
    "100MB line": "yes a | head -c 200000000 | tr -d '\\n'",
}
CASES = [(name, trace) for name in COMMANDS for trace in (True, False) if trace or name in ("2M lines", "100MB line")]


async def run_once(command: str, trace: bool, scratch: Path) -> dict[str, object]:
    sched = nts.Scheduler(
        ToolRegistry([BashTool()]), permissions=nts.Permissions(mode="default", cwd=scratch, allow=["Bash(yes:*)"]),
        cwd=scratch, session_dir=scratch / "session", record_trace=trace,
    )
    [result] = await sched.run([{"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": command}}])
    if result.is_error:
        raise SystemExit(f"{command!r} failed: {result.text[:300]}")
    return {"trace_events": len(sched.last_trace) if sched.last_trace is not None else 0, "result_chars": len(result.text)}


def measure(name: str, trace: bool, traced_memory: bool) -> dict[str, object]:
    """One case in this (fresh) interpreter."""
    with tempfile.TemporaryDirectory() as scratch:
        if traced_memory:
            tracemalloc.start()
        wall, cpu = time.perf_counter(), time.process_time()
        info = asyncio.run(run_once(COMMANDS[name], trace, Path(scratch)))
        info["wall_s"] = time.perf_counter() - wall
        info["cpu_s"] = time.process_time() - cpu
        if traced_memory:
            info["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
        info["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return info


def in_child(name: str, trace: bool, traced_memory: bool) -> dict[str, object]:
    args = [sys.executable, __file__, "--case", name, "--trace", str(int(trace)), "--traced-memory", str(int(traced_memory))]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--trace", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--traced-memory", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(measure(args.case, bool(args.trace), bool(args.traced_memory))))
        return
    print(f"{'case':12} {'trace':5} {'wall s':>7} {'cpu s':>6} {'max RSS MB':>10} {'py peak MB':>10} {'trace ev':>8} {'result':>7}")
    rows: dict[tuple[str, bool], dict[str, object]] = {}
    for name, trace in CASES:
        timed = in_child(name, trace, traced_memory=False)
        timed["traced_peak_mb"] = in_child(name, trace, traced_memory=True)["traced_peak_mb"]
        rows[(name, trace)] = timed
        print(f"{name:12} {'on' if trace else 'off':5} {timed['wall_s']:7.2f} {timed['cpu_s']:6.2f} {timed['max_rss_mb']:10.1f}"
              f" {timed['traced_peak_mb']:10.2f} {timed['trace_events']:8} {timed['result_chars']:7}")
    big, small = rows[("2M lines", True)], rows[("200K lines", True)]
    time_ratio = float(big["cpu_s"]) / max(float(small["cpu_s"]), 1e-9)  # type: ignore[arg-type]
    memory_ratio = float(big["traced_peak_mb"]) / max(float(small["traced_peak_mb"]), 1e-9)  # type: ignore[arg-type]
    print(f"\n2M / 200K lines, trace on: CPU time x{time_ratio:.1f} (linear is x10), Python peak memory x{memory_ratio:.2f} (flat is x1)")
    verdict = "ok" if time_ratio <= 10 and memory_ratio <= 2 else "MISSED"
    print(f"targets (time ratio <= 10, memory ratio <= 2): {verdict}")


if __name__ == "__main__":
    main()
