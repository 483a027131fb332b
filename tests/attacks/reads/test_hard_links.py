"""Read deny rules in the file tools: a hard link is another name of the protected file,
and Read and Grep read its bytes in this process, where no sandbox masks anything."""

from __future__ import annotations

import os

import pytest

from ..conftest import SECRET, Refuser, run_one, scheduler


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
async def test_the_file_tools_do_not_read_a_hard_link_to_a_protected_file(project, mode):
    # notes.txt and .env are one file: Read, Grep and the Grep of a folder read its bytes
    # in this process, where no sandbox masks anything.
    os.link(project / ".env", project / "victim" / "notes.txt")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode, deny=["Read(./.env)", "Read(./secrets/**)"])
    read = await run_one(sched, "Read", file_path="victim/notes.txt")
    assert SECRET not in read.text and "hard link" in read.text, read.text
    grep_file = await run_one(sched, "Grep", pattern="SECRET", path="victim/notes.txt", output_mode="content")
    grep_tree = await run_one(sched, "Grep", pattern="SECRET", path="victim", output_mode="content")
    assert SECRET not in grep_file.text and SECRET not in grep_tree.text, (grep_file.text, grep_tree.text)
