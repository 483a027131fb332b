"""Command hooks run as real subprocesses, Python hooks, matchers and combining."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from nbtoolsched.permissions._hooks import CommandHook, HookBlock, HookMatcher, Hooks, PythonHook
from nbtoolsched.permissions._base import HookEvent
from nbtoolsched.permissions._problems import HookWarning
from nbtoolsched.permissions._errors import PermissionConfigError
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._tool._context import ToolContext

from .toolbox import TOOLS, outcome

HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
PY = sys.executable


def event(tool="Bash", input=None, name="PreToolUse", *, cwd, **extra):
    ctx = ToolContext(cwd, session_id="sess-1", session_dir=Path(cwd) / "session")
    return HookEvent(name, TOOLS[tool], tool, input or {"command": "rm -rf build"}, "toolu_1", ctx, **extra)


def command(script: str, *args: str, timeout: float = 60) -> CommandHook:
    path = HOOKS / script
    prefix = f"{PY} " if script.endswith(".py") else ""
    return CommandHook(prefix + " ".join(shlex.quote(a) for a in [str(path), *args]), timeout)


def hooks_with(*hooks, matcher="*", event_name="PreToolUse") -> Hooks:
    runner = Hooks()
    for hook in hooks:
        runner.add(event_name, hook, matcher)
    return runner


async def test_exit_2_blocks_with_stderr_for_the_model(tmp_path):
    out = await hooks_with(command("block_exit2.sh")).pre_tool_use(event(cwd=tmp_path))
    assert out.decision is not None and out.decision.behavior == "deny"
    assert "rm is not allowed in this repository" in out.decision.message
    assert out.stop is None


@pytest.mark.parametrize("verdict", ["allow", "deny", "ask"])
async def test_json_permission_decision(verdict, tmp_path):
    out = await hooks_with(command("decide.py", verdict)).pre_tool_use(event(cwd=tmp_path))
    assert out.decision.behavior == verdict
    assert out.decision.reason.kind == "hook"
    assert f"says {verdict}" in (out.decision.message or "") + (out.decision.reason.detail or "")


@pytest.mark.parametrize("verdict,expected", [("allow", "allow"), ("deny", "deny")])
async def test_legacy_approve_block(verdict, expected, tmp_path):
    out = await hooks_with(command("decide.py", verdict, "--legacy")).pre_tool_use(event(cwd=tmp_path))
    assert out.decision.behavior == expected


async def test_stdin_payload_follows_claude_code(tmp_path):
    log = tmp_path / "payload.json"
    await hooks_with(command("decide.py", "none", "--log", str(log))).pre_tool_use(event(cwd=tmp_path))
    payload = json.loads(log.read_text())
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Bash"
    assert payload["tool_input"] == {"command": "rm -rf build"}
    assert payload["tool_use_id"] == "toolu_1"
    assert payload["session_id"] == "sess-1"
    assert payload["cwd"] == str(tmp_path.resolve())
    # A real transcript file, even without an agent: it holds the call being checked.
    transcript = [json.loads(line) for line in Path(payload["transcript_path"]).read_text().splitlines()]
    assert transcript[-1]["message"]["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "rm -rf build"}}]


async def test_post_payload_carries_response_and_error(tmp_path):
    log = tmp_path / "p.json"
    runner = hooks_with(command("decide.py", "none", "--log", str(log), "--context", "ran fine"), event_name="PostToolUse")
    out = await runner.post_tool_use(event(name="PostToolUse", cwd=tmp_path, tool_response={"stdout": "ok"}))
    assert json.loads(log.read_text())["tool_response"] == {"stdout": "ok"}
    assert out.additional_context == ["ran fine"]
    runner = hooks_with(command("decide.py", "none", "--log", str(log)), event_name="PostToolUseFailure")
    await runner.post_tool_use_failure(event(name="PostToolUseFailure", cwd=tmp_path, error="exit 1"))
    assert json.loads(log.read_text())["error"] == "exit 1"


async def test_updated_input_with_and_without_decision(tmp_path):
    out = await hooks_with(command("decide.py", "allow", "--update")).pre_tool_use(event(cwd=tmp_path))
    assert out.decision.updated_input == {"command": "rm -rf build --dry-run"}
    out = await hooks_with(command("decide.py", "none", "--update")).pre_tool_use(event(cwd=tmp_path))
    assert out.decision is None and out.updated_input == {"command": "rm -rf build --dry-run"}


async def test_continue_false_and_context(tmp_path):
    out = await hooks_with(command("decide.py", "none", "--stop", "enough for today", "--context", "note")).pre_tool_use(event(cwd=tmp_path))
    assert out.prevent_continuation and out.stop_reason == "enough for today"
    assert out.additional_context == ["note"]


@pytest.mark.parametrize("script", ["garbage.sh", "bad_schema.py"])
async def test_garbage_output_is_reported_and_the_call_goes_on(script, tmp_path):
    """Claude Code ignores an answer it cannot read and lets the call go ahead."""
    out = await hooks_with(command(script)).pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.decision is None
    [notice] = out.notices
    assert notice.kind == "invalid_output" and script in notice.hook and "JSON" in notice.message and not notice.blocked


@pytest.mark.parametrize("script", ["garbage.sh", "bad_schema.py"])
async def test_garbage_output_blocks_under_strict_hooks(script, tmp_path):
    runner = hooks_with(command(script))
    runner.strict = True
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is not None and script in out.stop and "JSON" in out.stop and "strict" in out.stop
    assert out.notices[0].blocked


@pytest.mark.heavy  # waits for a hook's timeout, twice
async def test_timeout_is_a_notice_and_blocks_under_strict_hooks(tmp_path):
    out = await hooks_with(command("slow.sh", timeout=0.5)).pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.notices[0].kind == "timeout" and "slow.sh" in out.notices[0].hook
    runner = hooks_with(command("slow.sh", timeout=0.5))
    runner.strict = True
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is not None and "0.5 s" in out.stop and "slow.sh" in out.stop


async def test_command_missing_at_run_time_exits_127_and_the_call_goes_on(tmp_path):
    runner = Hooks()
    runner.add("PreToolUse", CommandHook("definitely-not-a-command-xyz"), check=False)
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.notices[0].kind == "missing_program"
    assert "127" in out.notices[0].message and out.notices[0].hook == "definitely-not-a-command-xyz"
    runner.strict = True
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is not None and "definitely-not-a-command-xyz" in out.stop


def test_missing_command_is_a_warning_not_a_load_error():
    runner = Hooks()
    with pytest.warns(HookWarning, match="not on PATH"):
        runner.add("PreToolUse", CommandHook("definitely-not-a-command-xyz"))
    with pytest.warns(HookWarning, match="does not exist"):
        runner.add("PreToolUse", CommandHook(str(HOOKS / "nope.sh")))
    with pytest.warns(HookWarning, match="does not exist"):
        runner.add("PreToolUse", CommandHook(f"{PY} {HOOKS / 'nope.py'}"))
    assert len(runner.matchers["PreToolUse"]) == 3 and len(runner.load_warnings) == 3


async def test_non_blocking_error_and_plain_text_let_the_call_go(tmp_path):
    out = await hooks_with(command("nonblocking.sh"), command("plain_text.sh")).pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.decision is None
    assert any("lint server unreachable" in str(n) and n.kind == "exit_status" for n in out.notices)


async def test_parallel_hooks_combine_deny_over_ask_over_allow(tmp_path):
    runner = hooks_with(command("decide.py", "allow"), command("decide.py", "deny"), command("decide.py", "ask"))
    assert (await runner.pre_tool_use(event(cwd=tmp_path))).decision.behavior == "deny"
    runner = hooks_with(command("decide.py", "allow"), command("decide.py", "ask"))
    assert (await runner.pre_tool_use(event(cwd=tmp_path))).decision.behavior == "ask"


@pytest.mark.parametrize(
    "matcher,tool,fires",
    [("Bash", "Bash", True), ("Bash", "Read", False), ("Edit|Write", "Write", True), ("Edit|Write", "Read", False),
     ("mcp__github__.*", "mcp__github__create_issue", True), ("mcp__github__.*", "mcp__gitlab__create_issue", False),
     ("*", "Read", True), ("", "Deploy", True), ("Bas", "Bash", False),
     # Claude Code searches a regex matcher in the name, unanchored
     ("(Edit|Write)", "NotebookEdit", True), ("Edit.*", "NotebookEdit", True), ("^Edit$", "NotebookEdit", False),
     ("Edit|Write", "NotebookEdit", False), ("mcp__.*__delete", "mcp__db__delete_row", True),
     ("Bash-x", "Bash-x", True), ("Bash-x", "Bash", False)],
)
def test_matchers(matcher, tool, fires):
    assert HookMatcher(matcher, ()).matches(tool) is fires


def test_bad_regex_matcher_is_a_load_error():
    with pytest.raises(PermissionConfigError):
        HookMatcher("Bash(", ())


async def test_python_hooks_sync_async_block_and_crash(tmp_path):
    seen = []

    def sync_hook(payload):
        seen.append(payload["tool_name"])
        return {"hookSpecificOutput": {"permissionDecision": "allow"}}

    async def async_hook(payload):
        return None

    def blocker(payload):
        raise HookBlock("no deploys on Fridays")

    def broken(payload):
        raise RuntimeError("boom")

    out = await hooks_with(sync_hook, async_hook).pre_tool_use(event(cwd=tmp_path))
    assert out.decision.behavior == "allow" and seen == ["Bash"]
    out = await hooks_with(blocker).pre_tool_use(event(cwd=tmp_path))
    assert out.decision.behavior == "deny" and "no deploys on Fridays" in out.decision.message
    out = await hooks_with(PythonHook(broken, name="broken-hook")).pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.notices[0].hook == "broken-hook" and "boom" in out.notices[0].message
    strict = hooks_with(PythonHook(broken, name="broken-hook"))
    strict.strict = True
    out = await strict.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is not None and "broken-hook" in out.stop and "boom" in out.stop


async def test_python_hook_timeout(tmp_path):
    import asyncio

    async def slow(payload):
        await asyncio.sleep(30)

    runner = hooks_with(PythonHook(slow, timeout=0.2, name="slow-py"))
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is None and out.notices[0].kind == "timeout" and out.notices[0].hook == "slow-py"
    runner.strict = True
    out = await runner.pre_tool_use(event(cwd=tmp_path))
    assert out.stop is not None and "slow-py" in out.stop


async def test_hook_outcome_through_the_gate(tmp_path):
    """A real hook's allow still loses to a deny rule, and its ask still prompts."""
    runner = hooks_with(command("decide.py", "allow"))
    pre = await runner.pre_tool_use(event(cwd=tmp_path))
    perms = Permissions(deny=["Bash(rm:*)"], cwd=tmp_path)
    got, decision = await outcome(perms, "Bash", {"command": "rm -rf build"}, str(tmp_path), pre.decision)
    assert got == "deny" and decision.reason.kind == "rule"
    perms = Permissions(cwd=tmp_path)
    got, _ = await outcome(perms, "Bash", {"command": "rm -rf build"}, str(tmp_path), pre.decision)
    assert got == "allow"


async def test_updated_input_reaches_the_decision(tmp_path):
    pre = await hooks_with(command("decide.py", "allow", "--update")).pre_tool_use(event(cwd=tmp_path))
    perms = Permissions(cwd=tmp_path)
    _, decision = await outcome(perms, "Bash", {"command": "rm -rf build"}, str(tmp_path), pre.decision)
    assert decision.behavior == "allow" and decision.updated_input == {"command": "rm -rf build --dry-run"}


async def test_updated_input_is_what_rules_see(tmp_path):
    """A hook that rewrites the command into a denied one gets the rewrite denied."""
    pre = await hooks_with(command("decide.py", "allow", "--update")).pre_tool_use(event(cwd=tmp_path, input={"command": "ls"}))
    perms = Permissions(deny=["Bash(ls --dry-run)"], cwd=tmp_path)
    got, _ = await outcome(perms, "Bash", {"command": "ls"}, str(tmp_path), pre.decision)
    assert got == "deny"
