"""Accepting part of a speculation: ``accept(paths=[...])`` applies only the files chosen.

The files left out are rejected: not written, not checked against the disk (a file the
user rejected may have changed meanwhile), and named to the model in a note at the end of
the kept messages. A chosen file that changed on disk is still an ``OverlayConflict``,
and nothing is written then.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import OverlayConflict, speculate

from .conftest import loop, make_registry, text, tree_hash, use

APP = "def main():\n    return 1\n"


async def two_files(sched: nts.Scheduler, *, done: str = "Both done.") -> object:
    """A finished speculation that changed src/app.py and created docs/new.md."""
    spec = await speculate(
        "edit and add",
        loop(
            [use("Read", file_path="src/app.py")],
            [use("Edit", file_path="src/app.py", old_string="return 1", new_string="return 2"),
             use("Write", file_path="docs/new.md", content="new\n")],
            [text(done)],
        ),
        scheduler=sched,
    )
    assert spec.boundary.complete, spec.transcript
    assert sorted(c.path for c in spec.changes()) == ["docs/new.md", "src/app.py"]
    return spec


def last_text(messages: list[dict]) -> str:
    return messages[-1]["content"][-1]["text"]


async def test_accept_applies_only_the_chosen_file_and_tells_the_model_about_the_rest(sched, space):
    project = space["project"]
    spec = await two_files(sched)
    result = await spec.accept(paths=["docs/new.md"])
    assert (project / "docs" / "new.md").read_text() == "new\n"
    assert (project / "src" / "app.py").read_text() == APP  # rejected: not applied
    assert [c.path for c in result.changes] == ["docs/new.md"]
    assert [(c.path, c.kind) for c in result.rejected] == [("src/app.py", "modified")]
    assert spec.state == "accepted" and not os.path.exists(spec.overlay.workdir)
    # the model is told, in a user message after its last answer, so a next turn knows
    assert result.messages[-2]["role"] == "assistant" and result.messages[-1]["role"] == "user"
    assert "src/app.py" in last_text(result.messages) and "not applied" in last_text(result.messages)
    assert "docs/new.md" not in last_text(result.messages)
    assert result.query_required


async def test_accepting_every_path_is_a_full_accept_with_no_note(sched, space):
    spec = await two_files(sched)
    result = await spec.accept(paths=["src/app.py", "docs/new.md"])
    assert result.rejected == [] and not result.query_required
    assert result.messages[-1]["role"] == "assistant"
    assert (space["project"] / "src" / "app.py").read_text().endswith("return 2\n")


async def test_a_rejected_file_changed_on_disk_does_not_block_the_chosen_one(sched, space):
    project = space["project"]
    spec = await two_files(sched)
    (project / "src" / "app.py").write_text("someone else's work\n")
    with pytest.raises(OverlayConflict) as caught:  # all of it: the changed file is refused
        await spec.accept()
    assert [c.path for c in caught.value.conflicts] == ["src/app.py"]
    assert not (project / "docs").exists() and spec.state == "finished"
    result = await spec.accept(paths=["docs/new.md"])  # without it: the rule is per file
    assert (project / "docs" / "new.md").read_text() == "new\n"
    assert (project / "src" / "app.py").read_text() == "someone else's work\n"
    assert [c.path for c in result.rejected] == ["src/app.py"]


async def test_a_chosen_file_changed_on_disk_is_a_conflict_and_nothing_lands(sched, space):
    project = space["project"]
    spec = await two_files(sched)
    (project / "src" / "app.py").write_text("someone else's work\n")
    before = tree_hash(project)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept(paths=["src/app.py", "docs/new.md"])
    assert [c.path for c in caught.value.conflicts] == ["src/app.py"]
    assert tree_hash(project) == before and spec.state == "finished"
    await spec.reject()
    assert tree_hash(project) == before


async def test_a_path_that_is_not_a_change_is_refused_and_the_speculation_stays_open(sched, space):
    project = space["project"]
    spec = await two_files(sched)
    before = tree_hash(project)
    with pytest.raises(ValueError, match="not among the speculation's changes: README.md"):
        await spec.accept(paths=["README.md"])
    with pytest.raises(TypeError, match="not one string"):
        await spec.accept(paths="docs/new.md")
    assert tree_hash(project) == before and spec.state == "finished"
    result = await spec.accept(paths=["./docs//new.md"])  # normalised
    assert [c.path for c in result.changes] == ["docs/new.md"]


async def test_no_path_keeps_the_messages_and_writes_nothing(sched, space):
    project = space["project"]
    before = tree_hash(project)
    spec = await two_files(sched)
    result = await spec.accept(paths=[])
    assert tree_hash(project) == before
    assert result.changes == [] and sorted(c.path for c in result.rejected) == ["docs/new.md", "src/app.py"]
    assert "docs/new.md, src/app.py" in last_text(result.messages)


async def test_a_rejected_file_must_be_read_again_before_the_session_edits_it(space):
    """The run read src/app.py and edited its overlay copy; that version was rejected, so the
    session does not count the run's read (an accepted file it does: test_speculate)."""
    sched = nts.Scheduler(make_registry(), cwd=space["project"], session_dir=space["session"])
    spec = await two_files(sched)
    await spec.accept(paths=["docs/new.md"])
    [refused] = await sched.run([use("Edit", file_path="src/app.py", old_string="return 2", new_string="return 3")])
    assert refused.is_error and "has not been read" in refused.text
    assert (space["project"] / "src" / "app.py").read_text() == APP


async def test_a_boundary_run_gets_the_note_in_its_last_user_message(sched, space):
    project = space["project"]
    spec = await speculate(
        "write then build",
        loop([use("Write", file_path="a.txt", content="a\n"), use("Write", file_path="b.txt", content="b\n")],
             [use("Bash", command="make")], [text("never")]),
        scheduler=sched,
    )
    assert spec.boundary.kind == "bash"
    result = await spec.accept(paths=["b.txt"])
    assert not (project / "a.txt").exists() and (project / "b.txt").read_text() == "b\n"
    assert [m["role"] for m in result.messages] == ["assistant", "user"]  # the note joined the tool results
    kinds = [b["type"] for b in result.messages[-1]["content"]]
    assert kinds == ["tool_result", "tool_result", "text"] and "a.txt" in last_text(result.messages)


# -- the kernel overlay ------------------------------------------------------------------------------


def _kernel_scheduler(project: Path, tmp_path: Path) -> nts.Scheduler:
    perms = nts.Permissions(mode="bypassPermissions", cwd=project)
    return nts.Scheduler(make_registry(), permissions=perms, cwd=project, session_dir=tmp_path / "session")


@pytest.mark.kernel_overlay
async def test_kernel_overlay_accepts_a_file_with_its_new_folders_and_leaves_the_rest(space, tmp_path, monkeypatch):
    from tests.sandbox.conftest import require_sandbox

    monkeypatch.delenv("NBTOOLSCHED_SANDBOX", raising=False)
    require_sandbox()
    project = space["project"]
    (project / "config.ini").write_text("mode = alpha\n")
    spec = await speculate("reshape", loop(
        [use("Bash", command="mkdir -p docs/deep && echo deep > docs/deep/new.md && sed -i 's/alpha/beta/' config.ini "
                             "&& echo other > other.txt && rm README.md")],
        [text("done")],
    ), scheduler=_kernel_scheduler(project, tmp_path))
    assert spec.overlay_kind == "kernel", spec.overlay_note
    kinds = {c.path: c.kind for c in spec.changes()}
    assert kinds == {"docs": "created", "docs/deep": "created", "docs/deep/new.md": "created",
                     "config.ini": "modified", "other.txt": "created", "README.md": "deleted"}, kinds
    (project / "other.txt").write_text("made meanwhile\n")  # a conflict, but only for a file left out
    result = await spec.accept(paths=["docs/deep/new.md"])
    assert (project / "docs" / "deep" / "new.md").read_text() == "deep\n"
    assert sorted(c.path for c in result.changes) == ["docs", "docs/deep", "docs/deep/new.md"]  # its folders came along
    assert sorted(c.path for c in result.rejected) == ["README.md", "config.ini", "other.txt"]
    assert (project / "config.ini").read_text() == "mode = alpha\n" and (project / "README.md").exists()
    assert (project / "other.txt").read_text() == "made meanwhile\n"
    assert not os.path.exists(spec.overlay.workdir)


@pytest.mark.kernel_overlay
async def test_kernel_overlay_refuses_a_chosen_file_changed_on_disk(space, tmp_path, monkeypatch):
    from tests.sandbox.conftest import require_sandbox

    monkeypatch.delenv("NBTOOLSCHED_SANDBOX", raising=False)
    require_sandbox()
    project = space["project"]
    spec = await speculate("two", loop(
        [use("Bash", command="echo one > one.txt && echo two >> README.md")], [text("done")],
    ), scheduler=_kernel_scheduler(project, tmp_path))
    assert spec.overlay_kind == "kernel", spec.overlay_note
    (project / "README.md").write_text("# Changed meanwhile\n")
    before = tree_hash(project)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept(paths=["README.md", "one.txt"])
    assert [c.path for c in caught.value.conflicts] == ["README.md"]
    assert tree_hash(project) == before and spec.state == "finished"
    result = await spec.accept(paths=["one.txt"])
    assert (project / "one.txt").read_text() == "one\n" and [c.path for c in result.rejected] == ["README.md"]
