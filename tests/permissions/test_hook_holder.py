"""Hooks have one holder: the permissions that came with them, or the scheduler they were
given to. The pipeline's PreToolUse and the gate's PermissionRequest hooks are one object."""

from __future__ import annotations

from pathlib import Path

import nbtoolsched as nts


@nts.tool()
async def deploy(target: str = "prod") -> str:
    """Deploy (every call asks)."""
    return f"deployed {target}"


async def allow(request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
    return nts.ApprovalAnswer.allow()


def recording(log: list[tuple[str, str]], tag: str) -> nts.Hooks:
    """PreToolUse and PermissionRequest hooks that say who fired."""
    hooks = nts.Hooks()
    for event in ("PreToolUse", "PermissionRequest"):
        hooks.add(event, lambda payload, event=event: log.append((tag, event)), "deploy")
    return hooks


async def run(sched: nts.Scheduler) -> None:
    [result] = await sched.run([{"type": "tool_use", "id": "toolu_1", "name": "deploy", "input": {}}])
    assert result.text == "deployed prod"


async def test_the_permissions_hold_their_hooks_and_the_scheduler_keeps_no_copy(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    perms = nts.Permissions(cwd=tmp_path, approver=allow, hooks=recording(log, "first"))
    sched = nts.Scheduler(nts.ToolRegistry([deploy]), permissions=perms, cwd=tmp_path)
    assert sched.hooks is perms.hooks
    assert not any(isinstance(value, nts.Hooks) for value in vars(sched.pipeline).values())
    await run(sched)
    assert log == [("first", "PreToolUse"), ("first", "PermissionRequest")]

    log.clear()
    perms.hooks = recording(log, "second")  # one holder: the scheduler sees the change at once
    assert sched.hooks is perms.hooks
    await run(sched)
    assert log == [("second", "PreToolUse"), ("second", "PermissionRequest")]


async def test_hooks_given_to_a_scheduler_replace_the_permissions_ones_for_both_steps(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    perms = nts.Permissions(cwd=tmp_path, approver=allow, hooks=recording(log, "settings"))
    mine = recording(log, "mine")
    sched = nts.Scheduler(nts.ToolRegistry([deploy]), permissions=perms, hooks=mine, cwd=tmp_path)
    assert sched.hooks is mine
    await run(sched)
    assert log == [("mine", "PreToolUse"), ("mine", "PermissionRequest")]
