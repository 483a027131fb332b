"""Shared pieces for the attack tests: a project with secrets, an approver that refuses
everything and remembers being asked, and a scheduler over the real built-in tools.

Every test here drives the public API only (``nts.Scheduler`` with
``nts.default_registry``, ``nts.Permissions``, ``nts.speculate``) and asserts the SAFE
behaviour: each one is a way through that worked when it was written.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.models import tool_use

SECRET = "SECRET-7f3a"
READ_DENIES = ["Read(.env)", "Read(secrets/**)"]
_ids = itertools.count()


class Refuser:
    """An approver that says no to everything and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, request: Any) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return nts.ApprovalAnswer.deny("no")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "victim").mkdir(parents=True)
    (proj / "victim" / "keep.txt").write_text("keep\n")
    (proj / "secrets").mkdir()
    (proj / "secrets" / "key.txt").write_text(f"{SECRET} key\n")
    (proj / ".env").write_text(f"TOKEN={SECRET}\n")
    (proj / "README.md").write_text("# readme\n")
    return proj.resolve()


def scheduler(project: Path, refuser: Refuser, hooks: nts.Hooks | None = None, **rules: Any) -> nts.Scheduler:
    perms = nts.Permissions(mode=rules.pop("mode", "default"), cwd=project, approver=refuser, **rules)
    return nts.Scheduler(nts.default_registry(), permissions=perms, hooks=hooks, cwd=project)


async def run_one(sched: nts.Scheduler, name: str, **input: Any) -> nts.ToolResultBlock:
    (result,) = await sched.run([tool_use(name, id=f"toolu_atk_{next(_ids)}", **input)])
    return result


def git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
