"""Permissions as a whole: hiding tools, explain(), modes, auto-mode denial tracking, invariants."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbtoolsched.permissions._approvals import ApprovalBroker
from nbtoolsched.permissions._classifier import ClassifierVerdict
from nbtoolsched.permissions._modes import MODES
from nbtoolsched.permissions._errors import PermissionConfigError
from nbtoolsched.permissions._base import PermissionGate
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._tool._decision import Decision, DecisionReason

from .toolbox import TOOLS, RecordingApprover, edit, mcp_tool, outcome, read, request_for, write


def test_is_a_permission_gate(tmp_path):
    assert isinstance(Permissions(cwd=tmp_path), PermissionGate)


@pytest.mark.parametrize(
    "deny,tool,hidden",
    [
        (["Bash"], "Bash", True),
        (["Bash(rm:*)"], "Bash", False),
        (["mcp__github"], "mcp__github__create_issue", True),
        (["mcp__github__*"], "mcp__github__create_issue", True),
        (["mcp__github"], "mcp__gitlab__create_issue", False),
        (["Read"], "Edit", False),
    ],
)
def test_hides_only_blanket_denied_tools(deny, tool, hidden, tmp_path):
    assert Permissions(deny=deny, cwd=tmp_path).hides(TOOLS[tool]) is hidden


def test_explain_names_rule_and_source(tmp_path):
    perms = Permissions(allow=["Bash(git log:*)"], deny=["Bash(rm:*)"], cwd=tmp_path, tools=[TOOLS["Bash"]])
    allowed = perms.explain("Bash", {"command": "git log -3"})
    assert allowed.behavior == "allow" and allowed.rule == "Bash(git log:*)" and allowed.decided_by == "rule"
    denied = perms.explain("Bash", {"command": "ls && rm -rf x"})
    assert denied.behavior == "deny" and denied.rule == "Bash(rm:*)" and denied.source == "python"
    assert "Bash(rm:*)" in str(denied)


def test_explain_modes_and_hooks(tmp_path):
    perms = Permissions("dontAsk", cwd=tmp_path)
    result = perms.explain("Deploy", {})
    assert result.behavior == "deny" and result.decided_by == "mode" and "dontAsk" in " ".join(result.steps)
    hook = Decision.deny("hook says no", DecisionReason("hook", "nope", source="PreToolUse:Read my-hook"))
    assert Permissions(cwd=tmp_path).explain(TOOLS["Read"], read("a"), hook_decision=hook).decided_by == "hook"
    assert Permissions("plan", cwd=tmp_path).explain(TOOLS["Write"], write("a")).decided_by == "mode"


async def test_explain_works_inside_a_running_loop(tmp_path):
    perms = Permissions(tools=[TOOLS["Bash"]], cwd=tmp_path)
    assert perms.explain("Bash", {"command": "git status"}).behavior == "allow"


def test_mode_setter_checks(tmp_path):
    perms = Permissions(cwd=tmp_path)
    for mode in MODES:
        perms.mode = mode
    with pytest.raises(PermissionConfigError):
        perms.mode = "yolo"


async def test_dont_ask_message_is_clear(tmp_path):
    _, decision = await outcome(Permissions("dontAsk", cwd=tmp_path), "Deploy", {}, str(tmp_path))
    assert "never asks" in decision.message and not decision.abort_turn


class AlwaysNo:
    def __init__(self):
        self.calls = 0

    async def classify(self, request):
        self.calls += 1
        return ClassifierVerdict(False, "not today")


async def test_auto_mode_falls_back_to_asking_after_three_denials_in_a_row(tmp_path):
    classifier = AlwaysNo()
    perms = Permissions("auto", classifier=classifier, cwd=tmp_path)
    for _ in range(3):
        got, decision = await outcome(perms, "Deploy", {}, str(tmp_path))
        assert got == "deny" and decision.reason.kind == "classifier" and "not today" in decision.message
    got, _ = await outcome(perms, "Deploy", {}, str(tmp_path))
    assert got == "ask" and classifier.calls == 3
    # the person approved: the streak is over, the classifier is trusted again
    got, _ = await outcome(perms, "Deploy", {}, str(tmp_path))
    assert got == "deny" and classifier.calls == 4


async def test_auto_mode_falls_back_after_twenty_denials_in_all(tmp_path):
    classifier = AlwaysNo()
    perms = Permissions("auto", classifier=classifier, cwd=tmp_path, allow=["Lookup"])
    for i in range(20):
        if i % 2 == 0:
            await outcome(perms, "Lookup", {}, str(tmp_path))  # an allow resets only the streak
        assert (await outcome(perms, "Deploy", {}, str(tmp_path)))[0] == "deny"
    assert perms.denials.total == 20
    assert (await outcome(perms, "Deploy", {}, str(tmp_path)))[0] == "ask"


async def test_auto_mode_safe_tools_and_interactive_tools(tmp_path):
    perms = Permissions("auto", classifier=AlwaysNo(), cwd=tmp_path)
    assert (await outcome(perms, "Read", read("/etc/hosts"), str(tmp_path)))[0] == "allow"
    assert (await outcome(perms, "AskUserQuestion", {}, str(tmp_path)))[0] == "ask"


async def test_mcp_tool_is_not_auto_allowed_for_being_read_only(tmp_path):
    read_only = mcp_tool("github", "list_issues", readOnlyHint=True)
    assert read_only.is_read_only(None)
    approver = RecordingApprover()
    perms = Permissions(cwd=tmp_path, approver=approver)
    await perms.decide(request_for(read_only, {}, str(tmp_path)))
    assert len(approver.requests) == 1


async def test_plan_mode_message(tmp_path):
    _, decision = await outcome(Permissions("plan", cwd=tmp_path), "Bash", {"command": "npm install"}, str(tmp_path))
    assert "Plan mode" in decision.message


async def test_unsplittable_command_fails_closed(tmp_path):
    perms = Permissions(cwd=tmp_path, allow=["Bash(echo:*)"], split_command=lambda c: None)
    assert (await outcome(perms, "Bash", {"command": "echo hi"}, str(tmp_path)))[0] == "ask"


_HOOKS = st.sampled_from([None, "allow", "ask", "deny"])
_TOOL_INPUTS = st.sampled_from(
    [("Bash", {"command": "rm -rf build"}), ("Bash", {"command": "ls && rm x"}), ("Edit", edit("src/a.py")),
     ("Read", read("src/a.py")), ("Deploy", {}), ("mcp__github__create_issue", {})]
)
_DENY_FOR = {"Bash": "Bash(rm:*)", "Edit": "Edit(./src/**)", "Read": "Read(./src/**)", "Deploy": "Deploy", "mcp__github__create_issue": "mcp__github"}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(MODES), hook=_HOOKS, call=_TOOL_INPUTS, extra_allow=st.booleans(), answer=st.sampled_from(["allow", "deny"]))
async def test_a_matching_deny_rule_always_wins(mode, hook, call, extra_allow, answer, tmp_path):
    tool_name, data = call
    allow = [tool_name.split("__")[0] if tool_name.startswith("mcp") else tool_name] if extra_allow else []
    perms = Permissions(mode, deny=[_DENY_FOR[tool_name]], allow=allow, cwd=tmp_path, approver=ApprovalBroker(answer))
    hook_decision = {
        "allow": Decision.allow(None, DecisionReason("hook", "h")),
        "ask": Decision.ask("h", DecisionReason("hook", "h")),
        "deny": Decision.deny("h", DecisionReason("hook", "h")),
    }.get(hook)
    decision = await perms.decide(request_for(TOOLS[tool_name], data, str(tmp_path), hook_decision))
    assert decision.behavior == "deny"


@pytest.mark.parametrize("command", ["ls src", "git status", "git log --oneline", "cat src/a.py", "rm src/a.py",
                                     "echo hi > out.txt", "cat ../outside/file.txt", "git diff --ext-diff"])
def test_explain_by_name_judges_bash_as_the_real_tool_does(project, command):
    """Without ``tools=``, explain("Bash", ...) runs the read-only analysis BashTool runs
    (it used to call no command read-only, and so asked where a run allows)."""
    import subprocess

    from nbtoolsched.tools import BashTool

    root, _ = project
    perms = Permissions(cwd=str(root))
    by_name = perms.explain("Bash", {"command": command})
    real = perms.explain(BashTool(), {"command": command})
    assert (by_name.behavior, by_name.decision.message) == (real.behavior, real.decision.message)
    subprocess.run(["git", "-C", str(root), "config", "core.fsmonitor", "touch pwned"], check=True)
    # A repository whose config runs programs makes git not read-only, by name too.
    assert perms.explain("Bash", {"command": command}).behavior == perms.explain(BashTool(), {"command": command}).behavior
