"""Real Claude Code configurations load and behave as in Claude Code.

The project under ``tests/fixtures/hooks/project`` is copied into a temporary folder and
run through the public API: ``Permissions.from_settings`` + ``Scheduler`` + the built-in
tools, with real hook scripts (bash + jq, python3, inline shell) in real subprocesses.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.permissions._hooks import HOOK_EVENTS
from nbtoolsched.permissions._hooks import CLAUDE_CODE_HOOK_EVENTS
from nbtoolsched.permissions._approvals import ApprovalAnswer, ApprovalBroker
from nbtoolsched.permissions._classifier import ClassifierVerdict
from nbtoolsched.permissions._problems import HookWarning, RuleWarning, SettingsWarning
from nbtoolsched.permissions._errors import PermissionConfigError
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._session_log import read_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"


@pytest.fixture(autouse=True)
def _needs_jq() -> None:
    if shutil.which("jq") is None:
        pytest.fail("these tests run real hook scripts that read their input with jq: install jq (apt-get install jq)")


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """The fixture project and user settings, copied where the test may change them."""
    proj, user = tmp_path / "proj", tmp_path / "home" / ".claude"
    shutil.copytree(FIXTURES / "project", proj)
    shutil.copytree(FIXTURES / "user", user)
    return proj.resolve(), user


def load(proj: Path, user: Path, **options: Any) -> Permissions:
    options.setdefault("approver", ApprovalBroker("deny"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingsWarning)
        return Permissions.from_settings(proj, user, **options)


def scheduler(perms: Permissions, proj: Path) -> nts.Scheduler:
    return nts.Scheduler(nts.default_registry(proj), permissions=perms, cwd=proj, session_dir=proj.parent / "session")


async def call(sched: nts.Scheduler, name: str, **tool_input: Any) -> Any:
    [outcome] = (await sched.run_outcomes([{"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}])).outcomes
    return outcome


def text(outcome: Any) -> str:
    return outcome.result.text


def kinds(outcome: Any) -> dict[str, str]:
    return {n.hook: n.kind for n in outcome.hook_notices}


# -- loading ---------------------------------------------------------------------------------------
def test_a_real_configuration_loads_and_names_every_caveat(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    with pytest.warns(SettingsWarning) as caught:
        perms = Permissions.from_settings(proj, user)
    project_file, user_file = str(proj / ".claude" / "settings.json"), str(user / "settings.json")
    found = {(w.kind, w.item): w for w in perms.load_warnings}
    # Hook programs that are not installed here: warnings, never load errors.
    for command in ("uv run .claude/hooks/check_branch.py", "bunx --bun @biomejs/biome format --write ."):
        assert found[("missing_program", command)].source == project_file
    assert found[("missing_program", "~/.claude/hooks/tool-logger.sh")].source == user_file
    assert not any(item and item.startswith("CMD=") for _, item in found)  # inline shell is the shell's business
    # Events a tool scheduler never fires are accepted and reported.
    for event in ("SessionStart", "Stop", "Notification", "SubagentStop"):
        assert ("event_not_fired", event) in found
    # Rules Claude Code drops or never consults: deny rules stay enforced, allow rules go.
    assert found[("rule_dropped_by_claude_code", "Bash(sudo :* )")].source == project_file
    assert "enforces" in found[("rule_dropped_by_claude_code", "Bash(sudo :* )")].message
    assert "Edit(...)" in found[("rule_not_consulted_by_claude_code", "Write(./secrets/**)")].message
    assert "dropped here too" in found[("rule_dropped_by_claude_code", "Bash()")].message
    assert ("rule_dropped_by_claude_code", "Bash(npm run:* --silent)") in found
    assert {r.text for r in perms.rules.of("allow")} >= {"Bash(git status)", "Bash(ls:*)"}
    assert "Bash" not in {r.text for r in perms.rules.of("allow")}
    # Every caveat was issued once as a filterable warning naming its file.
    issued = [str(w.message) for w in caught]
    assert len(issued) == len(perms.load_warnings)
    assert {w.category for w in caught} == {HookWarning, RuleWarning}
    assert any(project_file in m and "uv run .claude/hooks/check_branch.py" in m for m in issued)


def test_every_claude_code_event_loads_and_an_unknown_one_is_a_warning(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    hooks = {event: [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}] for event in CLAUDE_CODE_HOOK_EVENTS}
    hooks["PreToolUser"] = [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]
    settings = {"permissions": {"deny": ["Bash(curl:*)"]}, "hooks": hooks}
    (proj / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    perms = load(proj, user)
    local = [w for w in perms.load_warnings if w.source.endswith("settings.local.json")]
    assert len(CLAUDE_CODE_HOOK_EVENTS) == 27
    assert sorted(w.item for w in local if w.kind == "event_not_fired") == sorted(CLAUDE_CODE_HOOK_EVENTS - set(HOOK_EVENTS))
    [unknown] = [w for w in local if w.kind == "unknown_event"]
    assert unknown.item == "PreToolUser" and "whole file" in unknown.message
    assert any(r.text == "Bash(curl:*)" and r.origin.endswith("settings.local.json") for r in perms.rules.of("deny"))
    with pytest.raises(PermissionConfigError, match="PreToolUser"):
        load(proj, user, strict_hooks=True)


async def test_rules_claude_code_would_drop_are_kept_or_dropped_on_the_safe_side(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    local = {"permissions": {"allow": ["Bash(echo:*", "Edit(src/**)"], "deny": ["Bash(git log"], "ask": ["Read(./notes"]}}
    (proj / ".claude" / "settings.local.json").write_text(json.dumps(local))
    perms = load(proj, user)
    found = {(w.kind, w.item): w for w in perms.load_warnings}
    assert ("rule_invalid", "Bash(echo:*") in found  # an allow we cannot read is dropped
    assert "every use of Bash" in found[("rule_read_conservatively", "Bash(git log")].message
    assert ("rule_read_conservatively", "Read(./notes") in found
    sched = scheduler(perms, proj)
    assert perms.hides(next(t for t in sched.registry.full_pool if t.name == "Bash"))
    denied = await call(sched, "Bash", command="ls")  # allowed by Bash(ls:*), but the unreadable deny covers Bash:
    assert denied.is_error and "no tool named 'Bash'" in text(denied)  # a blanket-denied tool is not offered at all
    (proj / "README.md").write_text("hi")
    asked = await call(sched, "Read", file_path=str(proj / "README.md"))  # the unreadable ask covers Read
    assert asked.status == "denied" and "headless" in text(asked)


# -- running real hooks ----------------------------------------------------------------------------
async def test_inline_jq_hook_blocks_and_missing_programs_let_calls_go(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    sched = scheduler(load(proj, user), proj)
    pushed = await call(sched, "Bash", command="git push --force origin feature")
    assert pushed.status == "denied" and "Force pushes are not allowed from Claude sessions" in text(pushed)
    listed = await call(sched, "Bash", command="ls -a")
    assert listed.status == "completed" and ".claude" in text(listed)
    notices = kinds(listed)
    assert notices["uv run .claude/hooks/check_branch.py"] == "missing_program"  # uv is not installed: exit 127
    assert notices["~/.claude/hooks/tool-logger.sh"] == "missing_program"
    assert all(not n.blocked for n in listed.hook_notices)
    assert not any("127" in str(a) for a in listed.attachments)  # the person sees it; the model does not
    history = (proj / ".claude" / "bash-history.jsonl").read_text().splitlines()
    assert json.loads(history[-1]) == {"tool": "Bash", "cmd": "ls -a"}  # the PostToolUse jq logger ran


async def test_bash_script_hook_blocks_a_recursive_delete(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    (proj / "build").mkdir()
    outcome = await call(scheduler(load(proj, user), proj), "Bash", command="rm -rf build")
    assert outcome.status == "denied" and "recursive force delete" in text(outcome)
    assert (proj / "build").is_dir()


async def test_python_script_hook_protects_files_and_missing_formatter_is_reported(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    sched = scheduler(load(proj, user, approver=ApprovalBroker("allow")), proj)
    refused = await call(sched, "Write", file_path=str(proj / ".env"), content="TOKEN=1")
    assert refused.status == "denied" and "protected file" in text(refused) and not (proj / ".env").exists()
    written = await call(sched, "Write", file_path=str(proj / "notes.md"), content="hello")
    assert written.status == "completed" and (proj / "notes.md").read_text() == "hello"
    assert kinds(written)["bunx --bun @biomejs/biome format --write ."] == "missing_program"


async def test_strict_hooks_block_a_call_whose_hook_cannot_run(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    outcome = await call(scheduler(load(proj, user, strict_hooks=True), proj), "Bash", command="touch was-run.txt")
    assert outcome.status == "error" and not (proj / "was-run.txt").exists()
    assert "uv run .claude/hooks/check_branch.py" in text(outcome) and "strict" in text(outcome)
    assert any(n.blocked for n in outcome.hook_notices)


async def test_hooks_find_the_current_tool_use_in_transcript_path(layout: tuple[Path, Path]) -> None:
    """A bare scheduler run: hooks still get a real transcript holding the run's tool_use blocks."""
    proj, user = layout
    sched = scheduler(load(proj, user), proj)
    blocks = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"ls -d {name}"}}
              for i, name in enumerate([".claude", "."])]
    outcomes = (await sched.run_outcomes(blocks)).outcomes
    assert [o.status for o in outcomes] == ["completed", "completed"]
    assert not any("audit" in n.hook for o in outcomes for n in o.hook_notices)
    audit = [json.loads(line) for line in (proj / ".claude" / "audit.jsonl").read_text().splitlines()]
    assert sorted(a["call"]["id"] for a in audit) == ["toolu_0", "toolu_1"]
    assert {a["call"]["input"]["command"] for a in audit} == {"ls -d .claude", "ls -d ."}
    path = sched.context.session_dir / f"{sched.context.session_id}.jsonl"
    assert [b["id"] for b in read_transcript(path).tool_uses] == ["toolu_0", "toolu_1"]


async def test_permission_request_hook_answers_the_dialog(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    sched = scheduler(load(proj, user), proj)  # nobody to ask: the approver denies
    made = await call(sched, "Bash", command="touch made-by-hook.txt")
    assert made.status == "completed" and (proj / "made-by-hook.txt").exists()
    pushed = await call(sched, "Bash", command="git push origin main")
    assert pushed.status == "denied" and "Pushing to main needs a pull request" in text(pushed)
    other = await call(sched, "Bash", command="mkdir other")  # the hook does not answer: the person (policy) does
    assert other.status == "denied" and "headless" in text(other) and not (proj / "other").exists()


async def test_a_hook_ask_reaches_the_person_in_dont_ask_mode(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    ask = ("CMD=$(jq -r '.tool_input.command'); case \"$CMD\" in cp*) jq -n '{hookSpecificOutput: "
           "{hookEventName: \"PreToolUse\", permissionDecision: \"ask\", permissionDecisionReason: \"copies need a look\"}}';; esac")
    local = {"permissions": {"defaultMode": "dontAsk"},
             "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ask}]}]}}
    (proj / ".claude" / "settings.local.json").write_text(json.dumps(local))
    asked: list[Any] = []

    async def person(request: Any) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer("allow")

    perms = load(proj, user, approver=person)
    assert perms.mode == "dontAsk"
    sched = scheduler(perms, proj)
    copied = await call(sched, "Bash", command="cp .claude/CONTEXT.md asked.md")
    assert copied.status == "completed" and (proj / "asked.md").exists()
    assert [r.reason for r in asked] == ["copies need a look"]
    made = await call(sched, "Bash", command="mkdir not-asked")  # the rules' ask: dontAsk denies it
    assert made.status == "denied" and "Don't ask" in text(made) and len(asked) == 1


async def test_permission_denied_hook_runs_after_an_auto_mode_refusal(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    log = proj / "denied.jsonl"
    retry = (f"jq -c '{{tool: .tool_name, reason: .reason}}' >> {log}; "
             "jq -n '{hookSpecificOutput: {hookEventName: \"PermissionDenied\", retry: true}}'")
    local = {"hooks": {"PermissionDenied": [{"matcher": "Bash", "hooks": [{"type": "command", "command": retry}]}]}}
    (proj / ".claude" / "settings.local.json").write_text(json.dumps(local))

    class Refuse:
        async def classify(self, request: Any) -> ClassifierVerdict:
            return ClassifierVerdict(False, "looks destructive")

    outcome = await call(scheduler(load(proj, user, mode="auto", classifier=Refuse()), proj), "Bash", command="git init sub")
    assert outcome.status == "denied" and "looks destructive" in text(outcome) and not (proj / "sub").exists()
    assert "The PermissionDenied hook indicated this command is now approved" in text(outcome)
    assert json.loads(log.read_text()) == {"tool": "Bash", "reason": "looks destructive"}


async def test_if_condition_limits_a_hook_to_matching_calls(layout: tuple[Path, Path]) -> None:
    proj, user = layout
    local = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no tags from here' >&2; exit 2", "if": "Bash(git tag:*)"}]}]}}
    (proj / ".claude" / "settings.local.json").write_text(json.dumps(local))
    sched = scheduler(load(proj, user), proj)
    assert (await call(sched, "Bash", command="ls")).status == "completed"
    tagged = await call(sched, "Bash", command="cd . && git tag v1")
    assert tagged.status == "denied" and "no tags from here" in text(tagged)
