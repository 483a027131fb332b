"""One engine: a batch run and the streaming executor end a turn the same way.

Random blocks (safe or not, failing, changing the context, stopping the turn at a random
point of a random call, shell-style tools whose failure cancels their siblings) go
through ``Scheduler.run_outcomes`` and through the streaming executor (fed at once, and,
when nothing stops early, fed one block at a time with the loop turning in between). The
results, their order and the final context must be the same. Each call's result shows
the context it started with, so a modifier applied early or late, or in another order,
shows up as a difference.

Deterministic by construction: no outcome depends on wall-clock time. "Random times" are
points in a call's own run (its start, after some loop turns, as it returns); calls
overlap by yielding loop turns, never by sleeping. Blocks fed one by one are compared
only when nothing stops early: which calls have finished when a later block arrives and
stops the turn is then a matter of when the stream delivers it, on both paths.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str
    fail: bool = False
    modify: bool = False
    stop_turn: Literal["", "start", "middle", "end"] = ""  # when, in this call, the turn is stopped
    pause: int = 0  # loop turns to yield while running (overlap without wall-clock time)


class _Marker(nts.Tool):
    input_model = Step

    def __init__(self, name: str, safe: bool, shell: bool = False) -> None:
        self.name = name  # type: ignore[misc]
        self._safe = safe
        self.errors_cancel_siblings = shell  # type: ignore[misc]  # its failure stops its siblings, as Bash's does

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._safe

    def is_read_only(self, input: Any) -> bool:
        return self._safe

    async def call(self, input: Step, ctx: nts.ToolContext) -> nts.ToolOutput:
        seen = ",".join(ctx.options.get("marks", ()))
        if input.stop_turn == "start":
            ctx.abort.abort(nts.USER_ABORT)  # a rejected prompt would do this: it stops the turn
            raise nts.AbortError("stopped")
        for turn in range(input.pause):
            if input.stop_turn == "middle" and turn == input.pause // 2:
                ctx.abort.abort(nts.USER_ABORT)  # stops the turn while it and its siblings run
            await asyncio.sleep(0)
        if input.stop_turn == "middle" and not input.pause:
            ctx.abort.abort(nts.USER_ABORT)
        if input.stop_turn == "end":
            ctx.abort.abort(nts.USER_ABORT)  # stops the turn as this call returns its result
        if input.fail:
            raise RuntimeError(f"{input.tag} failed (it saw {seen or 'nothing'})")
        modifier = _marking(input.tag) if input.modify else None
        return nts.ToolOutput(f"{input.tag} saw {seen or 'nothing'}", context_modifier=modifier)


def _marking(tag: str) -> Any:
    """A context modifier that appends ``tag`` to the context's marks."""

    def modifier(c: nts.ToolContext) -> nts.ToolContext:
        return c.replace(options={**c.options, "marks": (*c.options.get("marks", ()), tag)})

    return modifier


steps = st.lists(  # safe, shell, fail, modify, pause
    st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3)),
    min_size=1,
    max_size=10,
)
plans = st.fixed_dictionaries({
    "steps": steps,
    "stop_at": st.one_of(st.none(), st.integers(0, 9)),
    "stop_when": st.sampled_from(["start", "middle", "end"]),
    "cancel_on_shell_error": st.booleans(),
    "cap": st.integers(1, 4),
})
TOOLS = [_Marker(f"{'Safe' if safe else 'Unsafe'}{'Shell' if shell else ''}", safe, shell)
         for safe in (True, False) for shell in (True, False)]


def blocks_for(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for i, (safe, shell, fail, modify, pause) in enumerate(plan["steps"]):
        stop = plan["stop_when"] if plan["stop_at"] == i else ""
        step = {"tag": f"c{i}", "fail": fail, "modify": modify, "pause": pause, "stop_turn": stop}
        name = f"{'Safe' if safe else 'Unsafe'}{'Shell' if shell else ''}"
        out.append({"type": "tool_use", "id": f"t{i}", "name": name, "input": step})
    return out


def summary(outcomes: list[Any], context: nts.ToolContext) -> tuple[Any, ...]:
    rows = tuple((o.tool_use_id, o.status, o.is_error, o.result.text) for o in outcomes)
    return rows, context.options.get("marks", ())


async def through_run(sched: nts.Scheduler, blocks: list[dict[str, Any]], cancel: bool) -> tuple[Any, ...]:
    result = await sched.run_outcomes(blocks, abort=nts.AbortSignal(), cancel_on_shell_error=cancel)
    return summary(result.outcomes, result.context)


async def through_executor(sched: nts.Scheduler, blocks: list[dict[str, Any]], cancel: bool, *, turns_between: int) -> tuple[Any, ...]:
    async with sched.streaming_executor(abort=nts.AbortSignal(), cancel_on_shell_error=cancel) as ex:
        for block in blocks:
            ex.add_tool(block)
            for _ in range(turns_between):
                await asyncio.sleep(0)  # the stream delivers the next block a little later
            list(ex.get_completed_results())  # the agent drains after every streamed event
    return summary(ex.outcomes(), ex.context)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans)
def test_batch_and_streaming_runs_agree(plan: dict[str, Any]) -> None:
    sched = nts.Scheduler(nts.ToolRegistry(TOOLS), max_concurrency=plan["cap"])
    blocks, cancel = blocks_for(plan), plan["cancel_on_shell_error"]
    stops_early = plan["stop_at"] is not None and plan["stop_at"] < len(blocks)
    fails = any(fail for _, _, fail, _, _ in plan["steps"])

    async def main() -> None:
        batch = await through_run(sched, blocks, cancel)
        assert batch == await through_executor(sched, blocks, cancel, turns_between=0)
        if not stops_early and not (cancel and fails):
            # Blocks arriving later change when calls start, not what they see or end with.
            assert batch == await through_executor(sched, blocks, cancel, turns_between=2)
        # The context a batch run ends with is every modifier of a call that completed, in block order.
        done = [f"c{i}" for i, (_, _, fail, modify, _) in enumerate(plan["steps"])
                if modify and not fail and batch[0][i][1] == "completed"]
        assert tuple(batch[1]) == tuple(done)
        # Every block has exactly one result, in block order, whatever stopped.
        assert [row[0] for row in batch[0]] == [b["id"] for b in blocks]

    asyncio.run(main())
