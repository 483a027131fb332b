"""The gate on its own: decisions for each kind of call, without running a loop."""

from __future__ import annotations

import pytest

import nbtoolsched as nts
from nbtoolsched.permissions._base import PermissionRequest
from nbtoolsched.speculation import Overlay
from nbtoolsched.speculation._gate import SpeculationGate
from nbtoolsched.tools import BashTool, GlobTool, ReadTool, WebFetchTool, WriteTool
from nbtoolsched.tools.files._read import ReadInput


class Raises(nts.Tool):
    """A user-defined tool (no built-in is like it) that cannot say whether a call is read-only."""

    name = "Moody"

    def is_read_only(self, input):
        raise RuntimeError("cannot tell")


@pytest.fixture
def gate(space):
    overlay = Overlay(space["project"], space["session"])
    yield SpeculationGate(overlay, nts.AbortSignal())
    overlay.discard()


def request(tool, space, hook=None, **input):
    ctx = nts.ToolContext(space["project"])
    try:
        parsed = tool.input_model.model_validate(input)
    except ValueError:  # an input the tool's own validation refuses: the gate must fail closed on it too
        parsed = tool.input_model.model_construct(**input)
    return PermissionRequest(tool, input, parsed, ctx, "toolu_x", hook)


async def test_write_is_redirected_and_copied_once(gate, space):
    first = await gate.decide(request(WriteTool(), space, file_path="README.md", content="x"))
    assert first.allowed and first.updated_input["file_path"] == gate.overlay.overlay_path("README.md")
    with open(first.updated_input["file_path"]) as handle:
        assert handle.read() == "# Demo\n"  # copied before the first write
    with open(first.updated_input["file_path"], "w") as handle:
        handle.write("changed")
    again = await gate.decide(request(WriteTool(), space, file_path="./README.md", content="y"))
    assert again.updated_input["file_path"] == first.updated_input["file_path"]
    with open(again.updated_input["file_path"]) as handle:
        assert handle.read() == "changed"  # not copied over again


async def test_read_goes_to_overlay_only_once_written(gate, space):
    before = await gate.decide(request(ReadTool(), space, file_path="src/app.py"))
    assert before.updated_input["file_path"] == str(space["project"] / "src/app.py")
    await gate.decide(request(WriteTool(), space, file_path="src/app.py", content=""))
    after = await gate.decide(request(ReadTool(), space, file_path="src/app.py"))
    assert after.updated_input["file_path"] == gate.overlay.overlay_path("src/app.py")


@pytest.mark.parametrize(
    "tool, input, kind",
    [
        (BashTool(), {"command": "rm -rf src"}, "bash"),
        (BashTool(), {"command": "   "}, "bash"),
        (WebFetchTool(), {"url": "http://x", "prompt": "p"}, "denied_tool"),
        (Raises(), {}, "denied_tool"),
        # No path (the real Write refuses one before the gate; a write tool without one is like any other tool)
        (WriteTool(), {"file_path": "", "content": ""}, "denied_tool"),
        (WriteTool(), {"file_path": "src", "content": ""}, "unsafe_path"),
    ],
)
async def test_boundaries_deny_and_abort(gate, space, tool, input, kind):
    decision = await gate.decide(request(tool, space, **input))
    assert decision.behavior == "deny" and decision.message
    assert gate.boundary.kind == kind and gate.abort.aborted
    later = await gate.decide(request(GlobTool(), space, pattern="*"))
    assert later.behavior == "deny"  # once stopped, nothing more runs
    assert gate.boundary.kind == kind  # the first boundary is the one recorded


async def test_read_only_shell_and_tools_pass(gate, space):
    assert (await gate.decide(request(BashTool(), space, command="ls -la"))).allowed
    assert (await gate.decide(request(GlobTool(), space, pattern="*.md"))).allowed  # no path: cwd
    assert gate.boundary is None


async def test_a_hook_deny_stands_without_stopping_the_run(gate, space):
    hook = nts.Decision.deny("hook says no")
    decision = await gate.decide(request(ReadTool(), space, hook, file_path="README.md"))
    assert decision.message == "hook says no" and gate.boundary is None


class Inner:
    def __init__(self, answer):
        self.answer = answer

    async def decide(self, req):
        if self.answer == "ask":
            return await req.approver(req)  # a gate asking a person through the run's approver
        return self.answer

    def hides(self, tool):
        return False


@pytest.mark.parametrize("answer", ["ask", nts.Decision.deny("rule says no")])
async def test_inner_gate_is_consulted_and_never_asks_a_person(space, answer):
    overlay = Overlay(space["project"], space["session"])
    gate = SpeculationGate(overlay, nts.AbortSignal(), inner=Inner(answer))
    decision = await gate.decide(request(ReadTool(), space, file_path="README.md"))
    assert decision.behavior == "deny" and gate.boundary.kind == "permission"
    expected = "needs the user's approval" if answer == "ask" else "rule says no"
    assert expected in decision.message
    overlay.discard()


async def test_inner_ask_for_a_write_is_the_edit_boundary(space):
    overlay = Overlay(space["project"], space["session"])
    gate = SpeculationGate(overlay, nts.AbortSignal(), inner=Inner("ask"))
    decision = await gate.decide(request(WriteTool(), space, file_path="new.txt", content="x"))
    assert decision.behavior == "deny" and (gate.boundary.kind, gate.boundary.detail) == ("edit", "new.txt")
    assert overlay.written == [] and "need the user's approval" in decision.message
    overlay.discard()


async def test_validation_view_checks_the_overlay_copy(gate, space):
    view = gate.view(ReadTool())
    ctx = nts.ToolContext(space["project"])
    assert not (await view.validate_input(ReadInput(file_path="made.txt"), ctx)).ok
    await gate.decide(request(WriteTool(), space, file_path="made.txt", content=""))
    with open(gate.overlay.overlay_path("made.txt"), "w") as handle:
        handle.write("here")
    assert (await view.validate_input(ReadInput(file_path="made.txt"), ctx)).ok
    fetch = WebFetchTool()
    assert gate.view(fetch) is fetch  # tools that are neither reads nor writes are not wrapped


def test_overlay_must_not_live_in_cwd(space):
    with pytest.raises(ValueError, match="outside cwd"):
        Overlay(space["project"], space["project"] / "sub")
