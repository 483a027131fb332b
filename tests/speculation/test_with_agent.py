"""Integration: the real Agent loop and ScriptedModel, speculating through ``agent_loop``."""

from __future__ import annotations

import nbtoolsched as nts
from nbtoolsched import models
from nbtoolsched.speculation import agent_loop, speculate

from .conftest import tree_hash


def factory(model):
    return lambda scheduler, messages, max_turns: nts.Agent(model, scheduler, messages=messages, max_turns=max_turns)


async def test_agent_speculation_edits_in_overlay_and_accepts(sched, space):
    project = space["project"]
    model = models.ScriptedModel(
        [
            [models.tool_use("Read", file_path="src/app.py")],
            [models.tool_use("Edit", file_path="src/app.py", old_string="return 1", new_string="return 5")],
            [models.text("main now returns 5")],
        ]
    )
    before = tree_hash(project)
    spec = await speculate("make it 5", agent_loop(factory(model)), scheduler=sched)
    assert spec.boundary.complete, spec.transcript
    assert spec.turns == 3 and tree_hash(project) == before
    # the model saw the suggestion as the last user message of its first call
    assert model.calls[0].messages[-1]["content"][0]["text"] == "make it 5"
    result = await spec.accept()
    assert (project / "src/app.py").read_text().endswith("return 5\n")
    assert result.messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "main now returns 5"}]}


async def test_agent_speculation_stops_at_a_boundary_with_a_valid_transcript(sched, space):
    project = space["project"]
    model = models.ScriptedModel(
        [
            [models.tool_use("Write", file_path="x.txt", content="x"), models.tool_use("Bash", command="make install")],
            [models.text("unreachable")],
        ]
    )
    before = tree_hash(project)
    spec = await speculate("install", agent_loop(factory(model)), scheduler=sched)
    assert (spec.boundary.kind, spec.boundary.detail) == ("bash", "make install")
    assert model.turns_played == 1 and tree_hash(project) == before
    prompt = {"role": "user", "content": [{"type": "text", "text": "install"}]}
    nts.validate_transcript([prompt, *spec.transcript])  # every tool_use answered
    result = await spec.accept()
    assert result.query_required and result.messages[-1]["role"] == "user"
    assert (project / "x.txt").read_text() == "x"
