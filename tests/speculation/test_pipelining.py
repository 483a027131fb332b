"""Pipelining: the next suggestion is prepared after a complete run and promoted on accept."""

from __future__ import annotations

import asyncio

import pytest

from nbtoolsched.speculation import SpeculationPipeline

from .conftest import loop, text, tree_hash, use


def loop_per_suggestion(scripts):
    """A loop that answers according to the suggestion it was started on."""

    async def run(request):
        suggestion = request.messages[-1]["content"][0]["text"]
        return await loop(*scripts[suggestion])(request)

    return run


def _is_prompt(message):
    content = message["content"]
    return isinstance(content, list) and content[0].get("type") == "text"


SCRIPTS = {
    "add a test": [[use("Write", file_path="tests/test_app.py", content="def test(): pass\n")], [text("Added.")]],
    "run it": [[use("Bash", command="ls tests")], [text("It is there.")]],
    "push": [[use("Bash", command="git push")]],
}


async def test_accept_promotes_the_prepared_suggestion_and_starts_it(sched, space):
    seen = []

    async def suggest_next(messages):
        prompts = [m["content"][0]["text"] for m in messages if m["role"] == "user" and _is_prompt(m)]
        seen.append(messages)
        return {"add a test": "run it", "run it": "push"}.get(prompts[-1])

    pipe = SpeculationPipeline(loop_per_suggestion(SCRIPTS), scheduler=sched, suggest=suggest_next)
    first = pipe.start("add a test", [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}])
    assert await pipe.wait_prepared() == "run it"
    # the suggester saw the conversation, the suggestion and the speculated turns
    assert [m["role"] for m in seen[0]] == ["user", "assistant", "user", "assistant", "user", "assistant"]

    result = await pipe.accept()
    assert result.boundary.complete and (space["project"] / "tests/test_app.py").exists()
    second = pipe.current
    assert second is not None and second is not first and second.suggestion == "run it"
    await second.wait()
    assert second.boundary.complete
    # the promoted run saw the accepted files: ls found the new test file
    assert "test_app.py" in second.transcript[1]["content"][0]["content"]
    # and its conversation includes the first accepted exchange
    assert pipe.messages[-1]["content"][0]["text"] == "Added."

    assert await pipe.wait_prepared() == "push"
    await pipe.accept()
    third = await pipe.current.wait()
    assert third.boundary.kind == "bash"
    before = tree_hash(space["project"])
    await pipe.reject()
    assert pipe.current is None and tree_hash(space["project"]) == before
    assert pipe.time_saved > 0


async def test_no_next_suggestion_after_a_boundary(sched):
    calls = []

    async def suggest(messages):
        calls.append(messages)
        return "anything"

    pipe = SpeculationPipeline(loop_per_suggestion(SCRIPTS), scheduler=sched, suggest=suggest)
    spec = pipe.start("push")
    assert await pipe.wait_prepared() is None
    assert spec.boundary.kind == "bash" and calls == []
    result = await pipe.accept()
    assert result.query_required and pipe.current is None


async def test_reject_cancels_preparation_and_start_refuses_while_open(sched):
    gate = asyncio.Event()

    async def slow_suggest(messages):
        await gate.wait()
        return "never"

    pipe = SpeculationPipeline(loop_per_suggestion(SCRIPTS), scheduler=sched, suggest=slow_suggest)
    pipe.start("add a test")
    with pytest.raises(RuntimeError, match="already open"):
        pipe.start("run it")
    await pipe.current.wait()
    await pipe.reject()
    assert pipe.next_suggestion is None
    with pytest.raises(RuntimeError, match="no speculation"):
        await pipe.accept()


async def test_a_failing_suggester_means_no_pipelined_run(sched):
    async def broken(messages):
        raise RuntimeError("suggester down")

    pipe = SpeculationPipeline(loop_per_suggestion(SCRIPTS), scheduler=sched, suggest=broken)
    pipe.start("add a test")
    assert await pipe.wait_prepared() is None
    assert "suggester down" in str(pipe.suggest_error)
    result = await pipe.accept()
    assert result.boundary.complete and pipe.current is None
