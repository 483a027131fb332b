"""One engine: a batch run and the streaming executor end a turn the same way.

Random blocks (safe or not, failing, changing the context, stopping the turn) go through
``Scheduler.run_outcomes`` and through the streaming executor (fed at once, and fed one
block at a time with the loop turning in between). The results, their order and the
final context must be the same. Each call's result shows the context it started with,
so a modifier applied early or late, or in another order, shows up as a difference.

Deterministic by construction: no outcome depends on timing. The turn is stopped by a
call at its start (not at a random time), and shell-style failures do not cancel
siblings here (which siblings are still running when one fails is a matter of timing).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str
    fail: bool = False
    modify: bool = False
    stop_turn: bool = False
    pause: int = 0  # loop turns to yield while running (overlap without wall-clock time)


class _Marker(nts.Tool):
    input_model = Step

    def __init__(self, name: str, safe: bool) -> None:
        self.name = name  # type: ignore[misc]
        self._safe = safe

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._safe

    def is_read_only(self, input: Any) -> bool:
        return self._safe

    async def call(self, input: Step, ctx: nts.ToolContext) -> nts.ToolOutput:
        seen = ",".join(ctx.options.get("marks", ()))
        if input.stop_turn:
            ctx.abort.abort(nts.USER_ABORT)  # a rejected prompt would do this: it stops the turn
            raise nts.AbortError("stopped")
        for _ in range(input.pause):
            await asyncio.sleep(0)
        if input.fail:
            raise RuntimeError(f"{input.tag} failed (it saw {seen or 'nothing'})")
        modifier = None
        if input.modify:
            tag = input.tag

            def modifier(c: nts.ToolContext) -> nts.ToolContext:
                return c.replace(options={**c.options, "marks": (*c.options.get("marks", ()), tag)})

        return nts.ToolOutput(f"{input.tag} saw {seen or 'nothing'}", context_modifier=modifier)


steps = st.lists(
    st.tuples(st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3)),  # safe, fail, modify, pause
    min_size=1,
    max_size=10,
)
plans = st.fixed_dictionaries({
    "steps": steps,
    "stop_at": st.one_of(st.none(), st.integers(0, 9)),
    "cap": st.integers(1, 4),
})


def blocks_for(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for i, (safe, fail, modify, pause) in enumerate(plan["steps"]):
        step = {"tag": f"c{i}", "fail": fail, "modify": modify, "pause": pause, "stop_turn": plan["stop_at"] == i}
        out.append({"type": "tool_use", "id": f"t{i}", "name": "Safe" if safe else "Unsafe", "input": step})
    return out


def summary(outcomes: list[Any], context: nts.ToolContext) -> tuple[Any, ...]:
    rows = tuple((o.tool_use_id, o.status, o.is_error, o.result.text) for o in outcomes)
    return rows, context.options.get("marks", ())


async def through_run(sched: nts.Scheduler, blocks: list[dict[str, Any]]) -> tuple[Any, ...]:
    result = await sched.run_outcomes(blocks, abort=nts.AbortSignal())
    return summary(result.outcomes, result.context)


async def through_executor(sched: nts.Scheduler, blocks: list[dict[str, Any]], *, turns_between: int) -> tuple[Any, ...]:
    async with sched.streaming_executor(abort=nts.AbortSignal(), cancel_on_shell_error=False) as ex:
        for block in blocks:
            ex.add_tool(block)
            for _ in range(turns_between):
                await asyncio.sleep(0)  # the stream delivers the next block a little later
            list(ex.get_completed_results())  # the agent drains after every streamed event
    return summary(ex.outcomes(), ex.context)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans)
def test_batch_and_streaming_runs_agree(plan: dict[str, Any]) -> None:
    registry = nts.ToolRegistry([_Marker("Safe", True), _Marker("Unsafe", False)])
    sched = nts.Scheduler(registry, max_concurrency=plan["cap"])
    blocks = blocks_for(plan)

    async def main() -> None:
        batch = await through_run(sched, blocks)
        assert batch == await through_executor(sched, blocks, turns_between=0)
        if plan["stop_at"] is None:  # blocks arriving later change when calls start, not what they see
            assert batch == await through_executor(sched, blocks, turns_between=2)
        # The context a batch run ends with is every modifier of a call that completed, in block order.
        done = [f"c{i}" for i, (_, fail, modify, _) in enumerate(plan["steps"])
                if modify and not fail and batch[0][i][1] == "completed"]
        assert tuple(batch[1]) == tuple(done)

    asyncio.run(main())
