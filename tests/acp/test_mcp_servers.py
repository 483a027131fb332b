"""The MCP servers a client names in ``session/new`` become the session's tools; one that
cannot be used is left out, named with the reason, and the session starts without it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio

from .harness import Client, running_agent, tool_use

pytestmark = pytest.mark.heavy  # starts the agent, and an MCP server, in subprocesses

SERVER = Path(__file__).with_name("echo_mcp_server.py")


async def test_a_stdio_server_from_the_request_serves_the_session(project: Path, work: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["mcp__echo__echo"]}}), encoding="utf-8")
    client = Client()
    script = [[tool_use("mcp__echo__echo", text="hi", times=2)], "done"]
    servers = [
        McpServerStdio(name="echo", command=sys.executable, args=[str(SERVER)], env=[EnvVariable(name="ECHO", value="1")]),
        HttpMcpServer(type="http", name="gone", url="http://127.0.0.1:9/mcp", headers=[]),
    ]
    async with running_agent(client, project, work, script) as agent:
        created = await agent.conn.new_session(cwd=str(project), mcp_servers=servers)
        response = await agent.prompt(created.session_id, text_block("echo"))
    assert response.stop_reason == "end_turn"
    echo = client.call_named("mcp__echo__echo")
    assert (echo.kind, echo.status) == ("other", "completed") and "hi hi" in echo.texts()
    left_out = (created.field_meta or {})["nbtoolsched"]["mcpServersLeftOut"]
    assert list(left_out) == ["gone"] and left_out["gone"]
