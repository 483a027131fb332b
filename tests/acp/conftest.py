"""A project folder with Claude Code settings and files, and a work folder for the agent process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SETTINGS = {"permissions": {"deny": ["Read(./secret.txt)"]}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    (folder / "a.txt").write_text("alpha\n", encoding="utf-8")
    (folder / "b.txt").write_text("beta\n", encoding="utf-8")
    (folder / "secret.txt").write_text("the password\n", encoding="utf-8")
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder
