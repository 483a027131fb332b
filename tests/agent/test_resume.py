"""A session's JSONL transcript round-trips: written by a session, validated, loaded, continued.

Also a file in Claude Code's own shape (string prompt, one entry per block, toolUseResult,
summary and snapshot lines), a session cut off mid-turn, and files that must be refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, text, tool_use
from nbtoolsched._session_log import read_transcript


def chain_is_linear(path: Path) -> bool:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["parentUuid"] for e in lines[1:]] == [e["uuid"] for e in lines[:-1]]


async def test_written_validated_loaded_and_continued(scheduler: nts.Scheduler, tool_log) -> None:
    first = Agent(ScriptedModel([[text("Reading."), tool_use("read", path="a")], "a is fine"]), scheduler)
    done = await first.run("check a")
    path = first.transcript.path
    back = read_transcript(path)
    assert back.problems == [] and back.messages == done.messages
    validate_transcript(back.messages)

    second = Agent.from_transcript(path, ScriptedModel([[tool_use("write", path="b")], "b written"]), scheduler)
    assert second.messages == done.messages and second.context.session_id == scheduler.context.session_id
    assert second.context.transcript_path == path
    more = await second.run("now write b")
    assert more.final_text == "b written" and tool_log == [("read", "a"), ("write", "b")]
    again = read_transcript(path)
    assert again.problems == [] and again.messages == more.messages and len(more.messages) == 8
    assert chain_is_linear(path)  # one session, one chain, in one file


def claude_code_file(path: Path, *, cut_off: bool = False) -> None:
    """What Claude Code writes: a string prompt, one assistant entry per block, results with toolUseResult."""
    common = {"isSidechain": False, "userType": "external", "cwd": "/home/me/project", "sessionId": "7f9c2a10-5b3e-4d3e-9a61-2f0c1e8b9d44",
              "version": "2.1.88", "gitBranch": "main"}
    rows = [
        {"type": "summary", "summary": "Reading the notes", "leafUuid": "u4"},
        {**common, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-02T10:00:00.000Z",
         "message": {"role": "user", "content": "what do my notes say?"}},
        {**common, "type": "assistant", "uuid": "u2", "parentUuid": "u1", "timestamp": "2026-01-02T10:00:01.000Z",
         "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "text", "text": "Let me read them."}], "stop_reason": None, "usage": {}}},
        {**common, "type": "assistant", "uuid": "u3", "parentUuid": "u2", "timestamp": "2026-01-02T10:00:01.500Z",
         "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "notes.md"}}],
                     "stop_reason": "tool_use", "usage": {}}},
        {"type": "file-history-snapshot", "messageId": "msg_01", "snapshot": {}, "isSnapshotUpdate": False},
    ]
    if not cut_off:
        rows += [
            {**common, "type": "user", "uuid": "u4", "parentUuid": "u3", "timestamp": "2026-01-02T10:00:02.000Z",
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "buy milk"}]},
             "toolUseResult": {"file": {"filePath": "notes.md", "content": "buy milk"}}},
            {**common, "type": "assistant", "uuid": "u5", "parentUuid": "u4", "timestamp": "2026-01-02T10:00:03.000Z",
             "message": {"id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                         "content": [{"type": "text", "text": "They say: buy milk."}], "stop_reason": "end_turn", "usage": {}}},
        ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


async def test_a_claude_code_session_is_continued_in_its_own_file(scheduler, tmp_path) -> None:
    path = tmp_path / "7f9c2a10-5b3e-4d3e-9a61-2f0c1e8b9d44.jsonl"
    claude_code_file(path)
    model = ScriptedModel(["Also: call mum."])
    agent = Agent.from_transcript(path, model, scheduler)
    assert agent.context.session_id == "7f9c2a10-5b3e-4d3e-9a61-2f0c1e8b9d44"
    result = await agent.run("anything else?")
    assert model.calls[0].messages[0] == {"role": "user", "content": "what do my notes say?"}
    assert result.final_text == "Also: call mum."
    back = read_transcript(path)
    assert back.problems == [] and back.messages == result.messages
    new = [json.loads(line) for line in path.read_text().splitlines()][7:]
    assert new[0]["parentUuid"] == "u5" and {e["sessionId"] for e in new} == {"7f9c2a10-5b3e-4d3e-9a61-2f0c1e8b9d44"}


async def test_a_session_cut_off_mid_turn_gets_placeholders_then_goes_on(scheduler, tmp_path) -> None:
    path = tmp_path / "cut.jsonl"
    claude_code_file(path, cut_off=True)
    agent = Agent.from_transcript(path, ScriptedModel(["Starting again."]), scheduler)
    placeholder = agent.messages[-1]["content"][0]
    assert placeholder["tool_use_id"] == "toolu_01" and placeholder["is_error"]
    assert read_transcript(path).messages == agent.messages  # the placeholder is in the file too
    result = await agent.run("please retry")
    validate_transcript(result.messages)
    assert read_transcript(path).messages == result.messages


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"type": "user", "uuid": "a", "parentUuid": null, "message": {"role": "user", "content": "hi"}}\n{oops\n'
         '{"type": "assistant", "uuid": "b", "parentUuid": "a", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}}\n',
         "line 2: not valid JSON"),
        ('{"type": "summary", "summary": "nothing"}\n', "holds no conversation"),
        ('{"type": "assistant", "uuid": "a", "parentUuid": null, "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}}\n',
         "roles must alternate"),
    ],
)
def test_a_file_that_cannot_be_continued_safely_is_refused_naming_why(scheduler, tmp_path, content, message) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(nts.TranscriptError, match=message):
        Agent.from_transcript(path, ScriptedModel([]), scheduler)
    assert path.read_text() == content  # nothing was written to a file we refused


def test_a_missing_file_is_a_transcript_error(scheduler, tmp_path) -> None:
    with pytest.raises(nts.TranscriptError, match="cannot read"):
        Agent.from_transcript(tmp_path / "nope.jsonl", ScriptedModel([]), scheduler)


async def test_added_messages_join_the_conversation_and_the_file(scheduler) -> None:
    agent = Agent(ScriptedModel(["first", "second"]), scheduler)
    await agent.run("one")
    agent.add_messages([{"role": "user", "content": "two"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}])
    result = await agent.run("three")
    validate_transcript(result.messages)
    assert [m["role"] for m in result.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert read_transcript(agent.transcript.path).messages == result.messages
