"""A run's approver: resolved once (run override, scheduler, permissions, headless policy)
and wrapped once, on every way to run."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
import nbtoolsched.scheduling._scheduler as scheduler_module
from nbtoolsched.agent._loop import Agent
from nbtoolsched.models import ScriptedModel, text, tool_use

_ids = itertools.count()


@nts.tool()
async def deploy(target: str = "prod") -> str:
    """Deploy (not read-only, and no rule allows it: every call asks)."""
    return f"deployed {target}"


def use(**input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_ask_{next(_ids):04d}", "name": "deploy", "input": input}


class Person:
    """An approver that says yes and remembers who asked it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[str] = []

    async def __call__(self, request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
        self.asked.append(request.tool_use_id)
        return nts.ApprovalAnswer.allow()


class Watching(nts.Permissions):
    """Permissions that keep the approver each request brought."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.brought: list[Any] = []

    async def decide(self, request: Any) -> nts.Decision:
        self.brought.append(request.approver)
        return await super().decide(request)


@pytest.fixture
def registry() -> nts.ToolRegistry:
    return nts.ToolRegistry([deploy])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every call of the one resolution function, with what it was given."""
    calls: list[tuple[Any, ...]] = []
    real = scheduler_module.resolve_approver

    def counting(*candidates: Any) -> Any:
        calls.append(candidates)
        return real(*candidates)

    monkeypatch.setattr(scheduler_module, "resolve_approver", counting)
    return calls


async def test_each_level_overrides_the_next(registry: nts.ToolRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NBTOOLSCHED_APPROVAL", raising=False)
    run_level, scheduler_level, permissions_level = Person("run"), Person("scheduler"), Person("permissions")
    perms = nts.Permissions(cwd=tmp_path, approver=permissions_level)
    sched = nts.Scheduler(registry, permissions=perms, approver=scheduler_level, cwd=tmp_path)

    await sched.run([use()], approver=run_level)
    assert (len(run_level.asked), len(scheduler_level.asked), len(permissions_level.asked)) == (1, 0, 0)
    await sched.run([use()])
    assert (len(run_level.asked), len(scheduler_level.asked), len(permissions_level.asked)) == (1, 1, 0)

    plain = nts.Scheduler(registry, permissions=perms, cwd=tmp_path)
    [allowed] = await plain.run([use()])
    assert not allowed.is_error and len(permissions_level.asked) == 1
    later = Person("later")
    perms.approver = later  # read when a run starts, not copied when the scheduler was made
    await plain.run([use()])
    assert len(later.asked) == 1 and len(permissions_level.asked) == 1

    perms.approver = None  # nobody named: the headless policy answers
    [denied] = await plain.run([use()])
    assert denied.is_error and "headless" in denied.text
    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "allow")
    [by_policy] = await plain.run([use()])
    assert not by_policy.is_error and by_policy.text == "deployed prod"


async def test_a_run_resolves_its_approver_once(registry: nts.ToolRegistry, tmp_path: Path, counted: list[tuple[Any, ...]]) -> None:
    person = Person("scheduler")
    sched = nts.Scheduler(registry, permissions=nts.Permissions(cwd=tmp_path), approver=person, cwd=tmp_path)
    blocks = [use(target=t) for t in ("a", "b", "c")]

    await sched.run(blocks)
    assert len(counted) == 1 and len(person.asked) == 3  # three asks, one resolution
    _ = [event async for event in sched.stream([use(), use()])]
    assert len(counted) == 2 and len(person.asked) == 5
    await sched.submit([use(), use()])
    assert len(counted) == 3
    async with sched.streaming_executor() as executor:
        executor.add_tool(use())
        executor.add_tool(use())
    assert len(counted) == 4 and len(person.asked) == 9
    assert all(candidates[1] is person for candidates in counted)


async def test_the_approver_is_wrapped_once_for_the_whole_run(registry: nts.ToolRegistry, tmp_path: Path) -> None:
    person = Person("person")
    perms = Watching(cwd=tmp_path)
    sched = nts.Scheduler(registry, permissions=perms, approver=person, cwd=tmp_path)
    await sched.run([use(target=t) for t in "abc"])
    first, *rest = perms.brought
    assert first is not person and first.__wrapped__ is person  # one wrapper, around the resolved approver
    assert all(wrapper is first for wrapper in rest)  # one per run, not one per call
    await sched.run([use()])
    assert perms.brought[-1] is not first and perms.brought[-1].__wrapped__ is person


async def test_a_resumed_run_gives_its_answers_through_the_same_one_wrapper(registry: nts.ToolRegistry, tmp_path: Path) -> None:
    perms = Watching(cwd=tmp_path)
    sched = nts.Scheduler(registry, permissions=perms, approver=nts.ApprovalBroker("defer"), cwd=tmp_path)
    first, second = use(target="a"), use(target="b")
    paused = await sched.run_outcomes([first, second])
    assert [o.status for o in paused.outcomes] == ["deferred", "deferred"]

    person = Person("later")
    sched_after = nts.Scheduler(registry, permissions=perms, approver=person, cwd=tmp_path)
    perms.brought.clear()
    resumed = await sched_after.resume(paused.state, {first["id"]: nts.ApprovalAnswer.allow()})
    assert [o.result.text for o in resumed.outcomes] == ["deployed a", "deployed b"]
    assert person.asked == [second["id"]]  # the saved answer first; the usual approver for the rest
    assert {id(w) for w in perms.brought} == {id(perms.brought[0])} and perms.brought[0].__wrapped__ is person


async def test_an_agent_run_override_reaches_every_turn(registry: nts.ToolRegistry, tmp_path: Path) -> None:
    scheduler_level, run_level = Person("scheduler"), Person("run")
    perms = Watching(cwd=tmp_path)
    sched = nts.Scheduler(registry, permissions=perms, approver=scheduler_level, cwd=tmp_path, session_dir=tmp_path / "s")
    model = ScriptedModel([[tool_use("deploy", target="x")], [tool_use("deploy", target="y")], [text("done")]])
    result = await Agent(model, sched).run("ship it", approver=run_level)
    assert result.stop_reason == "end_turn" and len(run_level.asked) == 2 and not scheduler_level.asked
    assert all(wrapper.__wrapped__ is run_level for wrapper in perms.brought)
