import xml.etree.ElementTree as ET
from pathlib import Path

import nbtoolsched as nts
from nbtoolsched._demo import run_demo
from nbtoolsched._events import event_to_dict
from nbtoolsched.scheduling._timeline import render_svg_timeline, render_text_timeline

from tests.spies import block


async def test_trace_records_every_call_and_round_trips_as_json_lines(scheduler: nts.Scheduler, tmp_path: Path) -> None:
    blocks = [block("Read", progress=2, duration=0.01), block("Edit"), block("Nope")]
    await scheduler.run(blocks)
    trace = scheduler.last_trace
    assert trace is not None
    kinds = [(e.kind, e.tool_use_id) for e in trace.events if hasattr(e, "tool_use_id")]
    for b in blocks:
        assert ("call_queued", b["id"]) in kinds and ("result_event", b["id"]) in kinds
    assert [e.batch for e in trace.of_kind("call_queued")] == [1, 2, 3]
    assert len(trace.of_kind("progress_event")) == 2
    finished_at = {e.tool_use_id: e.time for e in trace.of_kind("result_event")}
    started_at = {e.tool_use_id: e.time for e in trace.of_kind("call_started")}
    assert started_at[blocks[1]["id"]] >= finished_at[blocks[0]["id"]]  # monotonic times show the serial order
    path = tmp_path / "trace.jsonl"
    trace.write(path)
    again = nts.Trace.read(path)
    assert [event_to_dict(e) for e in again.events] == [event_to_dict(e) for e in trace.events]
    statuses = {s.tool_use_id: s.status for s in again.states()}
    assert statuses == {blocks[0]["id"]: "completed", blocks[1]["id"]: "completed", blocks[2]["id"]: "error"}


async def test_timelines_show_batches() -> None:
    lines: list[str] = []
    captured: list[nts.RunHandle] = []
    original = nts.Scheduler.submit

    def spy(self: nts.Scheduler, blocks: list, **kw: object) -> nts.RunHandle:
        handle = original(self, blocks, **kw)  # type: ignore[arg-type]
        captured.append(handle)
        return handle

    nts.Scheduler.submit = spy  # type: ignore[method-assign]
    try:
        results = await run_demo(out=lambda *parts: lines.append(" ".join(map(str, parts))))
    finally:
        nts.Scheduler.submit = original  # type: ignore[method-assign]
    assert [r.tool_use_id for r in results] == [f"toolu_0{i}" for i in range(1, 6)]
    assert not any(r.is_error for r in results)
    assert "debug': True" in results[4].text  # the second Read sees the Edit
    text = render_text_timeline(captured[0].trace)
    assert "-- batch 1 (safe, parallel)" in text and "-- batch 2 (unsafe, alone)" in text and "-- batch 3 (safe, parallel)" in text
    svg = render_svg_timeline(captured[0].trace, title="demo <batch>")
    root = ET.fromstring(svg)  # well-formed, escaped
    titles = [r.find("{http://www.w3.org/2000/svg}title") for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    shown = [t.text or "" for t in titles if t is not None]
    assert len([t for t in shown if "waiting for approval" not in t]) == 5  # a bar per call
    assert len([t for t in shown if "waiting for approval" in t]) == 1  # and the Edit's wait for the demo's policy
    assert any("started" in line for line in lines) and any("Timeline (" in line for line in lines)
