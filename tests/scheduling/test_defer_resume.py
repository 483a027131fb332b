"""Headless ``defer``: the run stops with serialisable pending approvals and resumes later."""

import json

import pytest

import nbtoolsched as nts
from nbtoolsched.permissions._approvals import ApprovalAnswer, ApprovalBroker
from nbtoolsched.permissions._engine import Permissions

from tests.spies import Recorder, SpyTool, block


@pytest.fixture
def spy_registry(recorder: Recorder) -> nts.ToolRegistry:
    """User-style tools, not look-alikes of the built-ins: Lookup is read-only (allowed),
    Deploy changes things (asks, so a headless ``defer`` defers it)."""
    return nts.ToolRegistry([SpyTool("Lookup", recorder, safe=True), SpyTool("Deploy", recorder, safe=False)])


async def test_deferred_run_stops_and_resumes_without_rerunning_finished_calls(spy_registry: nts.ToolRegistry, recorder: Recorder, tmp_path) -> None:
    gate = Permissions(approver=ApprovalBroker(policy="defer"), cwd=tmp_path)
    sched = nts.Scheduler(spy_registry, permissions=gate, cwd=tmp_path)
    blocks = [block("Lookup", output="r1"), block("Deploy", output="e1"), block("Lookup", output="r2"), block("Deploy", output="e2")]
    handle = sched.submit(blocks)
    await handle
    statuses = [o.status for o in handle.outcomes]  # type: ignore[union-attr]
    assert statuses == ["completed", "deferred", "deferred", "deferred"]
    assert [p["tool_use_id"] for p in handle.pending_approvals] == [blocks[1]["id"]]
    saved = json.loads(json.dumps(handle.state.to_dict()))  # survives a trip through JSON
    ran_before = set(recorder.intervals)

    result = await sched.resume(saved, {blocks[1]["id"]: ApprovalAnswer.allow(), blocks[3]["id"]: ApprovalAnswer.deny(feedback="not now")})
    assert [o.tool_use_id for o in result.outcomes] == [b["id"] for b in blocks]
    assert [o.result.content for o in result.outcomes[:3]] == ["r1", "e1", "r2"]
    assert result.outcomes[3].status == "denied" and "not now" in result.outcomes[3].result.content
    assert blocks[0]["id"] in ran_before and set(recorder.intervals) - ran_before == {blocks[1]["id"], blocks[2]["id"]}
    assert result.state is None  # nothing left waiting


async def test_resume_without_an_answer_defers_again(spy_registry: nts.ToolRegistry, tmp_path) -> None:
    gate = Permissions(approver=ApprovalBroker(policy="defer"), cwd=tmp_path)
    sched = nts.Scheduler(spy_registry, permissions=gate, cwd=tmp_path)
    first = await sched.run_outcomes([block("Deploy")])
    again = await sched.resume(first.state, {})
    assert again.outcomes[0].status == "deferred" and again.state is not None
