"""The engine remembers decisions about plain @tool functions (they cannot depend on the
input); nothing that could change a decision may be hidden by that memory."""

from __future__ import annotations

from pathlib import Path

import nbtoolsched as nts
from nbtoolsched.models import tool_use
from nbtoolsched import Decision


@nts.tool
async def deploy(target: str) -> str:
    """Not read-only: asks unless a rule allows it."""
    return f"deployed {target}"


@nts.tool(read_only=True)
async def lookup(key: str) -> str:
    """Read-only: allowed unless a rule says otherwise."""
    return f"value of {key}"


class Counting:
    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
        self.asked += 1
        return nts.ApprovalAnswer.deny("no")


async def _statuses(sched: nts.Scheduler, name: str, n: int = 3, **kw: object) -> list[str]:
    blocks = [tool_use(name, id=f"toolu_{name}_{i}", **({"target": "prod"} if name == "deploy" else {"key": "k"})) for i in range(n)]
    return [o.status for o in (await sched.run_outcomes(blocks, **kw)).outcomes]  # type: ignore[arg-type]


async def test_a_rule_added_after_a_remembered_decision_changes_the_next_one(tmp_path: Path) -> None:
    refuser = Counting()
    perms = nts.Permissions(cwd=tmp_path, approver=refuser)
    sched = nts.Scheduler(nts.ToolRegistry([deploy, lookup]), permissions=perms, cwd=tmp_path)
    assert await _statuses(sched, "lookup") == ["completed"] * 3
    assert await _statuses(sched, "deploy") == ["denied"] * 3 and refuser.asked == 3
    perms.add_rule("deploy")
    assert await _statuses(sched, "deploy") == ["completed"] * 3 and refuser.asked == 3
    perms.add_rule("lookup", "ask")
    assert await _statuses(sched, "lookup") == ["denied"] * 3 and refuser.asked == 6
    perms.add_session_rule("deploy", "ask")
    assert await _statuses(sched, "deploy") == ["denied"] * 3 and refuser.asked == 9


async def test_the_mode_of_each_run_is_decided_on_its_own(tmp_path: Path) -> None:
    perms = nts.Permissions(cwd=tmp_path, approver=Counting())
    sched = nts.Scheduler(nts.ToolRegistry([deploy]), permissions=perms, cwd=tmp_path)
    assert await _statuses(sched, "deploy", mode="bypassPermissions") == ["completed"] * 3
    assert await _statuses(sched, "deploy") == ["denied"] * 3
    assert await _statuses(sched, "deploy", mode="plan") == ["denied"] * 3
    assert await _statuses(sched, "deploy", mode="bypassPermissions") == ["completed"] * 3


async def test_a_check_set_on_one_tool_object_is_honoured_after_a_remembered_decision(tmp_path: Path) -> None:
    @nts.tool(read_only=True)
    async def peek(key: str) -> str:
        """Read-only."""
        return key

    perms = nts.Permissions(cwd=tmp_path, approver=Counting())
    sched = nts.Scheduler(nts.ToolRegistry([peek]), permissions=perms, cwd=tmp_path)
    blocks = [tool_use("peek", id=f"toolu_peek_{i}", key=k) for i, k in enumerate(["a", "secret"])]
    assert [o.status for o in (await sched.run_outcomes(blocks)).outcomes] == ["completed", "completed"]

    async def refuse_secrets(parsed: object, ctx: object) -> Decision:
        if getattr(parsed, "key", "") == "secret":
            return Decision.deny("no secrets")
        return Decision.passthrough()

    peek.check_permissions = refuse_secrets  # type: ignore[method-assign]
    assert [o.status for o in (await sched.run_outcomes(blocks)).outcomes] == ["completed", "denied"]
