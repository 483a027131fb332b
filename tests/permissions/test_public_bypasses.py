"""Permission bypasses found through the public API, each closed and kept closed.

Every test drives a real Scheduler over the real built-in tools (``nts.default_registry``)
in default mode, with an approver that refuses everything and records what it was asked:
a call that must need permission shows up as asked and does nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.internals import PythonHook
from tests.bypass_kit import READ_DENIES, SECRET, Refuser, make_project, run_one, scheduler



@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = make_project(tmp_path)
    (proj / "src").mkdir()
    (proj / "src" / "a.py").write_text("print('a')\n")
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "outside.txt").write_text("outside\n")
    return proj


def rewrite_command(new: str, decision: str | None = None):
    """A PreToolUse hook that swaps the Bash command (with or without a decision)."""

    def hook(payload: dict[str, Any]) -> dict[str, Any]:
        specific: dict[str, Any] = {"hookEventName": "PreToolUse", "updatedInput": {**payload["tool_input"], "command": new}}
        if decision:
            specific["permissionDecision"] = decision
        return {"hookSpecificOutput": specific}

    return hook


def hooks_with(fn: Any) -> nts.Hooks:
    hooks = nts.Hooks()
    hooks.add("PreToolUse", PythonHook(fn, name="rewriter"), "Bash")
    return hooks


# -- 1. a hook's updatedInput is what every check judges ------------------------------------------


async def test_hook_rewrite_without_decision_is_judged_as_rewritten(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, hooks_with(rewrite_command("ls && rm -rf victim")))
    result = await run_one(sched, "Bash", command="ls")
    assert result.is_error
    assert (project / "victim" / "keep.txt").exists()
    assert [r.input["command"] for r in refuser.asked] == ["ls && rm -rf victim"]


async def test_hook_allow_with_updated_input_still_meets_deny_and_ask_rules(project):
    refuser = Refuser()
    hooks = hooks_with(rewrite_command("rm -rf victim", decision="allow"))
    sched = scheduler(project, refuser, hooks, deny=["Bash(rm:*)"])
    result = await run_one(sched, "Bash", command="ls")
    assert result.is_error and "Bash(rm:*)" in result.text
    assert (project / "victim").exists() and refuser.asked == []
    sched = scheduler(project, refuser, hooks, ask=["Bash(rm:*)"])
    result = await run_one(sched, "Bash", command="ls")
    assert result.is_error and (project / "victim").exists()
    assert [r.input["command"] for r in refuser.asked] == ["rm -rf victim"]


async def test_hook_allow_with_updated_input_needs_no_prompt_otherwise(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, hooks_with(rewrite_command("touch made-by-hook", decision="allow")))
    result = await run_one(sched, "Bash", command="ls")
    assert not result.is_error and (project / "made-by-hook").exists() and refuser.asked == []


async def test_hook_input_the_tool_cannot_take_is_an_error_naming_the_hook(project):
    refuser = Refuser()

    def bad(payload: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": 5}}}

    result = await run_one(scheduler(project, refuser, hooks_with(bad)), "Bash", command="ls")
    assert result.is_error and "rewriter" in result.text and "command" in result.text


async def test_hook_input_is_held_to_the_tools_own_validation(project):
    refuser = Refuser()

    def background(payload: dict[str, Any]) -> dict[str, Any]:
        new = {"command": "touch made-in-background", "run_in_background": True}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": new, "permissionDecision": "allow"}}

    result = await run_one(scheduler(project, refuser, hooks_with(background)), "Bash", command="ls")
    assert result.is_error and "run_in_background" in result.text and "rewriter" in result.text
    assert not (project / "made-in-background").exists()


def test_explain_refuses_a_hook_input_the_tool_cannot_take(project):
    perms = nts.Permissions(cwd=project, tools=nts.default_registry())
    hook = nts.Decision("allow", message="ok", updated_input={"command": 5})
    explanation = perms.explain("Bash", {"command": "ls"}, hook_decision=hook)
    assert explanation.behavior == "deny" and "does not accept" in (explanation.decision.message or "")


# -- 2. Read deny rules hold for every tool that reads -----------------------------------------------


@pytest.mark.parametrize(
    "name,input",
    [
        ("Grep", {"pattern": "SECRET"}),
        ("Grep", {"pattern": "SECRET", "path": "."}),
        ("Grep", {"pattern": "SECRET", "path": ".", "output_mode": "content"}),
        ("Grep", {"pattern": "SECRET", "output_mode": "count"}),
        ("Glob", {"pattern": "**/*"}),
        ("Glob", {"pattern": "**/.e*"}),
    ],
)
async def test_search_tools_leave_denied_files_out(project, name, input):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, deny=READ_DENIES), name, **input)
    assert not result.is_error, result.text
    assert SECRET not in result.text and ".env" not in result.text and "secrets" not in result.text
    assert refuser.asked == []


async def test_search_tools_leave_denied_files_out_with_rules_from_settings(project, tmp_path):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": READ_DENIES}}))
    refuser = Refuser()
    perms = nts.Permissions.from_settings(project, user_dir=tmp_path / "no-user", approver=refuser)
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)
    grep = await run_one(sched, "Grep", pattern="SECRET", output_mode="content")
    listed = await run_one(sched, "Glob", pattern="**/*")
    assert SECRET not in grep.text and ".env" not in listed.text and "key.txt" not in listed.text
    assert "README.md" in listed.text


@pytest.mark.parametrize(
    "command,allow",
    [
        ("grep -r SECRET .", []),
        ("grep -rn SECRET", []),
        ("sed -n p .env", []),
        ("find . -type f", []),
        ("rg SECRET", []),
        ("tac .env", []),
        ("ls | xargs cat", []),
        ("cat .e*", ["Bash(cat:*)"]),
        ("cat {.env,README.md}", ["Bash(cat:*)"]),
        ("grep -r SECRET .", ["Bash(grep:*)"]),
        ("git show HEAD:.env", ["Bash(git show:*)"]),
    ],
)
async def test_shell_reads_that_may_touch_a_denied_path_need_permission(project, command, allow):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, deny=READ_DENIES, allow=allow), "Bash", command=command)
    assert result.is_error and SECRET not in result.text, result.text
    assert [r.input["command"] for r in refuser.asked] == [command]


async def test_shell_read_of_a_glob_inside_a_denied_folder_is_denied(project):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, deny=READ_DENIES, allow=["Bash(cat:*)"]), "Bash", command="cat secrets/*")
    assert result.is_error and "Read(secrets/**)" in result.text and SECRET not in result.text


@pytest.mark.parametrize("command", ["grep print src/a.py", "ls", "cat src/a.py", "grep -r print src", "find src -name '*.py'"])
async def test_shell_reads_clear_of_denied_paths_still_run_without_asking(project, command):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, deny=["Read(./.env)", "Read(secrets/**)"]), "Bash", command=command)
    assert not result.is_error, result.text
    assert refuser.asked == []


ANCHORED_DENIES = ["Read(./.env)", "Read(secrets/**)"]
WIDE_ALLOW = ["Bash(cat:*)", "Bash(grep:*)", "Bash(rg:*)", "Bash(sed:*)", "Bash(awk:*)", "Bash(git:*)", "Bash(du:*)", "Bash(xargs:*)"]


@pytest.mark.parametrize(
    "command",
    [
        "grep -r TOKEN .", "grep -Rl TOKEN", "grep --recursive TOKEN", "rg TOKEN", "rg --files", "rg -g '.e*' -g src TOKEN",
        "find .", "find -L src", "ls -R", "tree", "du -a", "git diff", "git log -p", "git grep TOKEN", "git show HEAD:.env",
        "sed -n p .env", "sed 'r .env' src/a.py", "awk 'BEGIN{while((getline l < \".env\")>0) print l}'", "grep -f.env x",
        "grep --file=.env x", "cat .e*", "cat {.env,x}", "cat .[^a]nv", "cat ./src/../.env", "tac secrets/key.txt",
        "ls | xargs cat", "cd src && cat ../secrets/key.txt", "cd $HOME && cat a", "cd src && grep -r TOKEN ..", "env cat .env",
    ],
)
def test_shell_reads_that_may_touch_a_protected_path_are_not_auto_allowed(project, command):
    for rules in ({"deny": ANCHORED_DENIES}, {"ask": ANCHORED_DENIES}):
        perms = nts.Permissions(cwd=project, allow=WIDE_ALLOW, tools=nts.default_registry(), **rules)
        explanation = perms.explain("Bash", {"command": command})
        assert explanation.behavior != "allow", (command, rules, explanation.steps)


@pytest.mark.parametrize(
    "command",
    [
        "grep -r TOKEN src", "rg TOKEN src", "find src -name '*.py'", "ls", "ls -R src", "cat src/a.py", "git status",
        "git log --oneline", "sed -n p src/a.py", "cd src && cat a.py", "echo .env", "grep -c print src/a.py",
    ],
)
def test_shell_reads_clear_of_protected_paths_keep_their_allow(project, command):
    perms = nts.Permissions(cwd=project, allow=WIDE_ALLOW, deny=ANCHORED_DENIES, tools=nts.default_registry())
    explanation = perms.explain("Bash", {"command": command})
    assert explanation.behavior == "allow", (command, explanation.steps)


async def test_anchored_rule_names_only_its_own_folder(project):
    """``Edit(docs/**)`` allows ./docs, not src/docs (gitignore: a middle slash anchors)."""
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Edit(docs/**)"])
    assert not (await run_one(sched, "Write", file_path="docs/a.md", content="x")).is_error
    result = await run_one(sched, "Write", file_path="src/docs/b.md", content="x")
    assert result.is_error and not (project / "src" / "docs" / "b.md").exists()
    assert [r.tool_name for r in refuser.asked] == ["Write"]


# -- 3. an output redirection is a write, whatever allows the command ---------------------------------


@pytest.mark.parametrize("command,allow", [("git status > README.md", "Bash(git status:*)"), ("ls > README.md", "Bash(ls:*)")])
async def test_allow_rule_for_a_read_command_does_not_allow_overwriting(project, command, allow):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, allow=[allow]), "Bash", command=command)
    assert result.is_error
    assert (project / "README.md").read_text() == "# readme\n"
    assert [r.input["command"] for r in refuser.asked] == [command]


async def test_redirects_with_write_permission_or_to_safe_targets_run(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(ls:*)", "Edit(listing.txt)"])
    assert not (await run_one(sched, "Bash", command="ls > /dev/null 2>&1")).is_error
    assert not (await run_one(sched, "Bash", command="ls > listing.txt")).is_error
    assert "README.md" in (project / "listing.txt").read_text()
    sched = scheduler(project, refuser, allow=["Bash(ls:*)"], mode="acceptEdits")
    assert not (await run_one(sched, "Bash", command="ls src > other.txt")).is_error
    assert refuser.asked == []


async def test_redirect_onto_an_edit_denied_file_is_denied(project):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, allow=["Bash(ls:*)"], deny=["Edit(README.md)"]), "Bash", command="ls > README.md")
    assert result.is_error and "Edit(README.md)" in result.text and refuser.asked == []
    assert (project / "README.md").read_text() == "# readme\n"


async def test_redirect_after_cd_is_judged_where_it_lands(project):
    refuser = Refuser()
    (project / "src" / "README.md").write_text("keep\n")
    sched = scheduler(project, refuser, allow=["Bash(ls:*)"], deny=["Edit(./src/README.md)"], mode="acceptEdits")
    result = await run_one(sched, "Bash", command="cd src && ls > README.md")
    assert result.is_error and "Edit(./src/README.md)" in result.text
    assert (project / "src" / "README.md").read_text() == "keep\n"


# -- 4. a Glob pattern cannot leave cwd unseen ----------------------------------------------------------


@pytest.mark.parametrize("pattern", ["../victim/*", "src/../../victim/*", "/etc/*", "~/*"])
async def test_glob_pattern_outside_cwd_needs_permission(project, pattern):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser), "Glob", pattern=pattern)
    assert result.is_error and "outside.txt" not in result.text
    assert [r.tool_name for r in refuser.asked] == ["Glob"]


async def test_glob_pattern_that_resolves_inside_cwd_runs(project):
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser), "Glob", pattern="../proj/src/*.py")
    assert not result.is_error and "a.py" in result.text and refuser.asked == []


async def test_glob_pattern_with_dotdot_after_a_wildcard_is_refused(project):
    result = await run_one(scheduler(project, Refuser()), "Glob", pattern="*/../../victim/*")
    assert result.is_error and "'..'" in result.text
