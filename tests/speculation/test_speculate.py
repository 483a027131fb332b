"""End to end: a scripted loop on the core Scheduler, speculating in an overlay."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import Overlay, OverlayConflict, ScriptedTurn, speculate, start_speculation

from .conftest import FETCHED, loop, make_registry, text, tree_hash, use


async def test_edit_after_read_goes_to_overlay_and_accept_applies_it(sched, space):
    project = space["project"]
    before = tree_hash(project)
    spec = await speculate(
        "make main return 2",
        loop(
            [use("Read", file_path="src/app.py")],
            [use("Edit", file_path="src/app.py", old_string="return 1", new_string="return 2")],
            [use("Read", file_path="src/app.py")],
            [text("Done: main returns 2.")],
        ),
        scheduler=sched,
    )
    assert spec.boundary.kind == "complete"
    assert spec.turns == 4 and spec.tool_use_count == 3
    assert tree_hash(project) == before  # nothing real changed yet
    results = [b for m in spec.transcript if m["role"] == "user" for b in m["content"]]
    assert not any(r.get("is_error") for r in results), results
    assert "return 2" in results[-1]["content"]  # the second Read saw the overlay copy
    [change] = spec.changes()
    assert (change.path, change.kind) == ("src/app.py", "modified")
    assert "-    return 1\n+    return 2\n" in change.diff and change.diff.startswith("--- a/src/app.py")

    result = await spec.accept()
    assert (project / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert not result.query_required and result.boundary.complete
    assert [m["role"] for m in result.messages] == ["assistant", "user"] * 3 + ["assistant"]
    assert result.time_saved > 0
    assert not os.path.exists(spec.overlay.workdir)
    # overlay paths never reach the injected conversation
    assert spec.overlay.tree not in repr(result.messages)


async def test_write_new_file_then_read_it_then_reject_leaves_tree_identical(sched, space):
    project = space["project"]
    before = tree_hash(project)
    spec = await speculate(
        "add notes",
        loop(
            [use("Write", file_path="docs/notes.md", content="hello\n")],
            [use("Read", file_path=str(project / "docs/notes.md"))],
            [text("ok")],
        ),
        scheduler=sched,
    )
    assert spec.boundary.complete, spec.transcript
    assert spec.transcript[3]["content"][0]["content"] == "     1\thello"  # Read numbers its lines
    [change] = spec.changes()
    assert change.kind == "created" and change.diff.startswith("--- /dev/null\n+++ b/docs/notes.md")
    await spec.reject()
    assert tree_hash(project) == before
    assert not os.path.exists(spec.overlay.workdir)
    with pytest.raises(RuntimeError, match="already rejected"):
        await spec.accept()


async def test_deleting_a_file_is_a_shell_command_and_so_a_boundary(sched, space):
    project = space["project"]
    before = tree_hash(project)
    spec = await speculate("drop readme", loop([use("Bash", command="rm README.md")], [text("gone")]), scheduler=sched)
    assert (spec.boundary.kind, spec.boundary.detail) == ("bash", "rm README.md")
    assert spec.changes() == [] and tree_hash(project) == before
    await spec.accept()
    assert tree_hash(project) == before


def test_a_deletion_in_the_overlay_is_listed_and_applied(space):
    """No built-in tool deletes inside a speculation (``rm`` is the bash boundary); the
    overlay still lists and applies a file gone from its copy, should one go."""
    project = space["project"]
    overlay = Overlay(project, space["session"])
    os.remove(overlay.prepare_write("README.md"))
    assert (project / "README.md").exists()
    [change] = overlay.changes()
    assert change.kind == "deleted" and "-# Demo" in change.diff
    assert overlay.apply() == [change]
    assert not (project / "README.md").exists()
    overlay.discard()


async def test_read_only_shell_runs_but_a_writing_command_is_a_boundary(sched, space):
    project = space["project"]
    before = tree_hash(project)
    spec = await speculate(
        "look around then build",
        loop(
            [use("Bash", command="ls src")],
            [text("Let me build."), use("Bash", command="echo built > out.txt")],
            [text("never reached")],
        ),
        scheduler=sched,
    )
    assert spec.transcript[1]["content"][0]["content"] == "app.py"
    assert (spec.boundary.kind, spec.boundary.tool, spec.boundary.detail) == ("bash", "Bash", "echo built > out.txt")
    assert spec.turns == 2  # the loop stopped at the boundary
    assert not (project / "out.txt").exists() and tree_hash(project) == before
    denied = spec.transcript[-1]["content"][0]
    assert denied["is_error"] and "read-only shell commands" in denied["content"]

    result = await spec.accept()
    assert result.query_required
    # the failed call and its result are gone; the text before it was trailing and is cut
    assert [m["role"] for m in result.messages] == ["assistant", "user"]
    assert result.messages[-1]["content"][0]["content"] == "app.py"


@pytest.mark.parametrize(
    "call, kind",
    [
        (use("WebFetch", url="https://example.com", prompt="what is it?"), "denied_tool"),
        (use("Write", file_path="../outside/x.txt", content="x"), "outside_cwd"),
        (use("Read", file_path="/etc/hostname"), "outside_cwd"),
    ],
)
async def test_other_boundaries_are_recorded(sched, space, call, kind):
    spec = await speculate("go", loop([call], [text("unreachable")]), scheduler=sched)
    assert spec.boundary.kind == kind
    assert spec.boundary.tool == call["name"]
    assert spec.turns == 1 and FETCHED == []


async def test_read_only_tool_without_path_may_run(sched):
    spec = await speculate("docs?", loop([use("Glob", pattern="*.md")], [text("one")]), scheduler=sched)
    assert spec.boundary.complete and spec.transcript[1]["content"][0]["content"] == "README.md"


async def test_edits_can_be_made_a_boundary(sched, space):
    spec = await speculate(
        "edit", loop([use("Write", file_path="a.txt", content="x")]), scheduler=sched, allow_edits=False
    )
    # the detail is the path as hooks and rules see it: absolute
    assert (spec.boundary.kind, spec.boundary.detail) == ("edit", str(space["project"] / "a.txt"))
    assert spec.overlay.written == []


async def test_turn_and_message_limits(sched):
    many = [[use("Glob", pattern="*.md")] for _ in range(30)]
    spec = await speculate("loop", loop(*many), scheduler=sched, max_turns=20)
    assert spec.boundary.kind == "max_turns" and spec.turns == 20
    spec = await speculate("loop", loop(*many), scheduler=sched, max_messages=7)
    assert spec.boundary.kind == "max_messages" and spec.turns == 4
    # the 7th message hit the limit; its tool call is still answered (cancelled), then nothing more
    assert len(spec.transcript) == 8 and spec.transcript[-1]["content"][0]["is_error"]


async def test_accept_while_running_stops_it_and_cuts_to_a_user_message(sched, space):
    turns = [ScriptedTurn([use("Read", file_path="README.md")], delay=0.01), ScriptedTurn([text("more")], delay=30)]
    spec = start_speculation("slow", loop(*turns), scheduler=sched)
    while spec.turns < 1 or len(spec.transcript) < 2:
        await __import__("asyncio").sleep(0.01)
    result = await spec.accept()
    assert result.boundary.kind == "aborted" and result.query_required
    assert [m["role"] for m in result.messages] == ["assistant", "user"]
    assert 0 < result.time_saved < 30


async def test_accept_refuses_and_names_a_file_changed_on_disk(sched, space):
    project = space["project"]
    spec = await speculate(
        "edit",
        loop(
            [use("Read", file_path="src/app.py")],
            [use("Edit", file_path="src/app.py", old_string="1", new_string="2")],
            [use("Write", file_path="new.txt", content="n")],
            [text("ok")],
        ),
        scheduler=sched,
    )
    (project / "src/app.py").write_text("someone else's work\n")
    (project / "new.txt").write_text("also created meanwhile\n")
    before = tree_hash(project)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept()
    assert {c.path for c in caught.value.conflicts} == {"src/app.py", "new.txt"}
    assert "src/app.py" in str(caught.value) and "changed on disk" in str(caught.value)
    assert tree_hash(project) == before  # all or nothing: not even new.txt was written
    assert spec.state == "finished"  # still open: the user can look, then reject
    await spec.reject()
    assert tree_hash(project) == before


async def test_session_file_state_carries_in_and_out(sched, space):
    project = space["project"]
    await sched.run([use("Read", file_path="src/app.py")])  # read in the main session
    spec = await speculate(
        "edit it",
        loop([use("Edit", file_path="src/app.py", old_string="1", new_string="3")], [text("ok")]),
        scheduler=sched,
    )
    assert spec.boundary.complete, spec.transcript
    await spec.accept()
    # after accept, the session may edit the file again without re-reading it
    [result] = await sched.run([use("Edit", file_path="src/app.py", old_string="3", new_string="4")])
    assert not result.is_error, result.text
    assert (project / "src/app.py").read_text().endswith("return 4\n")


async def test_session_permissions_still_deny(space):
    class DenySecrets:
        async def decide(self, request):
            path = request.input.get("file_path", "")
            if "secrets" in path:
                return nts.Decision.deny("Permission to read secrets has been denied.")
            return nts.Decision.allow()

        def hides(self, tool):
            return tool.name == "Sleep"

    project = space["project"]
    (project / "secrets").mkdir()
    (project / "secrets/key").write_text("k")
    sched = nts.Scheduler(make_registry(), permissions=DenySecrets(), cwd=project, session_dir=space["session"])
    spec = await speculate("peek", loop([use("Read", file_path="secrets/key")], [text("x")]), scheduler=sched)
    assert spec.boundary.kind == "permission" and "denied" in spec.transcript[-1]["content"][0]["content"]
    assert "Sleep" in [t["name"] for t in make_registry().api_tools()]  # shown when nothing hides it
    assert "Sleep" not in [t["name"] for t in spec.scheduler.registry.api_tools()]
    assert sched.registry.hidden is not spec.gate.hides  # the session's registry was not rewired


async def test_a_loop_that_raises_ends_with_an_error_boundary(sched):
    async def broken(request):
        request.emit({"role": "assistant", "content": [text("hi")]})
        raise RuntimeError("model went away")

    spec = await speculate("x", broken, scheduler=sched)
    assert spec.boundary.kind == "error" and "model went away" in spec.boundary.detail


async def test_a_loop_that_ignores_abort_is_cancelled_after_the_grace_period(sched):
    async def stubborn(request):
        await request.scheduler.run([use("WebFetch", url="https://example.com", prompt="p")])
        await __import__("asyncio").sleep(60)

    spec = await speculate("x", stubborn, scheduler=sched, grace=0.05)
    assert spec.boundary.kind == "denied_tool" and spec.done


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"suggestion": ""}, "non-empty"),
        ({"max_turns": 0}, "at least 1"),
        ({"run_loop": 3}, "async callable"),
    ],
)
async def test_bad_arguments_are_named(sched, kwargs, message):
    args = {"suggestion": "go", "run_loop": loop([text("x")]), "scheduler": sched, **kwargs}
    with pytest.raises((ValueError, TypeError), match=message):
        start_speculation(args.pop("suggestion"), args.pop("run_loop"), **args)


async def test_overlay_root_inside_cwd_is_refused(sched, space):
    with pytest.raises(ValueError, match="outside cwd"):
        start_speculation("go", loop([text("x")]), scheduler=sched, overlay_root=space["project"] / ".spec")


async def test_session_dir_inside_cwd_keeps_overlay_and_results_out_of_cwd(space):
    project = space["project"]
    sched = nts.Scheduler(make_registry(), cwd=project, session_dir=project / ".session")
    before = tree_hash(project)
    spec = await speculate("w", loop([use("Write", file_path="a.txt", content="a")], [text("ok")]), scheduler=sched)
    assert not spec.overlay.workdir.startswith(str(project))
    assert not Path(spec.scheduler.context.session_dir).resolve().is_relative_to(project)
    await spec.reject()
    assert tree_hash(project) == before


async def test_time_saved_counts_only_kept_work(sched):
    turns = [ScriptedTurn([text("still streaming")], delay=30)]
    spec = start_speculation("slow", loop(*turns), scheduler=sched)
    await __import__("asyncio").sleep(0.05)
    result = await spec.accept()
    assert result.messages == [] and result.time_saved == 0.0  # nothing was kept, nothing saved
