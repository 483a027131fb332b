"""Fixtures for the scale layer: transcripts on disk, an isolated Claude config, policies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No user settings and no approval policy from the machine running the tests."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.delenv("NBTOOLSCHED_APPROVAL", raising=False)
    monkeypatch.delenv("NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY", raising=False)


def fixture(name: str) -> str:
    return str(TRANSCRIPTS / name)


def write_settings(folder: Path, data: dict, name: str = "settings.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data))
    return path
