"""Widget traffic and kernel loop lag under a progress storm, in a real kernel.

10 concurrent calls each report 1,000 progress events a second for 5 seconds (50,000
events). A real ipykernel runs ``%%toolcall`` with them; this script is the frontend
(jupyter_client) and counts every widget update message the kernel sends, per panel.
Inside the kernel a sampler measures how late a 10 ms sleep wakes up (the loop's lag).

Targets: at most 15 widget messages per second per panel; loop lag p99 at most 50 ms.

    python benchmarks/bench_widgets.py [--calls 10] [--rate 1000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import queue
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

SETUP = r'''
%load_ext nbtoolsched
import asyncio, time, json
import nbtoolsched as nts

@nts.tool(read_only=True)
async def storm(seconds: float, rate: int, ctx: nts.ToolContext) -> str:
    """Report `rate` progress events a second for `seconds` seconds."""
    start, sent, tick, total = time.monotonic(), 0, 0.01, int(seconds * rate)
    while sent < total:
        due = min(total, int((time.monotonic() - start) * rate))
        while sent < due:
            sent += 1
            ctx.progress({"line": f"event {sent}"})
        await asyncio.sleep(tick)
    return f"{sent} events"

lags = []
_stop = asyncio.Event()
async def _sample():
    while not _stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - t - 0.01)
'''

REPORT = r'''
await run
_stop.set()
from nbtoolsched.notebook import get_session
def _ids(w):
    out = [w.model_id]
    for child in getattr(w, "children", ()):
        out += _ids(child)
    return out
p = run.panel
ids = _ids(p) + [t.model_id for t in p._tables] + [p.preview.model_id, p.timeline.model_id]
print(json.dumps({"lags": lags, "ids": sorted(set(ids)), "events": sum(s.progress_count for s in run.states.values()),
                  "renders": get_session().pump.renders, "results": [r.text for r in run.results]}))
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rate", type=int, default=1000, help="progress events per second per call")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    from jupyter_client.manager import start_new_kernel

    work = Path(tempfile.mkdtemp(prefix="nbtoolsched-bench-"))
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(work / "claude")}
    env.pop("NBTOOLSCHED_APPROVAL", None)
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(work), env=env, startup_timeout=90)
    try:
        updates: Counter[str] = Counter()
        run_cell(client, SETUP, updates)
        run_cell(client, "_sampler = asyncio.ensure_future(_sample())", updates)
        calls = "\n".join(f"- storm: {{seconds: {args.seconds}, rate: {args.rate}}}" for _ in range(args.calls))
        started = time.monotonic()
        run_cell(client, "%%toolcall --name run\n" + calls, updates)
        out = run_cell(client, REPORT, updates, timeout=args.seconds * 4 + 60)
        wall = time.monotonic() - started
        report = json.loads(out.strip().splitlines()[-1])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        shutil.rmtree(work, ignore_errors=True)
    panel_msgs = sum(updates[i] for i in report["ids"])
    lags = sorted(report["lags"])
    p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] * 1000  # noqa: E731
    per_second = panel_msgs / max(args.seconds, wall - 1.0)
    rows = [
        ("calls x events/s x seconds", f"{args.calls} x {args.rate} x {args.seconds:g}", ""),
        ("progress events delivered", f"{report['events']:,}", f"expected {int(args.calls * args.rate * args.seconds):,}"),
        ("widget messages from the panel", f"{panel_msgs}", f"over {wall:.1f} s wall"),
        ("widget messages / s / panel", f"{per_second:.1f}", "target <= 15"),
        ("pump renders (all views)", f"{report['renders']}", ""),
        ("kernel loop lag p50", f"{p(0.50):.1f} ms", ""),
        ("kernel loop lag p99", f"{p(0.99):.1f} ms", "target <= 50 ms"),
        ("kernel loop lag max", f"{lags[-1] * 1000:.1f} ms", f"{len(lags)} samples"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':{width}}  {'value':>22}  note")
    for name, value, note in rows:
        print(f"{name:{width}}  {value:>22}  {note}")
    ok = per_second <= 15 and p(0.99) <= 50
    print("PASS" if ok else "MISS: a target was not met")
    return 0 if ok else 1


def run_cell(client, code: str, updates: Counter[str], timeout: float = 60) -> str:
    """Execute ``code``; count every widget update on IOPub (any parent) while waiting."""
    msg_id = client.execute(code)
    stdout, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = client.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_msg" and content.get("data", {}).get("method") == "update":
            updates[content["comm_id"]] += 1
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if kind == "stream" and content["name"] == "stdout":
            stdout += content["text"]
        elif kind == "error" or (kind == "stream" and content["name"] == "stderr" and "Error" in content["text"]):
            raise SystemExit(f"the kernel reported an error:\n{content}")
        elif kind == "status" and content["execution_state"] == "idle":
            return stdout
    raise SystemExit(f"timed out after {timeout} s running:\n{code}")


if __name__ == "__main__":
    sys.exit(main())
