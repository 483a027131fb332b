"""``session/load``: a Claude Code transcript found by its session id, told to the client
again as session updates, then continued in the same file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import AgentMessageChunk, AgentThoughtChunk, ToolCallStart, UserMessageChunk

from nbtoolsched._session_log import read_transcript
from nbtoolsched.agent._transcript import transcript_problems

from .harness import Client, running_agent

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
STUDIO = "5da894cf-39f2-4285-8dad-323adb2d00ef"  # fasthooks_studio.jsonl's session id


async def test_a_claude_code_session_is_replayed_then_continued_in_its_own_file(project: Path, work: Path) -> None:
    # Claude Code's own layout: <projects folder>/<session id>.jsonl
    (work / "sessions").mkdir()
    path = work / "sessions" / f"{STUDIO}.jsonl"
    shutil.copy(FIXTURES / "fasthooks_studio.jsonl", path)
    before = read_transcript(path).messages
    client = Client()
    async with running_agent(client, project, work, ["Going on from there."]) as agent:
        await agent.conn.load_session(cwd=str(project), session_id=STUDIO, mcp_servers=[])
        # on the wire, the whole history came before the answer to session/load
        assert len(agent.incoming("session/update")) == 7
        assert max(agent.incoming("session/update")) < agent.answer_to("session/load")
        await agent.settled()
        replayed = client.updates()
        kinds = [type(update) for update in replayed]
        assert kinds == [UserMessageChunk, AgentThoughtChunk, ToolCallStart, AgentThoughtChunk, ToolCallStart,
                         AgentThoughtChunk, AgentMessageChunk]
        assert "studio.db" in replayed[0].content.text
        calls = [update for update in replayed if isinstance(update, ToolCallStart)]
        assert [(c.kind, c.status) for c in calls] == [("execute", "completed")] * 2
        assert calls[0].title == '`sqlite3 ~/.fasthooks/studio.db ".tables"`'
        assert calls[1].title.startswith('`sqlite3 ~/.fasthooks/studio.db ".schema events" && echo')
        assert len(calls[1].title) == 200 and calls[1].title.endswith("\u2026")  # a long command is cut
        assert "events" in calls[0].content[0].content.text
        assert replayed[-1].content.text.startswith("**studio.db contents:**")

        response = await agent.prompt(STUDIO, text_block("and then?"))
        assert response.stop_reason == "end_turn"
        assert client.message_text().endswith("Going on from there.")
        assert await agent.close_stdin_and_wait() == 0
    after = read_transcript(path)
    assert after.problems == [] and transcript_problems(after.messages) == []
    assert after.messages[: len(before)] == before
    assert [m["role"] for m in after.messages[len(before):]] == ["user", "assistant"]
    assert after.messages[-2]["content"] == [{"type": "text", "text": "and then?"}]
    assert after.messages[-1]["content"] == [{"type": "text", "text": "Going on from there."}]


async def test_parallel_calls_replay_with_their_kinds_and_final_statuses(project: Path, work: Path) -> None:
    # our own layout: <sessions>/<id>/<id>.jsonl
    folder = work / "sessions" / "hand-parallel"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "hand_parallel.jsonl", folder / "hand-parallel.jsonl")
    client = Client()
    async with running_agent(client, project, work, []) as agent:
        await agent.conn.load_session(cwd=str(project), session_id="hand-parallel", mcp_servers=[])
        await agent.settled()
    calls = [update for update in client.updates() if isinstance(update, ToolCallStart)]
    assert [c.kind for c in calls] == ["search", "read", "edit", "search", "read", "execute", "execute", "execute", "fetch"]
    assert {c.status for c in calls} == {"completed"}
    assert calls[1].title == "Read /home/u/proj/a.py" and calls[1].locations[0].path == "/home/u/proj/a.py"


async def test_an_unknown_session_id_is_an_error_naming_it(project: Path, work: Path) -> None:
    client = Client()
    async with running_agent(client, project, work, []) as agent:
        with pytest.raises(RequestError) as unknown:
            await agent.conn.load_session(cwd=str(project), session_id="no-such-session", mcp_servers=[])
        assert unknown.value.code == -32002 and "no-such-session" in str(unknown.value)
        with pytest.raises(RequestError) as bad:
            await agent.conn.load_session(cwd=str(project), session_id="../../etc/passwd", mcp_servers=[])
        assert bad.value.code == -32602 and "not a session id" in str(bad.value)
