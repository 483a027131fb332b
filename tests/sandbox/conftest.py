"""The OS sandbox's tests run the real thing: bubblewrap, as root and as an unprivileged user.

Where bubblewrap cannot start they skip, saying why; with NBTOOLSCHED_SANDBOX_TESTS=required
(as .ci/run sets it) they fail instead: CI must never pass them by not running them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from nbtoolsched.sandbox import availability
from tests.bypass_kit import make_project

REQUIRED = os.environ.get("NBTOOLSCHED_SANDBOX_TESTS", "").lower() == "required"
NOBODY = 65534


@pytest.fixture(autouse=True)
def _sandbox_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox as users get it: on by default, the real bubblewrap, a fresh probe."""
    for name in ("NBTOOLSCHED_SANDBOX", "NBTOOLSCHED_BWRAP"):
        monkeypatch.delenv(name, raising=False)
    require_sandbox()


def require_sandbox() -> None:
    """Fail (CI) or skip (elsewhere, saying why) where bubblewrap cannot start."""
    found = availability()
    if not found.ok:
        message = f"the OS sandbox cannot start here: {found.reason} ({found.fix})"
        if REQUIRED:
            pytest.fail(f"the sandbox tests must run here (NBTOOLSCHED_SANDBOX_TESTS=required) but cannot: {message}")
        pytest.skip(message + "; set NBTOOLSCHED_SANDBOX_TESTS=required to make this a failure")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def require_root_tools() -> None:
    """The unprivileged tests switch to nobody with setpriv, which only root can do."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        message = "the unprivileged-user tests need root and setpriv (util-linux) to become nobody"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A folder owned by nobody that nobody can reach (pytest's tmp_path is root's, mode 0700)."""
    require_root_tools()
    folder = Path(tempfile.mkdtemp(prefix="nbtoolsched-nobody-"))
    folder.chmod(0o755)
    os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_nobody(argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv]


def chown_tree(root: Path, uid: int = NOBODY) -> None:
    subprocess.run(["chown", "-R", f"{uid}:{uid}", str(root)], check=True)
