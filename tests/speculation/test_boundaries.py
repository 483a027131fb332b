"""Where a speculation stops, reported as Claude Code reports it (reference §6).

The session here is real: the built-in tools and a ``Permissions`` gate in each mode.
A write tool outside acceptEdits / bypassPermissions is the ``edit`` boundary (tool and
path), a shell command that is not read-only the ``bash`` boundary (the command), any
other tool ``denied_tool`` (the url, path or command), and a final answer ``complete``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import speculate

from .conftest import loop, make_registry, text, tree_hash, use


def session(space: dict[str, Path], mode: str, **rules: list[str]) -> nts.Scheduler:
    perms = nts.Permissions(mode, cwd=space["project"], **rules)
    return nts.Scheduler(make_registry(), permissions=perms, cwd=space["project"], session_dir=space["session"])


async def read_then_edit(sched: nts.Scheduler, space: dict[str, Path]):
    app = str(space["project"] / "src" / "app.py")
    return await speculate(
        "make it 2",
        loop(
            [use("Read", file_path=app)],
            [use("Edit", file_path=app, old_string="return 1", new_string="return 2")],
            [text("done")],
        ),
        scheduler=sched,
    )


def last_result(spec) -> dict:
    return spec.transcript[-1]["content"][-1]


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "auto"])
async def test_an_edit_outside_accept_edits_is_the_edit_boundary(space, mode):
    project = space["project"]
    before = tree_hash(project)
    spec = await read_then_edit(session(space, mode), space)
    app = str(project / "src" / "app.py")
    assert (spec.boundary.kind, spec.boundary.tool, spec.boundary.detail) == ("edit", "Edit", app)
    result = last_result(spec)
    assert result["is_error"] and spec.overlay.written == []
    assert result["content"] == (
        f"Speculative run stopped before editing {app}: file edits need the user's approval in {mode} mode. "
        "Nothing was changed. The user will decide how to go on."
    )
    accepted = await spec.accept()
    assert accepted.query_required and accepted.changes == [] and tree_hash(project) == before
    assert [m["role"] for m in accepted.messages] == ["assistant", "user"]  # the Read, kept


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
async def test_an_edit_in_accept_edits_or_bypass_goes_to_the_overlay(space, mode):
    spec = await read_then_edit(session(space, mode), space)
    assert spec.boundary.complete and spec.overlay.written == ["src/app.py"]
    await spec.accept()
    assert (space["project"] / "src" / "app.py").read_text().endswith("return 2\n")


async def test_an_ask_rule_on_an_edit_is_the_edit_boundary_even_in_accept_edits(space):
    spec = await read_then_edit(session(space, "acceptEdits", ask=["Edit"]), space)
    assert spec.boundary.kind == "edit" and "approval step failed" not in last_result(spec)["content"]


async def test_a_read_that_needs_approval_is_a_permission_boundary_with_one_period(space):
    spec = await speculate(
        "look", loop([use("Read", file_path=str(space["project"] / "README.md"))], [text("done")]),
        scheduler=session(space, "default", ask=["Read"]),
    )
    message = last_result(spec)["content"]
    assert spec.boundary.kind == "permission"
    assert message == "Speculative run stopped before Read: it needs the user's approval. Nothing was changed. The user will decide how to go on."


async def test_a_deny_message_ending_in_a_period_is_not_doubled(space):
    class Refuses:
        async def decide(self, request):
            return nts.Decision.deny("Not today.")

        def hides(self, tool):
            return False

    sched = nts.Scheduler(make_registry(), permissions=Refuses(), cwd=space["project"], session_dir=space["session"])
    spec = await speculate("look", loop([use("Read", file_path="README.md")], [text("done")]), scheduler=sched)
    assert spec.boundary.kind == "permission"
    assert last_result(spec)["content"].startswith("Speculative run stopped before Read: Not today. Nothing was changed.")


async def test_a_permission_check_that_raises_stops_a_write_too(space):
    class Broken:
        async def decide(self, request):
            raise RuntimeError("rules file unreadable")

        def hides(self, tool):
            return False

    sched = nts.Scheduler(make_registry(), permissions=Broken(), cwd=space["project"], session_dir=space["session"])
    spec = await speculate("write", loop([use("Write", file_path="new.txt", content="x")], [text("done")]), scheduler=sched)
    assert spec.boundary.kind == "permission" and spec.overlay.written == []
    assert "the permission check failed (rules file unreadable)" in last_result(spec)["content"]


async def test_bash_denied_tool_and_complete_boundaries_carry_what_claude_code_records(space):
    sched = session(space, "acceptEdits")
    bash = await speculate("build", loop([use("Bash", command="touch built.txt")], [text("done")]), scheduler=sched)
    assert (bash.boundary.kind, bash.boundary.tool, bash.boundary.detail) == ("bash", "Bash", "touch built.txt")
    await bash.reject()
    fetch = await speculate("fetch", loop([use("WebFetch", url="https://example.com", prompt="x")], [text("done")]), scheduler=sched)
    assert (fetch.boundary.kind, fetch.boundary.tool, fetch.boundary.detail) == ("denied_tool", "WebFetch", "https://example.com")
    await fetch.reject()
    done = await speculate("list", loop([use("Bash", command="ls")], [text("done")]), scheduler=sched)
    assert done.boundary.complete and done.boundary.tool is None
    assert not (space["project"] / "built.txt").exists()
