"""A prompt's content as the model gets it, text as it streams, and the stop reasons mapped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import embedded_text_resource, image_block, resource_block, resource_link_block, text_block

from nbtoolsched._session_log import read_transcript

from .harness import Client, running_agent, tool_use, transcript_of

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


async def test_the_prompts_blocks_reach_the_model_and_the_answer_streams(project: Path, work: Path) -> None:
    client = Client()
    script = [{"blocks": ["Hello there, friend."], "text_deltas": 3}]
    async with running_agent(client, project, work, script) as agent:
        session = await agent.new_session(project)
        prompt = [text_block("look at"), resource_link_block("a.txt", (project / "a.txt").as_uri()),
                  resource_block(embedded_text_resource("file:///notes/todo.md", "buy milk")), image_block(PIXEL, "image/png")]
        response = await agent.prompt(session, *prompt)
    assert response.stop_reason == "end_turn"
    chunks = [u.content.text for u in client.updates() if getattr(u, "session_update", "") == "agent_message_chunk"]
    assert len(chunks) == 3 and "".join(chunks) == "Hello there, friend."
    [user, _] = read_transcript(transcript_of(work, session)).messages
    assert user["content"] == [
        {"type": "text", "text": "look at"},
        {"type": "text", "text": f"@{project / 'a.txt'}"},
        {"type": "text", "text": '<context ref="file:///notes/todo.md">\nbuy milk\n</context>'},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]


@pytest.mark.parametrize(("script", "args", "stop"), [
    ([[tool_use("Read", file_path="a.txt")], "done"], ("--max-turns", "1"), "max_turn_requests"),
    ([{"blocks": ["I will not do that."], "stop_reason": "refusal"}], (), "refusal"),
    ([{"blocks": ["Cut"], "stop_reason": "max_tokens"}], (), "max_tokens"),
    (["Done."], (), "end_turn"),
], ids=["max-turns", "refusal", "max-tokens", "end-turn"])
async def test_stop_reasons(project: Path, work: Path, script: list[Any], args: tuple[str, ...], stop: str) -> None:
    client = Client()
    async with running_agent(client, project, work, script, args=args) as agent:
        session = await agent.new_session(project)
        response = await agent.prompt(session, text_block("go"))
    assert response.stop_reason == stop
