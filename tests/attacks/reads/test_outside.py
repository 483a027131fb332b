"""Read-only commands that name a file outside the working directories ask, whichever
command names it (found by attacking the overlay; the session let these through)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ..conftest import Refuser, run_one, scheduler

OUTSIDE = "OUTSIDE-SECRET-91c2"


@pytest.fixture
def tree(project: Path) -> Path:
    (project.parent / "x").write_text(f"{OUTSIDE}\n")
    (project / "f").write_text("inside\n")
    (project / "g").write_text("inside too\n")
    (project / "list").write_bytes(b"../x\0")
    (project / "data.json").write_text('{"a": 1}\n')
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


@pytest.mark.parametrize("command", [
    "diff --to-file=../x f",
    "comm f ../x",
    "cmp f ../x",
    "jq -R . ../x",
    "git diff --no-index f ../x",
    "wc --files0-from=list",
    "wc -c --files0-from list",
    "head -c 100 ../x",
])
async def test_a_read_only_command_naming_a_file_outside_asks(tree: Path, command: str) -> None:
    refuser = Refuser()
    result = await run_one(scheduler(tree, refuser), "Bash", command=command)
    assert OUTSIDE not in result.text, f"{command!r} printed a file outside the working directory"
    assert refuser.asked, f"{command!r} ran without asking"


@pytest.mark.parametrize("command", ["diff f g", "comm f g", "cmp f f", "jq .a data.json", "wc -l f g", "head -n 1 f"])
async def test_the_same_commands_inside_the_working_directory_run_without_asking(tree: Path, command: str) -> None:
    refuser = Refuser()
    result = await run_one(scheduler(tree, refuser), "Bash", command=command)
    assert not refuser.asked and not result.is_error, (command, result.text)
