"""Accept against a tree that changes under it: modes, types, and races at the last instant.

Races are injected at the exact point (between a check and the step after it) by
wrapping that step, never by timing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.speculation import OverlayConflict, speculate
from nbtoolsched.speculation import _safefs as safefs

from .conftest import loop, text, tree_hash, use

ORIGINAL = "def main():\n    return 1\n"


async def edit_app(sched: nts.Scheduler, space: dict[str, Path], *more: list[dict]) -> object:
    """A finished speculation that changed src/app.py (and whatever ``more`` does)."""
    app = str(space["project"] / "src" / "app.py")
    spec = await speculate(
        "make it 2",
        loop(
            [use("Read", file_path=app)],
            [use("Edit", file_path=app, old_string="return 1", new_string="return 2")],
            *more,
            [text("done")],
        ),
        scheduler=sched,
    )
    assert spec.boundary.complete, spec.transcript
    return spec


def leftovers(root: Path) -> list[str]:
    """Temporary or backup files the copy-back may have left behind."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".nbts-" in p.name)


def _chmod(path: Path) -> None:
    path.chmod(0o755)


def _symlink(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent.parent / "README.md")


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("change", [_chmod, _symlink, _directory], ids=["chmod", "symlink", "directory"])
async def test_accept_refuses_a_file_whose_mode_or_type_changed_on_disk(sched, space, change):
    project = space["project"]
    (project / "src" / "app.py").chmod(0o644)
    spec = await edit_app(sched, space)
    change(project / "src" / "app.py")
    before = tree_hash(project)  # modes included
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept()
    assert [c.path for c in caught.value.conflicts] == ["src/app.py"]
    expected = {"_chmod": "mode changed on disk from 0644 to 0755", "_symlink": "symlink", "_directory": "directory"}
    assert expected[change.__name__] in str(caught.value)
    assert tree_hash(project) == before and spec.state == "finished"


async def test_a_directory_appearing_between_check_and_mkdir_is_a_conflict_and_nothing_lands(sched, space, monkeypatch):
    project = space["project"]
    made = str(project / "docs" / "deep" / "new.md")
    spec = await edit_app(sched, space, [use("Write", file_path=made, content="new\n")])
    real_mkdir = os.mkdir
    raced = []

    def someone_else_first(path, mode=0o777, *, dir_fd=None):
        if path == "docs" and dir_fd is not None and not raced:
            raced.append(path)
            real_mkdir(path, mode, dir_fd=dir_fd)  # the other process wins the race
        return real_mkdir(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", someone_else_first)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept()
    assert raced == ["docs"]
    assert [c.path for c in caught.value.conflicts] == ["docs/deep/new.md"]
    assert "docs appeared on disk" in str(caught.value) and caught.value.applied == []
    assert (project / "src" / "app.py").read_text() == ORIGINAL  # staged first, never committed
    assert os.listdir(project / "docs") == [] and leftovers(project) == []
    # the speculation stays open: with the race over, a second accept applies everything
    result = await spec.accept()
    assert sorted(c.path for c in result.changes) == ["docs/deep/new.md", "src/app.py"]
    assert (project / "docs" / "deep" / "new.md").read_text() == "new\n"
    assert leftovers(project) == []


@pytest.mark.parametrize("hard_links", [True, False], ids=["hard-links", "no-hard-links"])
async def test_a_commit_failing_midway_undoes_the_commits_before_it(sched, space, monkeypatch, hard_links):
    project = space["project"]
    if not hard_links:  # as on a file system without them: replaced files are moved aside instead

        def no_link(*args, **kwargs):
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_link)
    last = project / "zz.txt"
    last.write_text("zz\n")
    spec = await edit_app(
        sched,
        space,
        [use("Write", file_path=str(project / "new" / "made.txt"), content="made\n")],
        [use("Read", file_path=str(last))],
        [use("Write", file_path=str(last), content="changed\n")],
    )
    before = tree_hash(project)
    real_commit = safefs.StagedChange.commit
    order = []

    def swap_before_the_last(self):
        order.append(self.rel)
        if self.rel == "zz.txt":  # verified a moment ago; now it becomes a directory
            last.unlink()
            last.mkdir()
        return real_commit(self)

    monkeypatch.setattr(safefs.StagedChange, "commit", swap_before_the_last)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept()
    assert order == ["new/made.txt", "src/app.py", "zz.txt"]
    assert [c.path for c in caught.value.conflicts] == ["zz.txt"] and caught.value.applied == []
    assert (project / "src" / "app.py").read_text() == ORIGINAL
    assert not (project / "new").exists()  # the file made and the directory made for it
    assert last.is_dir() and leftovers(project) == []
    last.rmdir()
    last.write_text("zz\n")
    assert tree_hash(project) == before


async def test_an_undo_that_fails_is_reported_by_name(sched, space, monkeypatch):
    project = space["project"]
    last = project / "zz.txt"
    last.write_text("zz\n")
    spec = await edit_app(
        sched, space, [use("Read", file_path=str(last))], [use("Write", file_path=str(last), content="changed\n")]
    )
    real_commit = safefs.StagedChange.commit

    def fail_last(self):
        if self.rel == "zz.txt":
            raise PermissionError(13, "Permission denied")
        return real_commit(self)

    def refuse_undo(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(safefs.StagedChange, "commit", fail_last)
    monkeypatch.setattr(safefs.StagedChange, "roll_back", refuse_undo)
    with pytest.raises(OverlayConflict) as caught:
        await spec.accept()
    assert caught.value.applied == ["src/app.py"]
    assert "could not be undone: src/app.py" in str(caught.value)
    assert (project / "src" / "app.py").read_text().endswith("return 2\n") and leftovers(project) == []


async def test_reading_a_file_the_run_already_changed_goes_on_and_sees_the_change(sched, space):
    """A Read after an Edit reads the overlay copy; that copy is the run's own, not a path
    outside cwd (the real Read tool names its path, and the gate judges the rewritten input)."""
    app = str(space["project"] / "src" / "app.py")
    spec = await edit_app(sched, space, [use("Read", file_path=app)], [use("Glob", pattern="src/*.py")])
    reads = [b for m in spec.transcript for b in (m.get("content") if isinstance(m.get("content"), list) else [])
             if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert "return 2" in str(reads[2]["content"]) and "app.py" in str(reads[3]["content"])
    assert (space["project"] / "src" / "app.py").read_text() == ORIGINAL  # nothing lands before accept
