"""What one Bash permission decision costs: Python calls and time, against an older commit in the same run.

Every command of tests/shell/corpus.py (735 real-world command lines) is judged by
``Permissions.evaluate`` under bench_prompts' project settings (14 allow rules, two Read
denies), each with the shell layer's caches emptied first (a command seen for the first
time: what an agent's new command costs), then once more with the caches kept. Counted:
every Python function call made while the decision runs (``sys.setprofile``), and how many
of them run in ``permissions/`` and in ``shell/``; timed: the same decisions without the profiler. ``--baseline REV`` runs the
same measurement on another commit (a temporary git worktree) in a subprocess of this run
and prints the ratios.

    python benchmarks/bench_decision.py [--baseline REV] [--sandbox off|on]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _clear_caches() -> None:
    """Empty the shell layer's caches (parses, invocations, parts: whatever is keyed by a
    command's text), as for a command never seen before; the compiled rules stay."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("nbtoolsched.shell") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper):  # noqa: SLF001 - the documented cache type
                value.cache_clear()


def measure(root: Path, sandbox: str) -> dict[str, Any]:
    """Run in the checkout at ``root`` (imported from there): calls and times per decision."""
    os.environ["NBTOOLSCHED_SANDBOX"] = sandbox
    sys.path.insert(0, str(root))
    import nbtoolsched as nts
    from nbtoolsched.tools import BashTool

    sys.path.insert(0, str(HERE))
    from bench_prompts import SETTINGS, project

    from tests.shell.corpus import CORPUS

    package = str(Path(nts.__file__).resolve().parent)
    calls: list[int] = []
    warm: list[int] = []
    in_permissions: list[int] = []
    in_shell: list[int] = []
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        proj = project(Path(tmp))
        perms = nts.Permissions(cwd=proj, **SETTINGS)  # type: ignore[arg-type]
        bash = BashTool()

        async def judge_all() -> None:
            await perms.evaluate(bash, {"command": "true"})  # warm up: imports, the sandbox probe
            for case in CORPUS:
                counts = {"all": 0, "permissions": 0, "shell": 0}

                def profile(frame: Any, event: str, arg: Any) -> None:
                    if event != "call":
                        return
                    counts["all"] += 1
                    filename = frame.f_code.co_filename
                    if filename.startswith(package):
                        part = filename[len(package) + 1:].split(os.sep)[0]
                        if part in counts:
                            counts[part] += 1

                _clear_caches()
                for rounds in (calls, warm):  # a command seen for the first time, then again
                    counts.update(all=0, permissions=0, shell=0)
                    sys.setprofile(profile)
                    try:
                        await perms.evaluate(bash, {"command": case.command})
                    finally:
                        sys.setprofile(None)
                    rounds.append(counts["all"])
                    if rounds is calls:
                        in_permissions.append(counts["permissions"])
                        in_shell.append(counts["shell"])
                _clear_caches()
                started = time.perf_counter()
                await perms.evaluate(bash, {"command": case.command})
                seconds.append(time.perf_counter() - started)

        asyncio.run(judge_all())
    return {
        "commands": len(calls), "warm_mean": statistics.fmean(warm),
        "calls_mean": statistics.fmean(calls), "calls_median": statistics.median(calls), "calls_max": max(calls),
        "permissions_mean": statistics.fmean(in_permissions), "shell_mean": statistics.fmean(in_shell),
        "ms_median": statistics.median(seconds) * 1000, "ms_mean": statistics.fmean(seconds) * 1000,
    }


def _in_subprocess(root: Path, sandbox: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--measure", str(root), "--sandbox", sandbox],
                         capture_output=True, text=True, check=True, cwd=root)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a commit to compare with (its own worktree, same run)")
    parser.add_argument("--sandbox", default="off", choices=("off", "on"), help="NBTOOLSCHED_SANDBOX for the decisions")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.sandbox)))
        return 0
    root = HERE.parent
    rows = [("this checkout", _in_subprocess(root, args.sandbox))]
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "baseline"
            subprocess.run(["git", "-C", str(root), "worktree", "add", "-q", "--detach", str(tree), args.baseline], check=True)
            try:
                rows.insert(0, (f"baseline {args.baseline}", _in_subprocess(tree, args.sandbox)))
            finally:
                subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=False)
    first = rows[0][1]
    print(f"{first['commands']} commands of the corpus, one Bash decision each, caches emptied, "
          f"NBTOOLSCHED_SANDBOX={args.sandbox}")
    print()
    print("| checkout | Python calls per new command (mean / median / max) | in permissions/ | in shell/ "
          "| the same command again | time (median / mean) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, row in rows:
        ratio = "" if row is first else f" ({row['calls_mean'] / first['calls_mean']:.2f}x)"
        print(f"| {label} | {row['calls_mean']:.0f} / {row['calls_median']:.0f} / {row['calls_max']}{ratio} | "
              f"{row['permissions_mean']:.0f} | {row['shell_mean']:.0f} | {row['warm_mean']:.0f} | "
              f"{row['ms_median']:.2f} / {row['ms_mean']:.2f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
