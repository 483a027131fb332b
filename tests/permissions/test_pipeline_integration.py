"""Permissions and Hooks plugged into the execution pipeline, end to end."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from nbtoolsched.execution._pipeline import CallPipeline
from nbtoolsched.execution._prepare import prepare_call
from nbtoolsched.permissions._approvals import ApprovalBroker
from nbtoolsched.permissions._hooks import CommandHook, Hooks
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.tool._context import ToolContext

from .fakes import FakeBash

HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"


class RunnableBash(FakeBash):
    async def call(self, input: Any, ctx: ToolContext) -> Any:
        return f"ran: {input.command}"


async def run(perms: Permissions, hooks: Hooks | None, command: str, tmp_path) -> Any:
    registry = ToolRegistry([RunnableBash()])
    call = prepare_call(0, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}}, registry)
    return await CallPipeline(perms, hooks).run(call, ToolContext(tmp_path, session_dir=tmp_path / "session"))


def _text(outcome) -> str:
    content = outcome.result.content
    return content if isinstance(content, str) else str(content)


async def test_hook_allow_runs_but_deny_rule_wins(tmp_path):
    hooks = Hooks()
    hooks.add("PreToolUse", CommandHook(f"{shlex.quote(sys.executable)} {shlex.quote(str(HOOKS / 'decide.py'))} allow"), "Bash")
    perms = Permissions(deny=["Bash(rm:*)"], cwd=tmp_path, approver=ApprovalBroker("deny"))
    ran = await run(perms, hooks, "npm install", tmp_path)
    assert not ran.is_error and "ran: npm install" in _text(ran)
    denied = await run(perms, hooks, "rm -rf build", tmp_path)
    assert denied.is_error and "Bash(rm:*)" in _text(denied)


async def test_failing_hook_is_a_notice_and_the_call_runs(tmp_path):
    hooks = Hooks()
    hooks.add("PreToolUse", CommandHook(str(HOOKS / "garbage.sh")))
    outcome = await run(Permissions(allow=["Bash"], cwd=tmp_path), hooks, "ls", tmp_path)
    assert not outcome.is_error and "ran: ls" in _text(outcome)
    assert [n.kind for n in outcome.hook_notices] == ["invalid_output"] and "garbage.sh" in outcome.hook_notices[0].hook
    assert not any("garbage" in str(a) for a in outcome.attachments)  # for the person, not the model


async def test_failing_hook_stops_the_call_under_strict_hooks(tmp_path):
    hooks = Hooks(strict=True)
    hooks.add("PreToolUse", CommandHook(str(HOOKS / "garbage.sh")))
    outcome = await run(Permissions(allow=["Bash"], cwd=tmp_path), hooks, "ls", tmp_path)
    assert outcome.is_error and "garbage.sh" in _text(outcome) and "ran:" not in _text(outcome)
    assert outcome.hook_notices[0].blocked


async def test_deferred_approval_is_reported(tmp_path):
    outcome = await run(Permissions(cwd=tmp_path, approver=ApprovalBroker("defer")), None, "npm install", tmp_path)
    assert outcome.status == "deferred" and outcome.deferred.tool_use_id == "toolu_1"
