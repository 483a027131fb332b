"""When the client goes away mid-prompt (stdin closed, no cancel), the agent stops the run,
kills the command it started, keeps the transcript valid, and exits with nothing left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from nbtoolsched._session_log import read_transcript
from nbtoolsched.agent._transcript import transcript_problems
from tests.sandbox.conftest import require_sandbox

from .harness import Client, following, running, running_agent, tool_use, transcript_of

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess

async def test_closing_stdin_mid_command_stops_everything(project: Path, work: Path) -> None:
    require_sandbox()
    command, marker = following(project, "lifecycle")
    client = Client()
    script = [[tool_use("Bash", command=command)], "never reached"]
    async with running_agent(client, project, work, script) as agent:
        session = await agent.new_session(project)
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=session, prompt=[text_block("run it")]))
        try:
            await client.wait_until(lambda: "started" in client.text_of("`tail"), "the command's output")
            assert len(running("tail", marker)) == 1
            assert await agent.close_stdin_and_wait() == 0  # the client quits without a word
        finally:  # the prompt can have no answer now: the connection is gone
            prompt.cancel()
            await asyncio.gather(prompt, return_exceptions=True)
    assert running("tail", marker) == []
    transcript = read_transcript(transcript_of(work, session))
    assert transcript.problems == [] and transcript_problems(transcript.messages) == []
    assert transcript.messages[-1]["role"] == "user"  # the command's tool_use was answered
