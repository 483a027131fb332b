import os
import subprocess

import pytest


@pytest.fixture
def project(tmp_path):
    """A git repository with secrets, a symlink out of it, and a folder outside it.

    A real repository (``git init``), so git commands are judged against a real one."""
    proj = tmp_path / "proj"
    outside = tmp_path / "outside"
    (proj / "src" / "deep").mkdir(parents=True)
    (proj / "secrets").mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    outside.mkdir()
    (proj / "secrets" / "key.txt").write_text("k")
    (proj / "src" / "a.py").write_text("a")
    (outside / "file.txt").write_text("o")
    os.symlink(outside, proj / "link_out")
    os.symlink(proj / "secrets", proj / "link_secret")
    return proj.resolve(), outside.resolve()


@pytest.fixture(autouse=True)
def _judged_by_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests pin what the command-line analysis decides, so they run with the OS
    sandbox off (NBTOOLSCHED_SANDBOX=off: the path a machine without bubblewrap takes).
    What the sandbox contains is tested in tests/sandbox/, with it on."""
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")
