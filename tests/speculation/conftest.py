"""The speculation tests' session: the real built-in tools, a real project tree, tree hashing.

The tools touch the real file system and run real subprocesses, so the speculation's
redirection is tested against what a tool actually does with the path it is given.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import httpx

import nbtoolsched as nts
from nbtoolsched.speculation import ScriptedTurn, scripted_loop
from nbtoolsched.tools import WebFetchTool, default_registry


FETCHED: list[str] = []  # every URL a WebFetch in these tests tried to reach


def _no_network(request: httpx.Request) -> httpx.Response:
    """WebFetch's transport here: a speculation must stop before any fetch, so none may arrive."""
    FETCHED.append(str(request.url))
    return httpx.Response(599, text="the speculation tests never fetch")


def make_registry() -> nts.ToolRegistry:
    """Every real built-in tool; WebFetch records, instead of sending, any request that gets out."""
    registry = default_registry()
    registry.register(WebFetchTool(transport=httpx.MockTransport(_no_network)), replace=True)
    return registry


@pytest.fixture(autouse=True)
def _path_rewriting(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's path-rewriting overlay: what a speculation uses where the OS sandbox
    cannot start (NBTOOLSCHED_SANDBOX=off here). test_kernel_overlay.py tests the other."""
    if request.node.get_closest_marker("kernel_overlay") is None:
        monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")


# -- workspace --------------------------------------------------------------------------------


@pytest.fixture
def space(tmp_path: Path) -> dict[str, Path]:
    """A project dir, a sibling "outside" dir and a session dir, all real."""
    project, outside, session = tmp_path / "project", tmp_path / "outside", tmp_path / "session"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def main():\n    return 1\n")
    (project / "README.md").write_text("# Demo\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    session.mkdir()
    return {"project": project.resolve(), "outside": outside.resolve(), "session": session.resolve()}


@pytest.fixture
def sched(space: dict[str, Path]) -> nts.Scheduler:
    return nts.Scheduler(make_registry(), cwd=space["project"], session_dir=space["session"])


def tree_hash(root: Path) -> str:
    """Names, kinds, modes, file bytes and symlink targets of everything under ``root``."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            digest.update(os.path.relpath(path, root).encode() + b"\0" + oct(info.st_mode).encode())
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(info.st_mode):
                digest.update(Path(path).read_bytes())
    return digest.hexdigest()


_ids = itertools.count()


def use(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_spec_{next(_ids):04d}", "name": name, "input": input}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def loop(*turns: list[dict[str, Any]] | ScriptedTurn) -> Any:
    return scripted_loop(list(turns))
