"""The approval broker, answers, headless policies, and how answers become decisions."""

from __future__ import annotations

import asyncio
import threading

import pytest

from nbtoolsched.permissions._approvals import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from nbtoolsched.permissions._base import ApprovalDeferred
from nbtoolsched.permissions._engine import Permissions

from .toolbox import TOOLS, request_for


def req(tool_use_id: str) -> ApprovalRequest:
    return ApprovalRequest(tool_use_id, "Bash", {"command": f"echo {tool_use_id}"}, "needs approval", ("Bash(echo:*)",))


async def wait_pending(broker: ApprovalBroker, n: int) -> None:
    while len(broker.pending) < n:
        await asyncio.sleep(0)


async def test_several_pending_answered_out_of_order():
    broker = ApprovalBroker("interactive")
    tasks = {i: asyncio.create_task(broker(req(i))) for i in ("a", "b", "c")}
    await wait_pending(broker, 3)
    assert list(broker.pending) == ["a", "b", "c"]
    broker.answer("c", ApprovalAnswer.deny("not c"))
    broker.answer("a", ApprovalAnswer.allow())
    assert list(broker.pending) == ["b"]
    assert not tasks["b"].done()
    broker.answer("b", ApprovalAnswer.allow_always())
    results = {k: await t for k, t in tasks.items()}
    assert results["a"].kind == "allow" and results["b"].kind == "allow_always"
    assert results["c"].kind == "deny" and results["c"].feedback == "not c"


async def test_answer_all_and_a_chosen_set():
    broker = ApprovalBroker("interactive")
    tasks = [asyncio.create_task(broker(req(str(i)))) for i in range(5)]
    await wait_pending(broker, 5)
    assert broker.answer_many(["1", "3"], ApprovalAnswer.deny()) == ["1", "3"]
    with pytest.raises(KeyError):
        broker.answer_many(["0", "nope"], ApprovalAnswer.allow())
    assert len(broker.pending) == 3  # nothing was answered by the failed call
    assert sorted(broker.answer_all(ApprovalAnswer.allow())) == ["0", "2", "4"]
    kinds = [(await t).kind for t in tasks]
    assert kinds == ["allow", "deny", "allow", "deny", "allow"]


async def test_answers_from_another_thread():
    broker = ApprovalBroker("interactive")
    tasks = [asyncio.create_task(broker(req(i))) for i in ("x", "y")]
    await wait_pending(broker, 2)
    results = {}

    def click():
        results["y"] = broker.answer_threadsafe("y", ApprovalAnswer.allow()).result(timeout=30)
        results["x"] = broker.answer_threadsafe(None, ApprovalAnswer.deny()).result(timeout=30)

    thread = threading.Thread(target=click)
    thread.start()
    answers = await asyncio.gather(*tasks)
    await asyncio.to_thread(thread.join)
    assert [a.kind for a in answers] == ["deny", "allow"]
    assert results == {"y": ["y"], "x": ["x"]}


async def test_threadsafe_unknown_id_reports_the_error():
    broker = ApprovalBroker("interactive")
    task = asyncio.create_task(broker(req("a")))
    await wait_pending(broker, 1)
    future = broker.answer_threadsafe("zzz", ApprovalAnswer.allow())
    await asyncio.sleep(0)
    with pytest.raises(KeyError):
        future.result(timeout=30)
    broker.answer("a", ApprovalAnswer.allow())
    await task


async def test_observers_see_every_change_and_can_unsubscribe():
    broker = ApprovalBroker("interactive")
    events = []
    unsubscribe = broker.subscribe(lambda e: events.append((e.kind, e.request.tool_use_id, e.pending)))
    broker.subscribe(lambda e: 1 / 0)  # a broken observer does not break the broker
    task = asyncio.create_task(broker(req("a")))
    await wait_pending(broker, 1)
    broker.answer("a", ApprovalAnswer.allow())
    await task
    cancelled = asyncio.create_task(broker(req("b")))
    await wait_pending(broker, 1)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    unsubscribe()
    assert events == [("added", "a", 1), ("answered", "a", 0), ("added", "b", 1), ("cancelled", "b", 0)]
    assert broker.pending == {}


async def test_headless_policies(monkeypatch):
    assert (await ApprovalBroker("allow")(req("a"))).kind == "allow"
    assert (await ApprovalBroker("deny")(req("a"))).by_policy
    broker = ApprovalBroker("defer")
    with pytest.raises(ApprovalDeferred) as err:
        await broker(req("a"))
    assert err.value.request.tool_use_id == "a"
    assert broker.snapshot() == [req("a").to_dict()]
    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "defer")
    assert ApprovalBroker().policy == "defer"
    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "maybe")
    with pytest.raises(ValueError, match="NBTOOLSCHED_APPROVAL"):
        ApprovalBroker()


async def test_defer_then_resume_with_serialised_answers(tmp_path):
    import json

    perms = Permissions(cwd=tmp_path, approver=ApprovalBroker("defer"))
    request = request_for(TOOLS["Deploy"], {}, str(tmp_path), tool_use_id="toolu_9")
    with pytest.raises(ApprovalDeferred) as err:
        await perms.decide(request)
    saved = json.dumps({"pending": [err.value.request.to_dict()]})
    pending = json.loads(saved)["pending"]
    assert ApprovalRequest.from_dict(pending[0]).tool_use_id == "toolu_9"
    answers = {p["tool_use_id"]: ApprovalAnswer.allow().to_dict() for p in pending}
    resumed = Permissions(cwd=tmp_path, approver=ApprovalBroker("defer", answers=answers))
    assert (await resumed.decide(request)).behavior == "allow"


async def test_rejection_without_feedback_ends_the_turn(tmp_path):
    perms = Permissions(cwd=tmp_path, approver=ApprovalBroker("interactive"))
    task = asyncio.create_task(perms.decide(request_for(TOOLS["Deploy"], {}, str(tmp_path))))
    await wait_pending(perms.approver, 1)
    perms.approver.answer("t1", ApprovalAnswer.deny())
    decision = await task
    assert decision.behavior == "deny" and decision.abort_turn and decision.reason.kind == "user"


async def test_rejection_with_feedback_goes_to_the_model(tmp_path):
    broker = ApprovalBroker("interactive")
    perms = Permissions(cwd=tmp_path, approver=broker)
    task = asyncio.create_task(perms.decide(request_for(TOOLS["Deploy"], {}, str(tmp_path))))
    await wait_pending(broker, 1)
    broker.answer("t1", ApprovalAnswer.deny("use the staging target"))
    decision = await task
    assert decision.behavior == "deny" and not decision.abort_turn
    assert "use the staging target" in decision.message


async def test_headless_deny_does_not_end_the_turn(tmp_path):
    decision = await Permissions(cwd=tmp_path, approver=ApprovalBroker("deny")).decide(request_for(TOOLS["Deploy"], {}, str(tmp_path)))
    assert decision.behavior == "deny" and not decision.abort_turn and decision.reason.kind == "policy"


async def test_default_approver_is_headless_deny(tmp_path, monkeypatch):
    monkeypatch.delenv("NBTOOLSCHED_APPROVAL", raising=False)
    decision = await Permissions(cwd=tmp_path).decide(request_for(TOOLS["Deploy"], {}, str(tmp_path)))
    assert decision.behavior == "deny"
    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "allow")
    assert (await Permissions(cwd=tmp_path).decide(request_for(TOOLS["Deploy"], {}, str(tmp_path)))).behavior == "allow"


async def test_allow_always_adds_a_session_rule(tmp_path):
    broker = ApprovalBroker("interactive")
    perms = Permissions(cwd=tmp_path, approver=broker)
    task = asyncio.create_task(perms.decide(request_for(TOOLS["Bash"], {"command": "npm test -- -k x"}, str(tmp_path))))
    await wait_pending(broker, 1)
    assert broker.pending["t1"].suggested_rules == ("Bash(npm test -- -k x)",)  # the command itself
    assert broker.pending["t1"].alternatives == ("Bash(npm test:*)", "Bash")  # then its prefix, then the tool
    broker.answer("t1", ApprovalAnswer.allow_always(["Bash(npm test:*)"]))
    decision = await task
    assert decision.behavior == "allow" and decision.reason.detail == "approved by the user; saved Bash(npm test:*) for this session"
    again = await perms.decide(request_for(TOOLS["Bash"], {"command": "npm test"}, str(tmp_path), tool_use_id="t2"))
    assert again.behavior == "allow" and again.reason.kind == "rule" and again.reason.source == "session"
    assert broker.pending == {}
    assert not (tmp_path / ".claude").exists()  # a session rule touches no file


async def test_allow_with_feedback_and_edited_input(tmp_path):
    perms = Permissions(cwd=tmp_path, approver=ApprovalBroker("allow", answers={"t1": ApprovalAnswer.allow("go ahead", {"command": "ls -la"})}))
    decision = await perms.decide(request_for(TOOLS["Bash"], {"command": "ls -la; npm i"}, str(tmp_path)))
    assert decision.feedback == "go ahead" and decision.updated_input == {"command": "ls -la"}


async def test_request_approver_overrides_the_gates(tmp_path):
    perms = Permissions(cwd=tmp_path, approver=ApprovalBroker("deny"))
    request = request_for(TOOLS["Deploy"], {}, str(tmp_path))
    request.approver = ApprovalBroker("allow")
    assert (await perms.decide(request)).behavior == "allow"


async def test_a_crashing_approver_rejects_and_stops_the_turn(tmp_path):
    async def broken(request):
        raise RuntimeError("widget vanished")

    decision = await Permissions(cwd=tmp_path, approver=broken).decide(request_for(TOOLS["Deploy"], {}, str(tmp_path)))
    assert decision.behavior == "deny" and decision.abort_turn and "widget vanished" in decision.message


# -- "always allow": narrow rules, and waiting calls the new rule covers ------------------------
async def _until(predicate, what: str):
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


async def test_always_allow_offers_narrow_rules_for_real_tools(tmp_path):
    import nbtoolsched as nts

    (tmp_path / "src").mkdir()
    broker = ApprovalBroker("interactive")
    perms = Permissions(cwd=tmp_path, approver=broker)
    sched = nts.Scheduler(nts.default_registry(tmp_path), permissions=perms, cwd=tmp_path)
    run = sched.submit([
        {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "src/util.py", "content": "x = 1\n"}},
        {"type": "tool_use", "id": "w2", "name": "Write", "input": {"file_path": "notes.md", "content": "hi\n"}},
        {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "git log --oneline -3"}},
    ])
    await _until(lambda: "w1" in broker.pending, "the first Write to ask")
    asked = broker.pending["w1"]
    assert asked.suggested_rules == ("Edit(src/util.py)",)  # the file itself
    assert asked.alternatives == ("Edit(src/**)", "Edit")  # then its folder, then every edit
    broker.answer("w1", ApprovalAnswer.allow())
    await _until(lambda: "w2" in broker.pending, "the second Write to ask")
    # A top-level file, anchored: Edit(notes.md) would match a notes.md in every folder.
    assert broker.pending["w2"].suggested_rules == ("Edit(/notes.md)",)
    assert broker.pending["w2"].alternatives == ("Edit",)
    broker.answer("w2", ApprovalAnswer.deny("not now"))
    await run
    assert not (tmp_path / "notes.md").exists()


async def test_always_allow_releases_the_waiting_calls_its_rule_covers(tmp_path):
    import nbtoolsched as nts

    broker = ApprovalBroker("interactive")
    perms = Permissions(cwd=tmp_path, approver=broker)
    sched = nts.Scheduler(nts.default_registry(tmp_path), permissions=perms, cwd=tmp_path)

    def bash(key: str, command: str):
        return sched.submit([{"type": "tool_use", "id": key, "name": "Bash", "input": {"command": command}}])

    runs = [bash("t1", "touch one.txt"), bash("t2", "touch two.txt"), bash("t3", "mkdir three")]
    await _until(lambda: len(broker.pending) == 3, "three calls waiting at once")
    assert broker.pending["t1"].suggested_rules == ("Bash(touch one.txt)",)
    assert broker.pending["t1"].alternatives == ("Bash(touch:*)", "Bash")
    broker.answer("t1", ApprovalAnswer.allow_always(["Bash(touch:*)"]))  # the person picks the prefix ...
    first, second = await runs[0], await runs[1]  # ... which also covers the waiting t2
    assert not first[0].is_error and not second[0].is_error
    assert (tmp_path / "one.txt").exists() and (tmp_path / "two.txt").exists()
    assert list(broker.pending) == ["t3"]  # mkdir is not covered: still waiting for a person
    assert "t2" not in perms._waiting and "t3" in perms._waiting
    explained = runs[1].outcomes[0]
    assert explained.status == "completed"
    broker.answer("t3", ApprovalAnswer.deny())
    await runs[2]
    assert not (tmp_path / "three").exists()
