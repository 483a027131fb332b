"""Shared fixtures: a real Scheduler over the file tools, rooted in a temp dir."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.tools.files import FILE_TOOLS
from nbtoolsched.tools.files._glob import GlobTool
from nbtoolsched.tools.files._grep import GrepTool
from nbtoolsched.tools.files._ripgrep import find_rg

_ids = itertools.count()

ENGINES = ["python"] + (["rg"] if find_rg() else [])


class Files:
    """A scheduler over FILE_TOOLS in ``root``, and shortcuts to call one tool."""

    def __init__(self, root: Path, engine: str = "auto") -> None:
        self.root = root
        tools: list[Any] = [t() for t in FILE_TOOLS if t not in (GlobTool, GrepTool)]
        tools += [GlobTool(engine=engine), GrepTool(engine=engine)]
        self.sched = nts.Scheduler(nts.ToolRegistry(tools), cwd=root)

    @staticmethod
    def block(name: str, **input: Any) -> dict[str, Any]:
        return block(name, **input)

    @property
    def ctx(self) -> nts.ToolContext:
        return self.sched.context

    async def call(self, name: str, **input: Any) -> nts.ToolResultBlock:
        (result,) = await self.sched.run([block(name, **input)])
        return result

    async def ok(self, name: str, **input: Any) -> str:
        result = await self.call(name, **input)
        assert not result.is_error, result.text
        return result.text

    async def error(self, name: str, **input: Any) -> str:
        result = await self.call(name, **input)
        assert result.is_error, result.text
        return result.text


def block(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": input}


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


@pytest.fixture(params=ENGINES)
def engine_files(request: pytest.FixtureRequest, tmp_path: Path) -> Files:
    return Files(tmp_path, request.param)


@pytest.fixture
def python_files(tmp_path: Path) -> Files:
    """Forced pure-Python engine, for what only it can get wrong."""
    return Files(tmp_path, "python")
