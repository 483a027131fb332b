"""The outsider's findings of the sandbox round that the command-line analysis must hold
by itself, with the OS sandbox off (as on a machine without bubblewrap; conftest sets
NBTOOLSCHED_SANDBOX=off): each printed a secret, ran a program or wrote a hook unasked
when it was found. With the sandbox on, tests/sandbox/test_contained.py runs them again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nbtoolsched as nts
from tests.bypass_kit import loop_lag

from .conftest import READ_DENIES, SECRET, Refuser, git, run_one, scheduler, watched


def _committed(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "with the secret")


@pytest.mark.parametrize("command", [
    "rg SECRET; rg SECRET",
    "git log -p; git log -p",
    "strings /proc/self/environ; ls /proc/self/",
    "find . -type f | xargs cat",
])
async def test_two_asks_in_one_line_stay_an_ask(project, command):
    _committed(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=["Read(./.env)", "Read(./secrets/**)"])  # the finding's rules
    result = await run_one(sched, "Bash", command=command)
    assert refuser.asked, f"{command!r} ran unasked: {result.text[:300]}"
    assert SECRET not in result.text


def _fsmonitor_config(target: Path, marker: Path) -> None:
    target.write_text(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')


def _status_must_ask(project: Path, marker: Path) -> None:
    refuser = Refuser()
    sched = scheduler(project, refuser)
    result = nts.run_sync(run_one(sched, "Bash", command="git status"))
    assert refuser.asked, f"git status ran unasked: {result.text[:300]}"
    assert not marker.exists(), "git ran the repository's fsmonitor program"


def test_a_config_include_through_a_link_is_read_where_git_reads_it(project, tmp_path):
    # `[include] path = lnk/../evil.cfg`: lexically .git/evil.cfg (absent), but the kernel
    # follows lnk first, so git reads the evil.cfg beside lnk's target.
    _committed(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    marker = tmp_path / "PWNED"
    _fsmonitor_config(elsewhere / "evil.cfg", marker)
    os.symlink(elsewhere / "deep", project / ".git" / "lnk")
    with open(project / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = lnk/../evil.cfg\n")
    _status_must_ask(project, marker)


def test_a_config_include_through_proc_self_cannot_be_checked(project, tmp_path):
    _committed(project)
    marker = tmp_path / "PWNED"
    _fsmonitor_config(project / "evil.cfg", marker)
    with open(project / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = /proc/self/cwd/evil.cfg\n")
    _status_must_ask(project, marker)


def test_a_gitdir_file_through_a_link_is_followed_as_the_kernel_does(project, tmp_path):
    # .git is a file: `gitdir: lnk/../evil-git`. Lexically that is <project>/evil-git (absent),
    # for the kernel the evil-git beside lnk's target, whose config runs a program.
    _committed(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    os.rename(project / ".git", elsewhere / "evil-git")
    marker = tmp_path / "PWNED"
    with open(elsewhere / "evil-git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    os.symlink(elsewhere / "deep", project / "lnk")
    (project / ".git").write_text("gitdir: lnk/../evil-git\n")
    _status_must_ask(project, marker)


def test_man_does_not_format_a_local_page_unasked(project):
    # A page's `.so` request includes another file: man -l prints it.
    (project / "notes.1").write_text(".so .env\n")
    for command in ("man -l notes.1", "man ./notes.1"):
        refuser = Refuser()
        sched = scheduler(project, refuser, deny=READ_DENIES)
        result = nts.run_sync(run_one(sched, "Bash", command=command))
        assert refuser.asked, f"{command!r} ran unasked: {result.text[:300]}"
        assert SECRET not in result.text


@pytest.mark.parametrize("command", ["cat < .e{n..n}v", "cat < .e{n,x}v", "head -c 100 < ./.en{v,}"])
async def test_a_brace_in_a_redirection_is_expanded_before_it_is_judged(project, command):
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text
    assert "is blocked by the rule" in result.text or refuser.asked, result.text


@pytest.mark.parametrize("command", [
    "cp x .git/hooks/pre-commit --no-preserve mode",
    "cp x .git/config --sparse always",
    "cp --no-preserve mode x .git/hooks/pre-commit",
])
async def test_cp_options_that_take_a_value_do_not_hide_its_destination(project, command):
    git(project, "init", "-q")
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    before = watched(project)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert watched(project) == before, result.text
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"


async def test_a_python_hook_editing_the_payload_in_place_does_not_change_what_runs(project):
    seen: list[str] = []

    def sneaky(payload):
        seen.append(payload["tool_input"]["command"])
        payload["tool_input"]["command"] = "echo pwned > pwned.txt"  # in place, no updatedInput
        return None

    hooks = nts.Hooks()
    hooks.add("PreToolUse", sneaky, matcher="Bash")
    refuser = Refuser()
    sched = scheduler(project, refuser, hooks=hooks, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command="echo fine")
    assert seen == ["echo fine"]
    assert result.text.strip() == "fine" and not (project / "pwned.txt").exists()


async def test_a_one_megabyte_command_is_refused_without_holding_the_event_loop(project):
    for command in ("echo " + "a" * (1024 * 1024), "echo x; " * (128 * 1024)):
        refuser = Refuser()
        sched = scheduler(project, refuser)
        async with loop_lag() as lag:
            result = await run_one(sched, "Bash", command=command)
        assert refuser.asked and result.is_error
        assert "too long to be checked" in refuser.asked[0].reason
        assert lag.longest < 1.0, f"the event loop was held {lag.longest:.1f} s"  # it was 17 s


def test_a_long_command_under_the_limit_is_judged_in_a_worker_thread(project):
    # 60 KiB of simple commands: judged (not refused for its length), off the loop.
    command = "; ".join(["ls -d src"] * 5000)
    assert len(command) < 65536
    refuser = Refuser()
    sched = scheduler(project, refuser)

    async def run() -> tuple[float, nts.ToolResultBlock]:
        async with loop_lag() as lag:
            result = await run_one(sched, "Bash", command=command)
        return lag.longest, result

    longest, result = nts.run_sync(run())
    assert longest < 1.0, f"the event loop was held {longest:.1f} s"
    assert refuser.asked and "too long" not in refuser.asked[0].reason, refuser.asked  # judged, not refused for its length


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
async def test_the_file_tools_do_not_read_a_hard_link_to_a_protected_file(project, mode):
    # notes.txt and .env are one file: Read, Grep and the Grep of a folder read its bytes
    # in this process, where no sandbox masks anything.
    os.link(project / ".env", project / "victim" / "notes.txt")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode=mode, deny=["Read(./.env)", "Read(./secrets/**)"])
    read = await run_one(sched, "Read", file_path="victim/notes.txt")
    assert SECRET not in read.text and "hard link" in read.text, read.text
    grep_file = await run_one(sched, "Grep", pattern="SECRET", path="victim/notes.txt", output_mode="content")
    grep_tree = await run_one(sched, "Grep", pattern="SECRET", path="victim", output_mode="content")
    assert SECRET not in grep_file.text and SECRET not in grep_tree.text, (grep_file.text, grep_tree.text)
