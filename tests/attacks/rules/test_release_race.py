"""A call released by a sibling's "always allow" must be the call that was judged.

``_release_covered`` judges a waiting call, then answers its tool_use_id at the broker.
When judging it awaits (a tool's own async check), the person may meanwhile answer
that call with an edited input that asks again under the same id: the release then
answered the new question, for an input no one had judged under the saved rule.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

import nbtoolsched as nts
from nbtoolsched.models import tool_use
from nbtoolsched._tool._decision import DecisionReason


class _Input(BaseModel):
    target: str


class Slow(nts.Tool[_Input]):
    """A tool whose own check asks a person about "danger", and which can be made to
    pause inside that check (as a check that looks something up would)."""

    name = "Slow"
    input_model = _Input

    def __init__(self) -> None:
        self.pause = False
        self.paused = asyncio.Event()
        self.resume = asyncio.Event()
        self.ran: list[str] = []

    def is_concurrency_safe(self, input: Any) -> bool:
        return True  # so both calls wait for a person at once

    async def check_permissions(self, input: _Input, ctx: nts.ToolContext) -> nts.Decision:
        if input.target == "danger":
            return nts.Decision.ask("danger needs a person", DecisionReason("safety_check", "danger"))
        if self.pause:
            self.pause = False
            self.paused.set()
            await self.resume.wait()
        return nts.Decision.passthrough()

    async def call(self, input: _Input, ctx: nts.ToolContext) -> str:
        self.ran.append(input.target)
        return "ran"


async def _until(check: Any) -> None:
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError("never happened")


async def test_a_release_does_not_answer_a_question_asked_after_it_judged(tmp_path):
    slow = Slow()
    registry = nts.ToolRegistry([slow])
    broker = nts.ApprovalBroker("interactive")
    perms = nts.Permissions(cwd=tmp_path, approver=broker)
    sched = nts.Scheduler(registry, permissions=perms, cwd=tmp_path)
    run = asyncio.ensure_future(sched.run([tool_use("Slow", id="a", target="safe"), tool_use("Slow", id="b", target="other")]))
    await _until(lambda: set(broker.pending) == {"a", "b"})
    slow.pause = True  # the release's judgement of "a" pauses in the tool's check
    broker.answer("b", nts.ApprovalAnswer.allow_always(["Slow"]))
    await slow.paused.wait()
    # Meanwhile the person edits "a" into an input the safety check asks about again.
    broker.answer("a", nts.ApprovalAnswer.allow(updated_input={"target": "danger"}))
    await _until(lambda: "a" in broker.pending and broker.pending["a"].input == {"target": "danger"})
    slow.resume.set()
    await _until(lambda: "other" in slow.ran)  # the release has finished ("b" ran after it)
    assert "a" in broker.pending and "danger" not in slow.ran, "the edited input was released unjudged"
    broker.answer("a", nts.ApprovalAnswer.deny("no"))
    await run
    assert slow.ran == ["other"]
