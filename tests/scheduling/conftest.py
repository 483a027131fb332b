"""The scheduling tests' registry: spy tools (tests/spies.py) named like the built-ins,
each recording when it ran, and a scheduler over them."""

from __future__ import annotations

from typing import Any

import pytest

import nbtoolsched as nts
from tests.spies import Recorder, SpyTool


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def spy_registry(recorder: Recorder) -> nts.ToolRegistry:
    return nts.ToolRegistry(
        [
            SpyTool("Read", recorder, safe=True),
            SpyTool("Grep", recorder, safe=True),
            SpyTool("Glob", recorder, safe=True),
            SpyTool("Edit", recorder, safe=False),
            SpyTool("Bash", recorder, safe=False, shell=True),
            SpyTool("SafeBash", recorder, safe=True, shell=True),
            SpyTool("Sleep", recorder, safe=True, behavior="cancel"),
        ]
    )


@pytest.fixture
def scheduler(spy_registry: nts.ToolRegistry, tmp_path: Any) -> nts.Scheduler:
    return nts.Scheduler(spy_registry, cwd=tmp_path, session_dir=tmp_path / "session")
