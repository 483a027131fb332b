"""Asking through ``session/request_permission``: a rejection or a cancelled answer denies and
stops the turn; a prompt cancelled while a call waits stops the wait, whether or not the
client ever answers the request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from .harness import PATIENCE, Answer, Client, cancelled_after, choose, hold_forever, running_agent, tool_use

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess

EDIT = [[tool_use("Edit", file_path="a.txt", old_string="alpha", new_string="ALPHA")], "never reached"]


@pytest.mark.parametrize("answer", [choose("reject_once"), cancelled_after()], ids=["rejected", "answered-cancelled"])
async def test_a_rejected_call_is_denied_and_the_turn_stops(project: Path, work: Path, answer: Answer) -> None:
    client = Client(answer)
    script = [[tool_use("Read", file_path="a.txt")], *EDIT]
    async with running_agent(client, project, work, script) as agent:
        session = await agent.new_session(project)
        response = await agent.prompt(session, text_block("go"))
    assert response.stop_reason == "end_turn"  # the person says how to go on; nothing was cancelled
    edit = client.call_named("Edit a.txt")
    assert edit.status == "failed" and "rejected" in edit.texts()
    assert (project / "a.txt").read_text() == "alpha\n"
    assert "never reached" not in client.message_text()
    assert not (project / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize("answers", ["cancelled-after-cancel", "never"])
async def test_a_cancel_while_a_call_waits_for_permission_stops_the_wait(project: Path, work: Path, answers: str) -> None:
    cancel_sent = asyncio.Event()
    client = Client(cancelled_after(cancel_sent) if answers != "never" else hold_forever)
    script = [[tool_use("Read", file_path="a.txt")], *EDIT]
    async with running_agent(client, project, work, script) as agent:
        session = await agent.new_session(project)
        async with asyncio.timeout(PATIENCE), asyncio.TaskGroup() as group:
            prompt = group.create_task(agent.conn.prompt(session_id=session, prompt=[text_block("go")]))
            await client.wait_until(lambda: bool(client.permission_requests), "the permission request")
            await agent.conn.cancel(session_id=session)
            cancel_sent.set()
        await agent.settled()
        assert prompt.result().stop_reason == "cancelled"
        edit = client.call_named("Edit a.txt")
        assert edit.statuses[-1] == "failed" and (project / "a.txt").read_text() == "alpha\n"
        # the session goes on: the next prompt is answered
        assert (await agent.prompt(session, text_block("again"))).stop_reason == "end_turn"
        assert await agent.close_stdin_and_wait() == 0
