"""The attacks on the command-line analysis (tests/attacks/reads and tests/attacks/writes),
run again with the analysis out of the way: every command is approved (bypass mode, and an approver that says yes), so only
the OS sandbox stands between it and the secret or the git hook. Each must be contained:
the secret never printed, nothing a later git or Claude Code run would execute changed.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

import nbtoolsched as nts
from tests.attacks.reads.test_cd import MOVED_READS as CD_READS
from tests.attacks.reads.test_folder_variables import MOVED_READS as VARIABLE_READS
from tests.attacks.reads.test_run_elsewhere import MOVED_READS as ELSEWHERE_READS
from tests.attacks.reads.test_spellings import NAMED_IN_BYPASS
from tests.attacks.writes.test_code_git_runs import CONFIG_WRITES as CODE_GIT_RUNS_WRITES
from tests.attacks.writes.test_config_writes import WRITES
from tests.attacks.writes.test_globs_and_expansions import CONFIG_WRITES as EXPANSION_WRITES
from tests.attacks.writes.test_writers_and_wrappers import CONFIG_WRITES as WRITER_WRITES
from tests.bypass_kit import READ_DENIES, SECRET, run_one

from .test_bash_tool import Approver, git

# In the order the attacks were found (the ids of unprintable commands are their index).
READS = list(dict.fromkeys([*NAMED_IN_BYPASS, *CD_READS, *ELSEWHERE_READS, *VARIABLE_READS]))
CONFIG_WRITES = list(dict.fromkeys([*WRITES, *WRITER_WRITES, *EXPANSION_WRITES, *CODE_GIT_RUNS_WRITES]))
WATCHED = (".git/hooks/pre-commit", ".git/config", ".claude/settings.json")


def _prepare(project: Path) -> dict[str, bytes | None]:
    git(project, "init", "-q")
    for name in ("x", "payload.sh", "pre-commit"):
        (project / name).write_text("#!/bin/sh\necho pwned\n")
    (project / "d" / "hooks").mkdir(parents=True)
    (project / "a" / "b").mkdir(parents=True)
    (project / ".claude").mkdir(exist_ok=True)
    (project / "git" / "hooks").mkdir(parents=True)
    (project / "git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho pwned\n")
    with tarfile.open(project / "evil.tar", "w") as tar:  # for `tar xf evil.tar -C .git`
        tar.add(project / "git" / "hooks", arcname="hooks")
    return {p: (project / p).read_bytes() if (project / p).exists() else None for p in WATCHED}


def _sched(project: Path) -> nts.Scheduler:
    perms = nts.Permissions(mode="bypassPermissions", cwd=project, approver=Approver(), deny=READ_DENIES)
    return nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)


@pytest.mark.parametrize("command", READS)
async def test_every_read_attack_is_contained_when_approved(project: Path, command: str) -> None:
    _prepare(project)
    result = await run_one(_sched(project), "Bash", command=command)
    assert SECRET not in result.text, f"{command!r} printed the secret: {result.text[:300]}"


@pytest.mark.parametrize("command", CONFIG_WRITES)
async def test_every_config_write_attack_is_contained_when_approved(project: Path, command: str) -> None:
    before = _prepare(project)
    result = await run_one(_sched(project), "Bash", command=command)
    after = {p: (project / p).read_bytes() if (project / p).exists() else None for p in WATCHED}
    assert after == before, f"{command!r} changed {[p for p in WATCHED if after[p] != before[p]]}: {result.text[:300]}"
    hooks = subprocess.run(["git", "config", "--get", "core.hooksPath"], cwd=project, capture_output=True, text=True)
    assert hooks.stdout == "", f"{command!r} set core.hooksPath"
    assert not (project / ".git" / "commondir").exists()


async def test_a_hard_link_made_before_is_masked_too(project: Path) -> None:
    os.link(project / ".env", project / "victim" / "notes.txt")
    result = await run_one(_sched(project), "Bash", command="cat victim/notes.txt; grep -r SECRET victim")
    assert SECRET not in result.text
