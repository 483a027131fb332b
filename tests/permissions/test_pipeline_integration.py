"""Permissions and Hooks plugged into the execution pipeline, end to end, with the real Bash tool."""

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
from nbtoolsched._tool._context import ToolContext
from nbtoolsched.tools import BashTool

HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"


async def run(perms: Permissions, hooks: Hooks | None, command: str, tmp_path) -> Any:
    registry = ToolRegistry([BashTool()])
    call = prepare_call(0, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}}, registry)
    return await CallPipeline(perms, hooks).run(call, ToolContext(tmp_path, session_dir=tmp_path / "session"))


def _text(outcome) -> str:
    content = outcome.result.content
    return content if isinstance(content, str) else str(content)


async def test_hook_allow_runs_but_deny_rule_wins(tmp_path):
    hooks = Hooks()
    hooks.add("PreToolUse", CommandHook(f"{shlex.quote(sys.executable)} {shlex.quote(str(HOOKS / 'decide.py'))} allow"), "Bash")
    perms = Permissions(deny=["Bash(rm:*)"], cwd=tmp_path, approver=ApprovalBroker("deny"))
    (tmp_path / "build").mkdir()
    ran = await run(perms, hooks, "touch made.txt && echo made", tmp_path)
    assert not ran.is_error and "made" in _text(ran) and (tmp_path / "made.txt").exists()
    denied = await run(perms, hooks, "rm -rf build", tmp_path)
    assert denied.is_error and "Bash(rm:*)" in _text(denied) and (tmp_path / "build").exists()


async def test_failing_hook_is_a_notice_and_the_call_runs(tmp_path):
    hooks = Hooks()
    hooks.add("PreToolUse", CommandHook(str(HOOKS / "garbage.sh")))
    outcome = await run(Permissions(allow=["Bash"], cwd=tmp_path), hooks, "touch made.txt && echo made", tmp_path)
    assert not outcome.is_error and "made" in _text(outcome) and (tmp_path / "made.txt").exists()
    assert [n.kind for n in outcome.hook_notices] == ["invalid_output"] and "garbage.sh" in outcome.hook_notices[0].hook
    assert not any("garbage" in str(a) for a in outcome.attachments)  # for the person, not the model


async def test_failing_hook_stops_the_call_under_strict_hooks(tmp_path):
    hooks = Hooks(strict=True)
    hooks.add("PreToolUse", CommandHook(str(HOOKS / "garbage.sh")))
    outcome = await run(Permissions(allow=["Bash"], cwd=tmp_path), hooks, "touch made.txt && echo made", tmp_path)
    assert outcome.is_error and "garbage.sh" in _text(outcome) and not (tmp_path / "made.txt").exists()
    assert outcome.hook_notices[0].blocked


async def test_deferred_approval_is_reported(tmp_path):
    outcome = await run(Permissions(cwd=tmp_path, approver=ApprovalBroker("defer")), None, "touch made.txt", tmp_path)
    assert outcome.status == "deferred" and outcome.deferred.tool_use_id == "toolu_1"
    assert not (tmp_path / "made.txt").exists()
