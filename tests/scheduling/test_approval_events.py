"""A wait for a person shows up as ApprovalAsked / ApprovalAnswered, named like the call.

One traced approver serves a whole run (not one per call), so it finds the call from the
request: these check that every way to run still names the right call, tool and batch,
as CallQueued and ResultEvent name them (a model that calls a tool by an old alias
included), and that a listener who joins mid-run sees the waits that come after.
"""

from __future__ import annotations

from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched._events import RunEvents


@nts.tool(read_only=True)
async def look(x: int = 0) -> str:
    """Read-only: never asks."""
    return "looked"


@nts.tool(aliases=("old_change",))
async def change(x: int = 0) -> str:
    """Not read-only: asks in default mode."""
    return f"changed {x}"


BLOCKS = [
    {"type": "tool_use", "id": "a", "name": "look", "input": {}},
    {"type": "tool_use", "id": "b", "name": "change", "input": {"x": 1}},
    {"type": "tool_use", "id": "c", "name": "look", "input": {}},
    {"type": "tool_use", "id": "d", "name": "old_change", "input": {"x": 2}},  # by its old name
]
ASKING = {"b", "d"}


async def allow(request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
    return nts.ApprovalAnswer("allow")


def scheduler(tmp_path: Any, approver: Any = allow) -> nts.Scheduler:
    perms = nts.Permissions(cwd=tmp_path, approver=approver)
    return nts.Scheduler(nts.ToolRegistry([look, change]), permissions=perms)


def check(events: list[Any], asking: set[str] = ASKING) -> None:
    """Every approval event names its call as the call's own events do."""
    named = {e.tool_use_id: (e.tool_name, e.batch) for e in events if isinstance(e, (nts.events.CallQueued, nts.events.ResultEvent))}
    approvals = [e for e in events if isinstance(e, (nts.events.ApprovalAsked, nts.events.ApprovalAnswered))]
    assert {e.tool_use_id for e in approvals} == asking
    for event in approvals:
        assert (event.tool_name, event.batch) == named[event.tool_use_id], event


@pytest.mark.parametrize("way", ["run", "submit", "stream", "approver override"])
async def test_approval_events_name_their_call(tmp_path, way):
    sched = scheduler(tmp_path)
    seen: list[Any] = []
    sched.events.subscribe(seen.append)
    if way == "run":
        await sched.run(BLOCKS)
    elif way == "submit":
        handle = sched.submit(BLOCKS)
        await handle
        assert {k: s.asked_at is not None for k, s in handle.states.items()} == {k: k in ASKING for k in "abcd"}
    elif way == "stream":
        [e async for e in sched.stream(BLOCKS)]
    else:
        await sched.run(BLOCKS, approver=allow)
    check(seen)


async def test_a_listener_that_joins_mid_run_sees_the_waits_after(tmp_path):
    sched = scheduler(tmp_path)
    events = RunEvents()
    seen: list[Any] = []
    async with sched.streaming_executor(events=events) as ex:
        ex.add_tool(BLOCKS[0])
        events.subscribe(seen.append)  # nobody listened when the run started
        for block in BLOCKS[1:]:
            ex.add_tool(block)
    check(seen)


async def test_a_resumed_run_names_its_calls(tmp_path):
    sched = scheduler(tmp_path, nts.ApprovalBroker(policy="defer"))
    first = await sched.run_outcomes(BLOCKS)
    assert [p["tool_use_id"] for p in first.state.pending] == ["b"]
    seen: list[Any] = []
    sched.events.subscribe(seen.append)
    await sched.resume(first.state, {"b": {"kind": "allow"}})
    check(seen)  # b answered from the saved answer, d asked (and deferred again)


async def test_a_custom_gate_may_ask_its_approver_with_its_own_question(tmp_path):
    """The run's approver wrapper reads the call from the request when it can; a gate that
    asks with something else (here a string) still reaches the approver, untraced."""
    asked: list[Any] = []

    async def approver(question: Any) -> str:
        asked.append(question)
        return "yes"

    class AskingGate:
        async def decide(self, request: Any) -> nts.Decision:
            answer = await request.approver(f"may {request.tool.name} run?")
            return nts.Decision.allow() if answer == "yes" else nts.Decision.deny("no")

        def hides(self, tool: Any) -> bool:
            return False

    sched = nts.Scheduler(nts.ToolRegistry([look, change]), permissions=AskingGate(), approver=approver)
    seen: list[Any] = []
    result = await sched.run_outcomes(BLOCKS[:2], events=RunEvents([seen.append]))
    assert [o.status for o in result.outcomes] == ["completed", "completed"]
    assert asked == ["may look run?", "may change run?"]
    assert not any(isinstance(e, nts.events.ApprovalAsked) for e in seen)
