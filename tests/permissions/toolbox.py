"""The tools the permission tests decide for, and helpers to ask Permissions about a call.

Built-ins are the real ones (``nbtoolsched.tools``: BashTool, ReadTool, EditTool,
WriteTool, WebFetchTool), so a decision goes through the real read-only analysis of a
command, the real path handling and the real web host checks. Their inputs must be
complete, as a model would send them: ``read``/``edit``/``write``/``fetch`` build them.

MCP tools are real ``McpTool`` objects of a server connection that is never started:
deciding about a call needs only the tool (its name, schema and annotations); calling
one would answer that the server is not connected.

The others are user-style tools, what a user writes as a ``Tool`` subclass, kept small
on purpose because the rules treat such tools by their name and own checks only:
Lookup (read-only), Deploy (changes things), Guarded (its own check_permissions),
Agent (a tool that only carries the name the legacy ``Task`` rules map to; we ship no
Agent tool) and AskUserQuestion (Claude Code's tool that needs a person; we ship none,
so this is one a user would write: it requires user interaction).
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

from nbtoolsched.permissions._approvals import ApprovalAnswer
from nbtoolsched.permissions._base import PermissionRequest
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._tool._base import Tool
from nbtoolsched._tool._context import ToolContext
from nbtoolsched._tool._decision import Decision, DecisionReason
from nbtoolsched.tools import BashTool, EditTool, McpStdioServerConfig, McpTool, ReadTool, WebFetchTool, WriteTool
from nbtoolsched.tools.mcp._manager import McpServerConnection

ISSUE_SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}}


@functools.cache
def _server(name: str) -> McpServerConnection:
    """One connection object per server name, never started (it holds no process)."""
    return McpServerConnection(name, McpStdioServerConfig(command="never-started-mcp-server"))


def mcp_tool(server: str, tool: str, **annotations: Any) -> McpTool:
    """A real MCP tool of a server that is never started (``annotations``: readOnlyHint...)."""
    return McpTool(_server(server), {"name": tool, "inputSchema": ISSUE_SCHEMA, "annotations": annotations})


# -- user-style tools ------------------------------------------------------------------------------
class AnyInput(BaseModel):
    model_config = {"extra": "allow"}


class Lookup(Tool):
    """A plain read-only tool with no checks of its own."""

    name = "Lookup"
    input_model = AnyInput

    def is_read_only(self, input: Any) -> bool:
        return True


class Deploy(Tool):
    name = "Deploy"
    input_model = AnyInput


class Agent(Tool):
    name = "Agent"
    input_model = AnyInput


class AskUserQuestion(Tool):
    """Needs a person whatever the mode."""

    name = "AskUserQuestion"
    input_model = AnyInput

    def requires_user_interaction(self) -> bool:
        return True

    async def check_permissions(self, input: Any, ctx: ToolContext) -> Decision:
        return Decision.ask("Answer the question", DecisionReason("tool", "needs the user"))


class Guarded(Tool):
    """Refuses a target on its own, whatever the rules or mode say."""

    name = "Guarded"
    input_model = AnyInput

    async def check_permissions(self, input: Any, ctx: ToolContext) -> Decision:
        if getattr(input, "target", None) == "prod":
            return Decision.deny("never prod", DecisionReason("tool", "own check"))
        return Decision.allow(None, DecisionReason("tool", "own check allows"))


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        BashTool(), ReadTool(), EditTool(), WriteTool(), WebFetchTool(),
        mcp_tool("github", "create_issue"), mcp_tool("gitlab", "create_issue"),
        Lookup(), Deploy(), Agent(), AskUserQuestion(), Guarded(),
    )
}


# -- complete inputs for the built-ins -------------------------------------------------------------
def bash(command: str) -> dict[str, Any]:
    return {"command": command}


def read(file_path: str) -> dict[str, Any]:
    return {"file_path": file_path}


def edit(file_path: str) -> dict[str, Any]:
    return {"file_path": file_path, "old_string": "a", "new_string": "b"}


def write(file_path: str) -> dict[str, Any]:
    return {"file_path": file_path, "content": "b\n"}


def fetch(url: str) -> dict[str, Any]:
    return {"url": url, "prompt": "What does the page say?"}


# -- asking Permissions ----------------------------------------------------------------------------
class RecordingApprover:
    """Answers every request the same way and remembers what was asked."""

    def __init__(self, answer: ApprovalAnswer | None = None) -> None:
        self.answer = answer or ApprovalAnswer.allow()
        self.requests: list[Any] = []

    async def __call__(self, request: Any) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answer


def request_for(tool: Tool, input: dict[str, Any], cwd: str, hook: Decision | None = None, tool_use_id: str = "t1") -> PermissionRequest:
    """The request the pipeline makes; the input must be one the tool accepts."""
    parsed = tool.input_model.model_validate(input)
    return PermissionRequest(tool, input, parsed, ToolContext(cwd), tool_use_id, hook)


async def outcome(perms: Permissions, tool_name: str, input: dict[str, Any], cwd: str, hook: Decision | None = None) -> tuple[str, Decision]:
    """"ask" when the approver was consulted, else the final behavior."""
    approver = RecordingApprover()
    perms.approver = approver
    decision = await perms.decide(request_for(TOOLS[tool_name], input, cwd, hook))
    return ("ask" if approver.requests else decision.behavior), decision
