"""The client's file system: with ``fs`` offered, Read sees the editor's unsaved text and Edit
changes it (after the tool's own checks); without it, the disk serves, as it always has."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from nbtoolsched._session_log import read_transcript

from .harness import Client, choose, running_agent, tool_use, transcript_of

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess


async def test_read_and_edit_go_through_the_editors_unsaved_buffer(project: Path, work: Path) -> None:
    a = str(project / "a.txt")
    client = Client(choose("allow_once"), buffers={a: "alpha, edited in the editor\n"})
    script = [[tool_use("Read", file_path="a.txt")],
              [tool_use("Edit", file_path="a.txt", old_string="edited in the editor", new_string="and saved")], "done"]
    async with running_agent(client, project, work, script, fs=True) as agent:
        session = await agent.new_session(project)
        await agent.prompt(session, text_block("go"))
    read, edit = client.call_named("Read a.txt"), client.call_named("Edit a.txt")
    assert "alpha, edited in the editor" in read.texts()  # the buffer, not the disk's "alpha"
    # old_string is only in the buffer: the edit was planned from the editor's text
    assert edit.status == "completed" and client.writes == [(a, "alpha, and saved\n")]
    [diff] = edit.diffs()
    assert (diff.old_text, diff.new_text) == ("alpha, edited in the editor\n", "alpha, and saved\n")
    results = [b for m in read_transcript(transcript_of(work, session)).messages if m["role"] == "user"
               and isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    assert "edited in the editor" in str(results[0]["content"])


async def test_a_protected_path_is_refused_before_the_editor_hears_of_it(project: Path, work: Path) -> None:
    """Validation and permission come first: a denied Read never reaches fs/read_text_file."""
    client = Client(buffers={str(project / "secret.txt"): "an unsaved secret\n"})
    async with running_agent(client, project, work, [[tool_use("Read", file_path="secret.txt")], "done"], fs=True) as agent:
        session = await agent.new_session(project)
        await agent.prompt(session, text_block("go"))
    secret = client.call_named("Read secret.txt")
    assert secret.status == "failed" and "Read(./secret.txt)" in secret.texts() and client.reads == []


async def test_without_the_fs_capability_the_disk_serves(project: Path, work: Path) -> None:
    client = Client(choose("allow_once"))
    script = [[tool_use("Read", file_path="a.txt")], [tool_use("Edit", file_path="a.txt", old_string="alpha", new_string="ALPHA")],
              [tool_use("Write", file_path="new/c.txt", content="gamma\n")], "done"]
    async with running_agent(client, project, work, script, fs=False) as agent:
        session = await agent.new_session(project)
        response = await agent.prompt(session, text_block("go"))
    assert response.stop_reason == "end_turn"
    assert client.reads == [] and client.writes == []
    assert (project / "a.txt").read_text() == "ALPHA\n" and (project / "new" / "c.txt").read_text() == "gamma\n"
    [edit_diff], [write_diff] = client.call_named("Edit a.txt").diffs(), client.call_named("Write new/c.txt").diffs()
    assert (edit_diff.old_text, edit_diff.new_text) == ("alpha\n", "ALPHA\n")
    assert (write_diff.path, write_diff.old_text, write_diff.new_text) == (str(project / "new" / "c.txt"), None, "gamma\n")
    assert not (project / ".claude" / "settings.local.json").exists()  # "Allow once" saves nothing
