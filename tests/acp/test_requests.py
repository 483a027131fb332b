"""Bad input gets a JSON-RPC error that names what is wrong, and the agent goes on serving."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from .harness import PATIENCE, ROOT, Client, hold_forever, running_agent, tool_use

pytestmark = pytest.mark.heavy  # each test starts the agent in a subprocess


async def test_requests_about_sessions_that_cannot_be_served(project: Path, work: Path) -> None:
    client = Client(hold_forever)
    script = [[tool_use("Write", file_path="c.txt", content="gamma\n")]]
    async with running_agent(client, project, work, script) as agent:
        with pytest.raises(RequestError) as unknown:
            await agent.conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        assert unknown.value.code == -32602 and "unknown session 'no-such-session'" in str(unknown.value)
        with pytest.raises(RequestError) as missing:
            await agent.conn.new_session(cwd=str(project / "not-there"), mcp_servers=[])
        assert missing.value.code == -32602 and "not-there" in str(missing.value)

        session = await agent.new_session(project)
        with pytest.raises(RequestError) as audio:
            await agent.conn.prompt(session_id=session, prompt=[{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}])
        assert audio.value.code == -32602 and "audio" in str(audio.value)
        async with asyncio.timeout(PATIENCE), asyncio.TaskGroup() as group:
            first = group.create_task(agent.conn.prompt(session_id=session, prompt=[text_block("edit it")]))
            await client.wait_until(lambda: bool(client.permission_requests), "the permission request")
            with pytest.raises(RequestError) as busy:
                await agent.conn.prompt(session_id=session, prompt=[text_block("and this")])
            assert busy.value.code == -32600 and "still answering a prompt" in str(busy.value)
            await agent.conn.cancel(session_id=session)
        assert first.result().stop_reason == "cancelled"
        await agent.conn.cancel(session_id="no-such-session")  # a notification: ignored, nothing breaks
        assert (await agent.prompt(session, text_block("still here?"))).stop_reason == "end_turn"


async def test_malformed_lines_are_answered_on_the_wire(project: Path, work: Path) -> None:
    (work / "claude-user").mkdir()
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(work / "claude-user"), "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nbtoolsched", "acp", "--script", str(_script(work)), "--session-dir", str(work / "sessions"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=project, env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        lines = [
            "this is not json",
            "[1, 2]",
            '{"jsonrpc": "2.0", "params": {}}',
            '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"prompt": []}}',
            '{"jsonrpc": "2.0", "id": 8, "method": "no/such/method", "params": {}}',
            '{"jsonrpc": "2.0", "id": 9, "method": 42}',
            '{"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": 1}}',
        ]
        process.stdin.write("".join(line + "\n" for line in lines).encode())
        await process.stdin.drain()
        replies = [await _reply(process.stdout) for _ in lines]  # one answer each
        errors = {(r["id"], r["error"]["code"]) for r in replies if "error" in r}
        assert errors == {(None, -32700), (None, -32600), (7, -32602), (8, -32601), (9, -32600)}, replies
        by_id = {r["id"]: r for r in replies if r["id"] is not None}
        assert "sessionId" in json.dumps(by_id[7]["error"])  # the missing field is named
        assert by_id[10]["result"]["agentCapabilities"]["loadSession"] is True  # still serving
        messages = [r["error"]["message"] for r in replies if r["id"] is None]
        assert any("not JSON" in m for m in messages) and any("batch" in m for m in messages)
        assert any("needs a 'method'" in m for m in messages)
    finally:
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 20) == 0


def _script(work: Path) -> Path:
    path = work / "script.json"
    path.write_text("[]", encoding="utf-8")
    return path


async def _reply(stdout: asyncio.StreamReader) -> dict[str, Any]:
    line = await asyncio.wait_for(stdout.readline(), 20)
    assert line, "the agent closed stdout"
    reply: dict[str, Any] = json.loads(line)
    return reply


def test_the_default_model_without_a_key_is_refused_when_the_session_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session/new that would need Claude fails with ACP's "authentication required"
    (AcpSession.open turns the factory's error into it), not the first prompt with an SDK traceback."""
    import argparse

    from nbtoolsched.acp._cli import _model_factory

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    make = _model_factory(argparse.Namespace(script=None, openai_base_url=None, model=None))
    with pytest.raises(ValueError, match="no ANTHROPIC_API_KEY .* --openai-base-url URL --model NAME, or --script FILE"):
        make()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert make().name == "claude-sonnet-4-6"


def test_bypass_mode_is_not_offered_or_accepted_when_the_settings_disable_it(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from nbtoolsched.acp._session import allowed_modes, session_modes
    from nbtoolsched.permissions._engine import Permissions

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "user"))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}}))
    permissions = Permissions.from_settings(tmp_path)
    assert "bypassPermissions" not in allowed_modes(permissions) and "acceptEdits" in allowed_modes(permissions)
    assert "bypassPermissions" not in [m.id for m in session_modes(permissions).available_modes]
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    assert "bypassPermissions" in allowed_modes(Permissions.from_settings(tmp_path))
