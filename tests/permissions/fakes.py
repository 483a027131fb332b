"""Small fake tools, so these tests do not depend on the real built-ins."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from nbtoolsched.permissions._engine import Permissions
from nbtoolsched.permissions._base import PermissionRequest
from nbtoolsched.shell._parse import subcommand_strings
from nbtoolsched.tool._decision import Decision, DecisionReason
from nbtoolsched.tool._base import Tool
from nbtoolsched.tool._context import ToolContext

READ_ONLY_HEADS = {"ls", "cat", "grep", "echo", "pwd", "head", "wc", "cd"}
READ_ONLY_GIT = {"log", "status", "diff"}


class BashInput(BaseModel):
    command: str


class FakeBash(Tool):
    name = "Bash"
    permission_kind = "shell"
    input_model = BashInput

    def is_read_only(self, input: Any) -> bool:
        parts = subcommand_strings(input.command)
        if parts is None or ">" in input.command:
            return False
        for part in parts:
            words = part.split()
            if not words:
                continue
            if words[0] == "git" and len(words) > 1 and words[1] in READ_ONLY_GIT:
                continue
            if words[0] not in READ_ONLY_HEADS:
                return False
        return True


class PathInput(BaseModel):
    file_path: str
    content: str = ""


class FakeRead(Tool):
    name = "Read"
    input_model = PathInput
    permission_kind = "read"

    def is_read_only(self, input: Any) -> bool:
        return True

    def get_path(self, input: Any) -> str | None:
        return input.file_path


class FakeEdit(FakeRead):
    name = "Edit"
    permission_kind = "edit"

    def is_read_only(self, input: Any) -> bool:
        return False


class FakeWrite(FakeEdit):
    name = "Write"


class UrlInput(BaseModel):
    url: str


class FakeWebFetch(Tool):
    name = "WebFetch"
    permission_kind = "web"
    input_model = UrlInput

    def is_read_only(self, input: Any) -> bool:
        return True


class AnyInput(BaseModel):
    model_config = {"extra": "allow"}


class FakeMcp(Tool):
    name = "mcp__github__create_issue"
    is_mcp = True
    input_model = AnyInput


class FakeMcpOther(FakeMcp):
    name = "mcp__gitlab__create_issue"


class FakeLookup(Tool):
    """A plain read-only tool with no checks of its own."""

    name = "Lookup"
    input_model = AnyInput

    def is_read_only(self, input: Any) -> bool:
        return True


class FakeDeploy(Tool):
    name = "Deploy"
    input_model = AnyInput


class FakeAgent(Tool):
    name = "Agent"
    input_model = AnyInput


class FakeQuestion(Tool):
    """Needs a person whatever the mode (like AskUserQuestion)."""

    name = "AskUserQuestion"
    input_model = AnyInput

    def requires_user_interaction(self) -> bool:
        return True

    async def check_permissions(self, input: Any, ctx: ToolContext) -> Decision:
        return Decision.ask("Answer the question", DecisionReason("tool", "needs the user"))


class FakeGuarded(Tool):
    """Refuses a target on its own, whatever the rules or mode say."""

    name = "Guarded"
    input_model = AnyInput

    async def check_permissions(self, input: Any, ctx: ToolContext) -> Decision:
        if getattr(input, "target", None) == "prod":
            return Decision.deny("never prod", DecisionReason("tool", "own check"))
        return Decision.allow(None, DecisionReason("tool", "own check allows"))


TOOLS = {
    cls.name: cls()
    for cls in (FakeBash, FakeRead, FakeEdit, FakeWrite, FakeWebFetch, FakeMcp, FakeMcpOther, FakeLookup, FakeDeploy, FakeAgent, FakeQuestion, FakeGuarded)
}


class RecordingApprover:
    """Answers every request the same way and remembers what was asked."""

    def __init__(self, answer=None) -> None:
        from nbtoolsched.permissions._approvals import ApprovalAnswer

        self.answer = answer or ApprovalAnswer.allow()
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answer


def request_for(tool: Tool, input: dict[str, Any], cwd: str, hook: Decision | None = None, tool_use_id: str = "t1") -> PermissionRequest:
    parsed = tool.input_model.model_validate(input)
    return PermissionRequest(tool, input, parsed, ToolContext(cwd), tool_use_id, hook)


async def outcome(perms: Permissions, tool_name: str, input: dict[str, Any], cwd: str, hook: Decision | None = None) -> tuple[str, Decision]:
    """"ask" when the approver was consulted, else the final behavior."""
    approver = RecordingApprover()
    perms.approver = approver
    decision = await perms.decide(request_for(TOOLS[tool_name], input, cwd, hook))
    return ("ask" if approver.requests else decision.behavior), decision
