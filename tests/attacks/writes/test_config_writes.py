"""Writes into a tool's config or a shell's startup file ask in every mode, bypass included.

An Edit of .git/hooks/pre-commit or .claude/settings.json is a safety check in Claude Code
(it prompts even in bypass mode), and so is a redirection into one here. Commands that
write the files they name (cp, mv, tee, ln, chmod, ...) reached the same files unasked in
bypass and acceptEdits modes: a hook written that way runs at the next commit.
"""

from __future__ import annotations

import pytest

from ..conftest import Refuser, git, run_one, scheduler

WRITES = [
    "cp payload.sh .git/hooks/pre-commit",
    "cp -f payload.sh .git/hooks/pre-commit",
    "mv --target-directory=.git/hooks pre-commit",
    "tee .git/hooks/pre-commit < payload.sh",
    "ln -s ../../payload.sh .git/hooks/pre-commit",
    "install -m 755 payload.sh .git/hooks/pre-commit",
    "cp payload.sh .claude/settings.json",
]


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
@pytest.mark.parametrize("command", WRITES)
async def test_a_command_cannot_write_a_git_hook_or_claude_settings_unasked(project, mode, command):
    git(project, "init", "-q")
    (project / "payload.sh").write_text("#!/bin/sh\necho pwned\n")
    (project / "pre-commit").write_text("#!/bin/sh\necho pwned\n")
    (project / ".claude").mkdir(exist_ok=True)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode)
    result = await run_one(sched, "Bash", command=command)
    assert refuser.asked, f"{command!r} ran unasked in {mode}: {result.text}"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (project / ".claude" / "settings.json").exists()


@pytest.mark.parametrize("command", ["cp README.md notes.md", "tee notes.md < README.md", "chmod +x README.md"])
async def test_ordinary_writes_still_run_in_bypass_mode(project, command):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert not result.is_error and not refuser.asked, result.text
