"""Shared pieces for the attack tests: a project with secrets, an approver that refuses
everything and remembers being asked, and a scheduler over the real built-in tools.

Every test here drives the public API only (``nts.Scheduler`` with
``nts.default_registry``, ``nts.Permissions``, ``nts.speculate``) and asserts the SAFE
behaviour: each one is a way through that worked when it was written.

They are filed by what they attack:
- reads/: Read deny rules and the working directory's edge, through Bash and the file tools
- writes/: writes into config places (git's hooks and config, tools' config folders,
  shells' startup files) by any writer, name or redirection
- config_places/: a repository's or toolchain's own files that make a read-only command
  run a program or write
- rules/: allow and deny rules, hooks, and the approvals that save rules
- processes/: what a command leaves running, and what its analysis costs the event loop
- test_speculation_overlay.py, test_webfetch.py, test_grep_*.py, test_cellparse.py: the
  speculation overlay, WebFetch, Grep, and the notebook's cell parser
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.bypass_kit import READ_DENIES, SECRET, Refuser, make_project, run_one, scheduler

__all__ = ["READ_DENIES", "SECRET", "WATCHED", "Refuser", "committed", "git", "run_one", "scheduler", "watched"]  # what the attack tests import


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def committed(project: Path) -> None:
    """Make ``project`` a repository with everything in it committed, its secrets included."""
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "with the secret")


WATCHED = (".git/hooks/pre-commit", ".git/config")  # what the config-write attacks try to change


def watched(project: Path) -> dict[str, bytes | None]:
    """The bytes of each WATCHED file (None: absent), to compare before and after."""
    return {p: (project / p).read_bytes() if (project / p).exists() else None for p in WATCHED}


@pytest.fixture(autouse=True)
def _judged_by_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests pin what the command-line analysis decides, so they run with the OS
    sandbox off (NBTOOLSCHED_SANDBOX=off: the path a machine without bubblewrap takes).
    What the sandbox contains is tested in tests/sandbox/, with it on."""
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")
