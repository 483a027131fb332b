"""An input a PermissionRequest hook or the approver puts in place is checked like the model's.

Claude Code runs either one's ``updatedInput`` as given; here it meets the schema, the
tool's ``validate_input``, deny and ask rules, the tool's own check (the read-only
analysis of a new command) and plan mode, as a PreToolUse hook's ``updatedInput`` does.
Real built-in tools, real bash.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.internals import PythonHook
from nbtoolsched.models._scripted import tool_use
from nbtoolsched.speculation import scripted_loop, speculate

_ids = itertools.count()


class Approver:
    """Answers from a list (the last answer repeats) and records what it was asked."""

    def __init__(self, *answers: nts.ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, request: Any) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "victim").mkdir(parents=True)
    (proj / "victim" / "keep.txt").write_text("keep\n")
    return proj.resolve()


def rewriting_hooks(new_input: dict[str, Any]) -> nts.Hooks:
    """A PermissionRequest hook that answers for the person: allow, with ``new_input``."""

    def hook(payload: dict[str, Any]) -> dict[str, Any]:
        decision = {"behavior": "allow", "updatedInput": new_input}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    hooks = nts.Hooks()
    hooks.add("PermissionRequest", PythonHook(hook, name="rewriter"), "Bash")
    return hooks


async def run_bash(project: Path, approver: Approver, command: str, hooks: nts.Hooks | None = None, **rules: Any) -> nts.ToolResultBlock:
    perms = nts.Permissions(mode=rules.pop("mode", "default"), cwd=project, approver=approver, **rules)
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, hooks=hooks, cwd=project)
    (result,) = await sched.run([tool_use("Bash", id=f"toolu_chg_{next(_ids)}", command=command)])
    return result


# -- a PermissionRequest hook's updatedInput ------------------------------------------------------


async def test_hook_input_an_ask_rule_objects_to_goes_to_the_person(project):
    approver = Approver(nts.ApprovalAnswer.deny("no"))
    hooks = rewriting_hooks({"command": "rm -rf victim"})
    result = await run_bash(project, approver, "touch made.txt", hooks, ask=["Bash(rm:*)"])
    assert result.is_error and (project / "victim" / "keep.txt").exists()
    assert [r.input["command"] for r in approver.asked] == ["rm -rf victim"]
    assert "Bash(rm:*)" in approver.asked[0].reason
    assert not any("touch" in rule for rule in approver.asked[0].suggested_rules)  # "always" would save a rule for rm


async def test_hook_input_nothing_objects_to_runs_without_asking(project):
    approver = Approver(nts.ApprovalAnswer.deny("no"))
    result = await run_bash(project, approver, "touch made.txt", rewriting_hooks({"command": "touch by-hook.txt"}))
    assert not result.is_error, result.text
    assert (project / "by-hook.txt").exists() and not (project / "made.txt").exists()
    assert approver.asked == []


async def test_hook_input_the_tool_cannot_take_is_refused(project):
    approver = Approver(nts.ApprovalAnswer.allow())
    result = await run_bash(project, approver, "touch made.txt", rewriting_hooks({"command": 5}))
    assert result.is_error and "does not accept" in result.text and "rewriter" in result.text
    assert not (project / "made.txt").exists()


async def test_hook_input_is_held_to_the_tools_own_validation(project):
    approver = Approver(nts.ApprovalAnswer.allow())
    hooks = rewriting_hooks({"command": "touch in-background.txt", "run_in_background": True})
    result = await run_bash(project, approver, "touch made.txt", hooks)
    assert result.is_error and "run_in_background" in result.text and "rewriter" in result.text
    assert not (project / "in-background.txt").exists() and not (project / "made.txt").exists()


async def test_hook_input_meets_plan_mode(project):
    # A read-only call that an ask rule sends to a person in plan mode; the hook's answer
    # turns it into a write, which plan mode refuses.
    approver = Approver(nts.ApprovalAnswer.allow())
    hooks = rewriting_hooks({"command": "touch planned.txt"})
    result = await run_bash(project, approver, "ls", hooks, mode="plan", ask=["Bash(ls:*)"])
    assert result.is_error and "Plan mode" in result.text
    assert not (project / "planned.txt").exists() and approver.asked == []


# -- the approver's updated_input ----------------------------------------------------------------


async def test_approver_input_meets_deny_rules(project):
    approver = Approver(nts.ApprovalAnswer.allow(updated_input={"command": "rm -rf victim"}))
    result = await run_bash(project, approver, "touch made.txt", deny=["Bash(rm:*)"])
    assert result.is_error and "Bash(rm:*)" in result.text
    assert (project / "victim" / "keep.txt").exists() and len(approver.asked) == 1


async def test_approver_is_asked_again_about_an_objection_it_was_not_shown(project):
    approver = Approver(nts.ApprovalAnswer.allow(updated_input={"command": "rm -rf victim"}), nts.ApprovalAnswer.deny("no"))
    result = await run_bash(project, approver, "touch made.txt", ask=["Bash(rm:*)"])
    assert result.is_error and (project / "victim" / "keep.txt").exists()
    assert [r.input["command"] for r in approver.asked] == ["touch made.txt", "rm -rf victim"]
    assert "Bash(rm:*)" in approver.asked[1].reason


async def test_approver_input_approved_again_runs(project):
    approver = Approver(nts.ApprovalAnswer.allow(updated_input={"command": "touch edited.txt"}))
    result = await run_bash(project, approver, "touch made.txt", ask=["Bash(touch edited.txt)"])
    assert not result.is_error, result.text
    assert (project / "edited.txt").exists() and not (project / "made.txt").exists()
    assert [r.input["command"] for r in approver.asked] == ["touch made.txt", "touch edited.txt"]


async def test_approver_that_keeps_editing_is_refused_in_the_end(project):
    counter = itertools.count()

    class Editor(Approver):
        async def __call__(self, request: Any) -> nts.ApprovalAnswer:
            self.asked.append(request)
            return nts.ApprovalAnswer.allow(updated_input={"command": f"touch edit-{next(counter)}.txt"})

    rules = [f"Bash(touch edit-{i}.txt)" for i in range(10)]
    approver = Editor()
    result = await run_bash(project, approver, "touch made.txt", ask=rules)
    assert result.is_error and "kept changing" in result.text
    assert not list(project.glob("edit-*.txt")) and len(approver.asked) <= 5


async def test_approver_input_unchanged_by_the_checks_runs_with_one_question(project):
    approver = Approver(nts.ApprovalAnswer.allow(updated_input={"command": "touch edited.txt"}))
    result = await run_bash(project, approver, "touch made.txt")
    assert not result.is_error and (project / "edited.txt").exists() and len(approver.asked) == 1


# -- a speculation runs only the input its sandbox judged -----------------------------------------


async def test_speculation_stops_when_a_permission_request_hook_changes_the_input(project, tmp_path):
    hooks = rewriting_hooks({"command": "ls victim && rm -rf victim"})
    perms = nts.Permissions(cwd=project, ask=["Bash(ls:*)"], approver=Approver(nts.ApprovalAnswer.deny()))
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, hooks=hooks, cwd=project,
                          session_dir=tmp_path / "session")
    turns = [[{"type": "tool_use", "id": "toolu_spec_1", "name": "Bash", "input": {"command": "ls"}}],
             [{"type": "text", "text": "done"}]]
    spec = await speculate("go", scripted_loop(turns), scheduler=sched)
    assert spec.boundary is not None and spec.boundary.kind == "permission", spec.boundary
    assert (project / "victim" / "keep.txt").exists()
