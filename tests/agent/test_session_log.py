"""The session transcript file: Claude Code's JSONL, written by the agent loop, read back.

The agent tests run real hook scripts (bash + jq) that read ``transcript_path`` while
the loop runs, the way hooks in public Claude Code configurations do.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.agent._loop import Agent
from nbtoolsched.agent._transcript import validate_transcript
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use
from nbtoolsched.permissions._hooks import CommandHook, Hooks
from nbtoolsched._session_log import TranscriptWriter, read_transcript

AUDIT_HOOK = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "project" / ".claude" / "hooks" / "audit-from-transcript.sh"


def needs_jq() -> None:
    if shutil.which("jq") is None:
        pytest.fail("this test runs a hook script that reads the transcript with jq: install jq (apt-get install jq)")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def three_turns() -> list[Turn]:
    return [
        Turn([text("Looking."), tool_use("read", path="a"), tool_use("read", path="b"), tool_use("write", path="c")]),
        Turn([tool_use("sh", command="ls"), tool_use("sh", command="false", fail=True)]),
        Turn([text("All done.")]),
    ]


# -- the agent writes it ------------------------------------------------------------------------------
async def test_the_agent_writes_claude_codes_jsonl_and_it_reads_back(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel(three_turns()), scheduler)
    result = await agent.run("go")
    path = scheduler.context.session_dir / f"{scheduler.context.session_id}.jsonl"
    assert agent.transcript is not None and agent.transcript.path == path == agent.context.transcript_path
    back = read_transcript(path)
    assert back.problems == [] and back.messages == result.messages and back.session_id == scheduler.context.session_id
    entries = lines(path)
    for entry in entries:
        assert {"type", "uuid", "parentUuid", "timestamp", "sessionId", "cwd", "version", "isSidechain", "message"} <= set(entry)
        assert entry["cwd"] == scheduler.context.cwd and entry["isSidechain"] is False
    assert [e["parentUuid"] for e in entries[1:]] == [e["uuid"] for e in entries[:-1]]  # one chain
    first_answer = [e for e in entries if e["type"] == "assistant"][:4]  # one entry per block, one message id
    assert [e["message"]["content"][0]["type"] for e in first_answer] == ["text", "tool_use", "tool_use", "tool_use"]
    assert len({e["message"]["id"] for e in first_answer}) == 1
    results = [e for e in entries if e["type"] == "user" and e["message"]["content"][0]["type"] == "tool_result"]
    assert [len(e["message"]["content"]) for e in results] == [1] * 5  # one result per entry...
    assert [e["toolUseResult"] for e in results[:3]] == ["read a", "read b", "wrote c"]  # ...with its toolUseResult
    assert results[4]["toolUseResult"].startswith("Error: ")


@pytest.mark.heavy  # real hook scripts (bash + jq) for every call
async def test_a_hook_reading_transcript_path_with_jq_finds_the_current_tool_use(registry: nts.ToolRegistry, tmp_path: Path) -> None:
    needs_jq()
    (tmp_path / ".claude").mkdir()
    hooks = Hooks(project_dir=tmp_path)
    hooks.add("PreToolUse", CommandHook(str(AUDIT_HOOK)), "read|write")
    sched = nts.Scheduler(registry, hooks=hooks, cwd=tmp_path, session_dir=tmp_path / "session")
    # The answer streams slowly, so the first hooks run while later blocks are still coming:
    # they can only find their call because each block is written the moment it finishes.
    first = Turn([text("Two reads."), tool_use("read", path="a"), tool_use("read", path="b"), text("Reading.")],
                 delay_before_block=0.4)
    script = [first, [tool_use("write", path="c")], "done"]
    result = await Agent(ScriptedModel(script), sched).run("go")
    validate_transcript(result.messages)
    calls = [b for m in result.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    audit = [json.loads(line) for line in (tmp_path / ".claude" / "audit.jsonl").read_text().splitlines()]
    assert sorted(a["call"]["id"] for a in audit) == sorted(c["id"] for c in calls)  # every hook found its own call
    by_id = {a["call"]["id"]: a for a in audit}
    assert by_id[calls[2]["id"]]["results_so_far"] == 2  # and, a turn later, the earlier results
    assert by_id[calls[2]["id"]]["call"] == calls[2]


async def test_a_retried_answer_leaves_an_abandoned_branch_that_readers_skip(scheduler: nts.Scheduler) -> None:
    script = [Turn([tool_use("read", path="first try"), tool_use("read", path="x")], error_event_after=9),
              [tool_use("read", path="second try")], "done"]
    agent = Agent(ScriptedModel(script), scheduler, stream_retries=1)
    result = await agent.run("go")
    raw = agent.transcript.path.read_text()
    assert "first try" in raw  # it was written while it streamed...
    back = read_transcript(agent.transcript.path)
    assert back.messages == result.messages and "first try" not in json.dumps(back.messages)  # ...and is not history


async def test_a_cancelled_run_leaves_a_valid_transcript_file(scheduler: nts.Scheduler) -> None:
    import asyncio

    agent = Agent(ScriptedModel([[tool_use("read", path="a", seconds=30)]]), scheduler)
    started = asyncio.Event()
    agent.subscribe(lambda e: e.kind == "call_started" and started.set())
    task = asyncio.ensure_future(agent.run("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    back = read_transcript(agent.transcript.path)
    assert back.messages == agent.messages
    validate_transcript(back.messages)


async def test_a_second_run_continues_the_file_and_history_given_up_front_is_written_first(scheduler: nts.Scheduler) -> None:
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    agent = Agent(ScriptedModel(["one", "two"]), scheduler, messages=history)
    await agent.run("first")
    result = await agent.run("second")
    back = read_transcript(agent.transcript.path)
    assert back.messages == result.messages and back.messages[0]["content"] == "earlier"
    again = Agent(ScriptedModel(["three"]), scheduler, messages=result.messages)  # a resumed session: the same file
    final = await again.run("third")
    assert again.transcript.path == agent.transcript.path
    assert read_transcript(again.transcript.path).messages == final.messages


async def test_transcript_false_writes_nothing(scheduler: nts.Scheduler) -> None:
    agent = Agent(ScriptedModel(["hi"]), scheduler, transcript=False)
    await agent.run("go")
    assert agent.transcript is None and not scheduler.context.session_dir.exists()


# -- the reader on Claude Code's own files -------------------------------------------------------------
def claude_code_session(tmp_path: Path) -> Path:
    """A session in the shape Claude Code 2.x writes (ids shortened): a summary, file-history
    snapshots, a prompt as a string, an answer split into one entry per block, a progress
    entry inside the chain, a tool result with a structured toolUseResult, a system entry,
    a subagent's sidechain, an abandoned branch and an entry type this reader never saw."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/app", "sessionId": "s-1", "version": "2.1.88",
            "gitBranch": "main"}
    msg = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": None, "usage": {}}
    rows = [
        {"type": "summary", "summary": "Fixing the build", "leafUuid": "u9"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-05T10:00:00.000Z",
         "message": {"role": "user", "content": "why does the build fail?"}},
        {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1", "message": {**msg, "content": [
            {"type": "thinking", "thinking": "Check the log.", "signature": "sig"}]}},
        {**base, "type": "assistant", "uuid": "u3", "parentUuid": "u2", "message": {**msg, "content": [{"type": "text", "text": "Let me look."}]}},
        {**base, "type": "assistant", "uuid": "u4", "parentUuid": "u3", "message": {**msg, "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "npm run build"}}]}},
        {**base, "type": "progress", "uuid": "p1", "parentUuid": "u4", "data": {"type": "hook_progress"}, "toolUseID": "toolu_1"},
        {**base, "type": "user", "uuid": "u5", "parentUuid": "p1", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_1", "type": "tool_result", "content": "error TS2307", "is_error": True}]},
         "toolUseResult": {"stdout": "", "stderr": "error TS2307", "interrupted": False, "isImage": False}},
        {**base, "type": "system", "subtype": "informational", "uuid": "s1", "parentUuid": "u5", "content": "hook ran", "level": "info"},
        {**base, "type": "user", "uuid": "x1", "parentUuid": "u5", "isSidechain": True,
         "message": {"role": "user", "content": "subagent prompt"}},
        {**base, "type": "assistant", "uuid": "dead", "parentUuid": "s1", "message": {**msg, "id": "msg_02", "content": [
            {"type": "text", "text": "an answer the user rewound"}]}},
        {**base, "type": "assistant", "uuid": "u9", "parentUuid": "s1", "message": {**msg, "id": "msg_03", "content": [
            {"type": "text", "text": "A module is missing."}]}},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-05T10:01:00.000Z"},
    ]
    path = tmp_path / "s-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_reading_claude_codes_own_file(tmp_path: Path) -> None:
    back = read_transcript(claude_code_session(tmp_path))
    assert back.problems == []
    assert [e.type for e in back.entries][:3] == ["summary", "file-history-snapshot", "user"] and len(back.entries) == 13
    assert back.messages == [
        {"role": "user", "content": "why does the build fail?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Check the log.", "signature": "sig"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "npm run build"}}]},
        {"role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "error TS2307", "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A module is missing."}]},
    ]
    validate_transcript(back.messages)
    assert back.session_id == "s-1" and back.cwd == "/home/dev/app" and [b["id"] for b in back.tool_uses] == ["toolu_1"]
    with_sidechains = read_transcript(tmp_path / "s-1.jsonl", include_sidechains=True).messages
    assert with_sidechains[0]["content"] == "why does the build fail?"


def test_bad_and_cut_off_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    path = claude_code_session(tmp_path)
    rows = path.read_text().splitlines()
    rows.insert(4, "{not json")
    rows.insert(5, "[1, 2]")
    cut = json.dumps({"type": "user", "uuid": "u10", "parentUuid": "u9", "message": {"role": "user", "content": "more"}})
    path.write_text("\n".join(rows) + "\n" + cut[:30])
    back = read_transcript(path)
    assert [(p.line, p.message.split(" (")[0].split(";")[0]) for p in back.problems] == [
        (5, "not valid JSON"), (6, "a JSON list, not an object"), (16, "the file ends in the middle of this entry")]
    assert "cut short" in str(back.problems[-1]) and str(back.problems[0]).startswith("line 5:")
    assert back.messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "A module is missing."}]}


def test_the_writer_continues_a_cut_off_file_on_a_new_line_and_chains_from_its_last_entry(tmp_path: Path) -> None:
    path = claude_code_session(tmp_path)
    with open(path, "a") as fh:
        fh.write('{"type": "user", "uuid": "half')  # a crash mid-write
    writer = TranscriptWriter(path, "s-1", "/home/dev/app")
    assert writer.last_uuid == "u9"
    writer.append_user("and now?")
    back = read_transcript(path)
    assert [p.line for p in back.problems] == [14]
    assert back.messages[-1] == {"role": "user", "content": "and now?"}
    assert json.loads(path.read_text().splitlines()[-1])["parentUuid"] == "u9"


def test_writer_api_round_trips_api_messages(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "deep" / "t.jsonl", "sess", tmp_path)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}, {"type": "text", "text": "note"}]},
    ]
    writer.append_messages(messages)
    back = read_transcript(writer.path)
    assert back.messages == messages and back.problems == []
    assert [e.type for e in back.entries] == ["user", "assistant", "user", "user"]
    assert back.entries[2].data["toolUseResult"] == "x"
