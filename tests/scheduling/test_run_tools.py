import asyncio
import time
from typing import Any

import pytest

import nbtoolsched as nts

from tests.spies import Recorder, block


async def test_results_in_block_order_with_parallel_and_serial_batches(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    blocks = [block("Grep", duration=0.3, output="g"), block("Read", duration=0.05, output="r"), block("Edit", duration=0.05, output="e"),
              block("Glob", duration=0.05, output="gl"), block("Read", duration=0.1, output="r2")]
    results = await scheduler.run(blocks)
    assert [r.tool_use_id for r in results] == [b["id"] for b in blocks]
    assert [r.content for r in results] == ["g", "r", "e", "gl", "r2"]
    iv = recorder.intervals
    grep, read, edit, glob, read2 = (iv[b["id"]] for b in blocks)
    assert read[0] < grep[1]  # Grep and Read overlapped
    assert edit[0] >= grep[1] and edit[0] >= read[1]  # Edit waited for both
    assert glob[0] >= edit[1] and read2[0] >= edit[1]
    assert recorder.overlaps_with_unsafe == []
    spans = {s.tool_use_id: s for s in scheduler.last_trace.states()}  # type: ignore[union-attr]
    assert [spans[b["id"]].batch for b in blocks] == [1, 1, 2, 3, 3]


async def test_cap_limits_running_calls(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    scheduler.max_concurrency = 3
    await scheduler.run([block("Read", duration=0.02) for _ in range(12)])
    assert recorder.peak == 3


async def test_exception_becomes_error_result(scheduler: nts.Scheduler) -> None:
    results = await scheduler.run([block("Read", fail=True), block("Read")])
    assert results[0].is_error and "Read failed on purpose" in results[0].content
    assert results[1].content == "ok"


async def test_empty_output_gets_a_marker_and_large_output_is_persisted(scheduler: nts.Scheduler, tmp_path: Any) -> None:
    big = "line of output\n" * 10_000
    results = await scheduler.run([block("Read", output=""), block("Read", output=big)])
    assert results[0].content == "(Read completed with no output)"
    text = results[1].content
    assert text.startswith("<persisted-output>\nOutput too large (146.5KB). Full output saved to: ")
    path = text.split("saved to: ")[1].split("\n")[0]
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == big
    preview = text.split("Preview (first 2KB):\n")[1]
    assert preview.endswith("\n...\n</persisted-output>") and len(preview) < 2100
    assert preview.split("\n...\n")[0].endswith("line of output")  # cut at a line break


async def test_progress_reaches_stream_consumers_before_the_result(scheduler: nts.Scheduler) -> None:
    kinds = [(type(e).__name__, e.tool_use_id) async for e in scheduler.stream([block("Read", progress=3, duration=0.05)])]
    assert [k for k, _ in kinds] == ["ProgressEvent"] * 3 + ["ResultEvent"]


class Counter(nts.Tool):
    """Safe or not, it changes the shared context: tells the order modifiers applied in."""

    def __init__(self, name: str, safe: bool) -> None:
        self.name = name  # type: ignore[misc]
        self.safe = safe

    def is_concurrency_safe(self, input: Any) -> bool:
        return self.safe

    async def call(self, input: Any, ctx: nts.ToolContext) -> nts.ToolOutput:
        seen = list(ctx.options.get("log", []))
        await asyncio.sleep(0.05 if ctx.tool_use_id == "a" else 0.0)
        tag = ctx.tool_use_id

        def modify(c: nts.ToolContext) -> nts.ToolContext:
            return c.replace(options={**c.options, "log": [*c.options.get("log", []), tag]})

        return nts.ToolOutput(",".join(seen), context_modifier=modify)


async def test_context_modifiers_serial_at_once_parallel_after_batch_in_block_order(tmp_path: Any) -> None:
    sched = nts.Scheduler(nts.ToolRegistry([Counter("Safe", True), Counter("Unsafe", False)]), cwd=tmp_path)
    blocks = [{"type": "tool_use", "id": i, "name": n, "input": {}} for i, n in [("a", "Safe"), ("b", "Safe"), ("c", "Unsafe"), ("d", "Unsafe"), ("e", "Safe")]]
    run = await sched.run_outcomes(blocks)
    seen = [o.result.content for o in run.outcomes]
    assert seen[2:] == ["a,b", "a,b,c", "a,b,c,d"]  # b finished first, but a's modifier applies first
    assert run.context.options["log"] == ["a", "b", "c", "d", "e"]  # the run hands back its final context
    assert "log" not in sched.context.options  # and leaves the scheduler as it was
    again = await sched.run_outcomes(blocks[2:3], context=run.context)  # the next run may go on from it
    assert again.outcomes[0].result.content == "a,b,c,d,e"


async def test_abort_midway_answers_every_call(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    abort = nts.AbortSignal()
    blocks = [block("Read", duration=5), block("Read", duration=5), block("Edit"), block("Read")]
    task = asyncio.ensure_future(scheduler.run(blocks, abort=abort))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    abort.abort()
    results = await task
    assert time.monotonic() - started < 2
    assert [r.tool_use_id for r in results] == [b["id"] for b in blocks]
    assert all(r.is_error for r in results)
    assert "interrupted" in results[0].content and "did not run" in results[2].content
    assert recorder.running == 0


async def test_cancelling_the_caller_stops_everything_and_leaves_no_task(scheduler: nts.Scheduler, recorder: Recorder) -> None:
    before = len(asyncio.all_tasks())
    handle = scheduler.submit([block("Read", duration=5), block("Read", duration=5), block("Edit", duration=5)])
    await asyncio.sleep(0.1)
    assert handle.states[handle.order[0]].status == "executing"
    handle.task.cancel()  # type: ignore[union-attr]
    with pytest.raises(asyncio.CancelledError):
        await handle.task  # type: ignore[misc]
    await asyncio.sleep(0)
    assert recorder.running == 0
    assert len(asyncio.all_tasks()) <= before


async def test_submit_returns_at_once_and_tracks_states(scheduler: nts.Scheduler) -> None:
    handle = scheduler.submit([block("Read", duration=0.2, progress=1), block("Edit")])
    assert not handle.done()
    await asyncio.sleep(0.05)
    first = handle.states[handle.order[0]]
    assert first.status == "executing" and first.last_progress == {"step": 0}
    results = await handle
    assert [r.content for r in results] == ["ok", "ok"]
    assert handle.summary() == "2 calls: 2 completed"


class HookSpy:
    def __init__(self, **pre: Any) -> None:
        self.pre = pre
        self.seen: list[tuple[str, Any]] = []

    async def pre_tool_use(self, event: Any) -> Any:
        from nbtoolsched.permissions._base import PreToolUseOutcome

        self.seen.append(("pre", dict(event.tool_input)))
        return PreToolUseOutcome(**self.pre)

    async def post_tool_use(self, event: Any) -> Any:
        from nbtoolsched.permissions._base import PostToolUseOutcome

        self.seen.append(("post", event.tool_response))
        return PostToolUseOutcome(additional_context=["post note"])

    async def post_tool_use_failure(self, event: Any) -> Any:
        from nbtoolsched.permissions._base import PostToolUseOutcome

        self.seen.append(("failure", event.error))
        return PostToolUseOutcome()


async def test_hooks_see_the_call_and_can_deny_update_or_stop(spy_registry: nts.ToolRegistry) -> None:
    hooks = HookSpy(updated_input={"output": "changed"}, additional_context=["pre note"])
    sched = nts.Scheduler(spy_registry, hooks=hooks)
    outcome = (await sched.run_outcomes([block("Read", output="orig")])).outcomes[0]
    assert outcome.result.content == "changed"
    assert [a.text for a in outcome.attachments] == ["pre note", "post note"]
    assert hooks.seen == [("pre", {"output": "orig"}), ("post", "changed")]

    deny = HookSpy(decision=nts.Decision.deny("blocked by policy"))
    results = await nts.Scheduler(spy_registry, hooks=deny).run([block("Read")])
    assert results[0].is_error and results[0].content == "blocked by policy"

    stop = HookSpy(stop="hook crashed: cannot continue")
    results = await nts.Scheduler(spy_registry, hooks=stop).run([block("Read")])
    assert results[0].is_error and "hook crashed" in results[0].content

    failing = HookSpy()
    await nts.Scheduler(spy_registry, hooks=failing).run([block("Read", fail=True)])
    assert failing.seen[-1][0] == "failure" and "failed on purpose" in failing.seen[-1][1]


async def test_rejection_without_feedback_stops_the_turn(spy_registry: nts.ToolRegistry) -> None:
    class RejectEdits:
        async def decide(self, request: Any) -> nts.Decision:
            if request.tool.name == "Edit":
                return nts.Decision.deny("The user rejected this edit.", abort_turn=True)
            return nts.Decision.allow()

        def hides(self, tool: Any) -> bool:
            return False

    sched = nts.Scheduler(spy_registry, permissions=RejectEdits())
    results = await sched.run([block("Read"), block("Edit"), block("Read")])
    assert results[0].content == "ok"
    assert results[1].content == "The user rejected this edit."
    assert "did not run" in results[2].content


def test_submit_outside_a_running_loop_says_what_to_do(scheduler: nts.Scheduler) -> None:
    with pytest.raises(RuntimeError, match="none is running"):
        scheduler.submit([block("Read")])
