"""The Bash tool in the sandbox, through the public API: the round's reproductions are
contained in every mode, and the sandbox settings act as Claude Code's docs describe."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.sandbox._probe import _cached
from tests.bypass_kit import SECRET, Refuser, run_one

FINDING_RULES = ["Read(./.env)", "Read(./secrets/**)"]  # the rules the findings were made with
MODES = ["default", "acceptEdits", "bypassPermissions"]


class Approver:
    """Says yes to everything, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[nts.ApprovalRequest] = []

    async def __call__(self, request: nts.ApprovalRequest) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return nts.ApprovalAnswer("allow")


def git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def sched(project: Path, approver: Any, mode: str = "default", **options: Any) -> nts.Scheduler:
    perms = nts.Permissions(mode=mode, cwd=project, approver=approver, **options)
    return nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)


def bash(s: nts.Scheduler, command: str, **input: Any) -> nts.ToolResultBlock:
    return nts.run_sync(run_one(s, "Bash", command=command, **input))


# -- the findings, contained ---------------------------------------------------------------------

READS = [
    "find . -type f | xargs cat",
    "rg SECRET; rg SECRET",
    "strings /proc/self/environ; ls /proc/self/",
    "cat < .e{n..n}v",
    "echo 'cat .env' | bash",
    "python3 -c \"print(open('.env').read(), open('secrets/key.txt').read())\"",
    "D=secrets; cd \"$D\" && tac key.txt",
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", READS)
def test_reads_of_protected_files_are_contained_even_when_approved(project: Path, mode: str, command: str) -> None:
    git(project, "init", "-q")
    result = bash(sched(project, Approver(), mode, deny=FINDING_RULES), command)
    assert SECRET not in result.text, result.text


@pytest.mark.parametrize("mode", MODES)
def test_git_history_of_a_protected_file_is_asked_about_in_every_mode(project: Path, mode: str) -> None:
    # A committed .env is in git's objects, where no mask reaches: the parse asks, bypass too.
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "with the secret")
    refuser = Refuser()
    result = bash(sched(project, refuser, mode, deny=FINDING_RULES), "git log -p; git log -p")
    assert refuser.asked and SECRET not in result.text, result.text


@pytest.mark.parametrize("mode", MODES)
def test_man_with_a_page_that_includes_a_protected_file_is_contained(project: Path, mode: str) -> None:
    (project / "notes.1").write_text(".so .env\n")
    result = bash(sched(project, Approver(), mode, deny=FINDING_RULES), "man -l notes.1 | cat")
    assert SECRET not in result.text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", ["cp x .git/hooks/pre-commit --no-preserve mode", "cp x .git/config --sparse always",
                                     "echo 'cp x .git/hooks/pre-commit' | bash", "python3 -c \"open('.git/config','a').write('x')\""])
def test_writes_into_git_are_contained_even_when_approved(project: Path, mode: str, command: str) -> None:
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    config = (project / ".git" / "config").read_bytes()
    bash(sched(project, Approver(), mode), command)
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / ".git" / "config").read_bytes() == config


def test_a_git_include_through_a_link_runs_nothing_outside_the_sandbox(project: Path, tmp_path: Path) -> None:
    git(project, "init", "-q")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    marker = tmp_path / "PWNED"
    (elsewhere / "evil.cfg").write_text(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    os.symlink(elsewhere / "deep", project / ".git" / "lnk")
    with open(project / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = lnk/../evil.cfg\n")
    result = bash(sched(project, Approver()), "git status")  # approved: it asks now, and runs sandboxed
    assert not marker.exists(), result.text  # the fsmonitor ran read-only: its write failed


@pytest.mark.parametrize("mode", MODES)
def test_what_a_command_leaves_behind_is_stopped_and_named(project: Path, mode: str) -> None:
    result = bash(sched(project, Approver(), mode), "setsid env -i sleep 3111 & sleep 0.2; echo ok")
    assert "ok" in result.text and "stopped with its sandbox" in result.text and "sleep" in result.text, result.text
    assert subprocess.run(["pgrep", "-f", "sleep 3111"], capture_output=True).returncode == 1


# -- the sandbox as the settings say -------------------------------------------------------------

def test_a_failure_the_sandbox_caused_says_so_and_how_to_retry(project: Path, tmp_path: Path) -> None:
    result = bash(sched(project, Approver(), "bypassPermissions"), f"touch {tmp_path}/outside.txt")
    assert result.is_error and "Read-only file system" in result.text
    assert "OS sandbox made the write fail" in result.text and "dangerouslyDisableSandbox" in result.text


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "auto"])
def test_a_retry_outside_the_sandbox_always_asks(project: Path, tmp_path: Path, mode: str) -> None:
    refuser = Refuser()
    s = sched(project, refuser, mode, allow=["Bash(touch:*)"])
    result = bash(s, f"touch {tmp_path}/outside.txt", dangerouslyDisableSandbox=True)
    assert refuser.asked and "outside the OS sandbox" in refuser.asked[0].reason
    assert not (tmp_path / "outside.txt").exists(), result.text
    approver = Approver()
    result = bash(sched(project, approver, mode, allow=["Bash(touch:*)"]), f"touch {tmp_path}/outside.txt",
                  dangerouslyDisableSandbox=True)
    assert approver.asked and (tmp_path / "outside.txt").exists(), result.text


def test_allow_unsandboxed_commands_false_ignores_the_retry(project: Path, tmp_path: Path) -> None:
    s = sched(project, Approver(), "bypassPermissions", sandbox={"allowUnsandboxedCommands": False})
    result = bash(s, f"touch {tmp_path}/outside.txt", dangerouslyDisableSandbox=True)
    assert not (tmp_path / "outside.txt").exists() and "dangerouslyDisableSandbox was ignored" in result.text


def test_excluded_commands_run_outside_the_sandbox(project: Path, tmp_path: Path) -> None:
    s = sched(project, Approver(), "bypassPermissions", sandbox={"excludedCommands": ["touch"]})
    bash(s, f"touch {tmp_path}/outside.txt")
    assert (tmp_path / "outside.txt").exists()


def test_enabled_false_leaves_writing_commands_outside_but_read_only_ones_inside(project: Path, tmp_path: Path) -> None:
    s = sched(project, Approver(), "bypassPermissions", sandbox={"enabled": False})
    bash(s, f"touch {tmp_path}/outside.txt")
    assert (tmp_path / "outside.txt").exists()
    # A read-only command still runs in the read-only sandbox: its own /proc shows few processes.
    result = bash(s, "ls /proc")
    assert sum(1 for w in result.text.split() if w.isdigit()) <= 6, result.text


def test_auto_allow_runs_sandboxed_commands_without_a_prompt_but_keeps_ask_and_deny_rules(project: Path) -> None:
    refuser = Refuser()
    s = sched(project, refuser, sandbox={"enabled": True}, ask=["Bash(git push:*)"], deny=["Bash(rm:*)"])
    made = bash(s, "echo made > made.txt && python3 -c 'print(1)'")
    assert not refuser.asked and (project / "made.txt").exists(), made.text
    assert "denied" in bash(s, "rm made.txt").text.lower() and (project / "made.txt").exists()
    bash(s, "git push origin main")
    assert refuser.asked and "git push" in refuser.asked[-1].reason
    quiet = Refuser()
    bash(sched(project, quiet, sandbox={"enabled": True, "autoAllowBashIfSandboxed": False}), "echo x > y.txt")
    assert quiet.asked  # Claude Code's default is true; false keeps the prompts


def test_git_add_under_an_allow_rule_needs_no_prompt_once_env_files_are_masked(project: Path, monkeypatch) -> None:
    # A real project's settings: allow `git add`, deny every .env. The guard could not tell
    # which files git reads, so it asked; with the .env files masked it need not.
    git(project, "init", "-q")
    (project / "notes.md").write_text("notes\n")
    rules = {"allow": ["Bash(git add:*)"], "deny": ["Read(//**/.env)"]}
    refuser = Refuser()
    result = bash(sched(project, refuser, **rules), "git add notes.md")
    assert not refuser.asked and not result.is_error, result.text
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")
    refuser = Refuser()
    bash(sched(project, refuser, **rules), "git add notes.md")
    assert refuser.asked  # the parse alone still asks


def test_unavailable_is_said_on_every_result_and_required_refuses(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("NBTOOLSCHED_BWRAP", "/nonexistent/bwrap")
    s = sched(project, Approver(), "bypassPermissions")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        first, second = bash(s, "echo one"), bash(s, "echo two")
    for result in (first, second):
        assert "ran WITHOUT the OS sandbox" in result.text and "apt-get install bubblewrap" in result.text
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "required")
    refused = bash(s, "echo x > made.txt")
    assert refused.is_error and "Not run" in refused.text and not (project / "made.txt").exists()
    monkeypatch.delenv("NBTOOLSCHED_SANDBOX")
    strict = sched(project, Approver(), "bypassPermissions", sandbox={"failIfUnavailable": True})
    assert "sandbox.failIfUnavailable" in bash(strict, "echo x").text
    _cached.pop("/nonexistent/bwrap", None)


def test_a_claude_code_settings_file_with_a_sandbox_block_is_enforced(project: Path, tmp_path: Path) -> None:
    """A settings file as Claude Code's docs write one: sandbox on, auto-allow, a denied
    read, an extra writable folder, excluded commands, an unknown key (a warning)."""
    extra = tmp_path / "build-out"
    extra.mkdir()
    (project / ".claude").mkdir()
    settings = {
        "permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(npm test:*)"]},
        "sandbox": {
            "enabled": True,
            "autoAllowBashIfSandboxed": True,
            "excludedCommands": ["docker"],
            "allowUnsandboxedCommands": False,
            "filesystem": {"allowWrite": [f"//{str(extra).lstrip('/')}/**"], "denyRead": ["./secrets/**"]},
            "network": {"allowedDomains": ["registry.npmjs.org", "*.pypi.org"]},
            "enableWeakerNestedSandbox": False,
        },
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    user = tmp_path / "user-claude"
    user.mkdir()
    refuser = Refuser()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        perms = nts.Permissions.from_settings(project, user_dir=user, approver=refuser)
    assert any("enableWeakerNestedSandbox" in str(w.message) for w in caught)
    s = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)
    assert "blocked by the rule Read(./.env)" in bash(s, "cat .env").text  # a deny rule still denies
    result = bash(s, "python3 -c \"print(open('.e' + 'nv').read())\"; cat secrets/key.txt; "
                  f"echo out > {extra}/made.txt; echo in > made.txt; touch {tmp_path}/nope")
    assert not refuser.asked, result.text  # auto-allowed: it runs sandboxed
    assert SECRET not in result.text
    assert (extra / "made.txt").exists() and (project / "made.txt").exists() and not (tmp_path / "nope").exists()
    retry = bash(s, f"touch {tmp_path}/nope", dangerouslyDisableSandbox=True)
    assert not (tmp_path / "nope").exists() and "ignored" in retry.text
    assert perms.sandbox.network.allowed_domains == ("registry.npmjs.org", "*.pypi.org")
    assert "sandbox: on" in perms.sandbox.describe()


def test_a_sandbox_block_that_breaks_the_schema_refuses_the_file(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": "yes"}}))
    with pytest.raises(nts.PermissionConfigError, match="sandbox.enabled"):
        nts.Permissions.from_settings(project, user_dir=tmp_path)


def test_a_timeout_stops_everything_in_the_sandbox(project: Path) -> None:
    result = bash(sched(project, Approver(), "bypassPermissions"), "setsid sleep 3121 & sleep 3122", timeout=800)
    assert result.is_error and "timed out" in result.text, result.text
    assert subprocess.run(["pgrep", "-f", "sleep 312[12]"], capture_output=True).returncode == 1


async def test_an_abort_stops_everything_in_the_sandbox(project: Path) -> None:
    import asyncio

    s = sched(project, Approver(), "bypassPermissions")
    handle = s.submit([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "setsid sleep 3131 & sleep 3132"}}])
    for _ in range(200):
        if subprocess.run(["pgrep", "-f", "sleep 313[12]"], capture_output=True).stdout.count(b"\n") >= 2:
            break
        await asyncio.sleep(0.02)
    handle.abort()
    (result,) = await handle
    assert result.is_error
    assert subprocess.run(["pgrep", "-f", "sleep 313[12]"], capture_output=True).returncode == 1
