"""Attacks on the speculation overlay with the real built-in tools and real files.

The attacker writes the model's tool calls and may have put files and symlinks in the
project; the user's settings are theirs. Each test takes a full snapshot (paths, bytes,
modes, symlink targets) of the project and of a sibling folder outside it, and asserts
the safe behaviour: nothing outside cwd is read while speculating, nothing changes before
accept, reject leaves both byte for byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched import models
from nbtoolsched.speculation import Speculation, agent_loop, speculate

SECRET = "TOPSECRET-91c2"


@pytest.fixture(autouse=True, params=["paths", pytest.param("kernel", marks=pytest.mark.kernel_overlay)])
def overlay_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, _judged_by_the_parse: None) -> str:
    """Every attack on both overlays: Claude Code's path rewriting (no sandbox for
    commands, as on a machine without bubblewrap) and the kernel overlay."""
    if request.param == "kernel":
        from tests.sandbox.conftest import require_sandbox

        monkeypatch.delenv("NBTOOLSCHED_SANDBOX", raising=False)
        require_sandbox()
    return str(request.param)


def tree_snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root``: kind, mode, and the bytes or the link target."""
    out: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                out[rel] = ("file", info.st_mode, Path(path).read_bytes())
            else:
                out[rel] = ("other", info.st_mode)
    return out


@pytest.fixture
def space(tmp_path: Path) -> dict[str, Path]:
    """``outside/`` holds a secret; the project sits two levels down beside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    project = tmp_path / "x" / "proj"
    (project / "c").mkdir(parents=True)
    (project / "c" / "f.txt").write_text("f\n")
    return {"base": tmp_path, "outside": outside.resolve(), "project": project.resolve()}


def snapshots(space: dict[str, Path]) -> tuple[dict[str, tuple[Any, ...]], ...]:
    return tree_snapshot(space["project"]), tree_snapshot(space["outside"])


async def run(space: dict[str, Path], *calls: tuple[str, dict[str, Any]], mode: str = "acceptEdits") -> Speculation:
    """One speculation over the real built-in tools: each call its own turn, then "done"."""
    project = space["project"]
    perms = nts.Permissions(mode=mode, cwd=project)
    sched = nts.Scheduler(nts.default_registry(), permissions=perms, cwd=project)
    turns = [[models.tool_use(name, **input)] for name, input in calls] + [[models.text("done")]]
    model = models.ScriptedModel(turns)
    loop = agent_loop(lambda s, messages, max_turns: nts.Agent(model, s, messages=messages, max_turns=max_turns))
    return await speculate("go on", loop, scheduler=sched)


def shown(spec: Speculation) -> str:
    """Everything the model saw from its tools."""
    return repr(spec.transcript)


@pytest.mark.parametrize("pattern", ["../../../outside/*", "../../../**"])
async def test_a_glob_pattern_climbing_from_a_symlinked_path_stays_inside(space, pattern):
    # `up -> .`: `up/up/c` is judged as the path, `up/up/c/../../..` (cwd) as where the
    # pattern moves it. The gate hands the tool the resolved `cwd/c`, and from there the
    # same `..` climbs two levels above cwd: Glob listed the secret's name.
    os.symlink(".", space["project"] / "up")
    before = snapshots(space)
    spec = await run(space, ("Glob", {"pattern": pattern, "path": "up/up/c"}))
    assert spec.boundary is not None and spec.boundary.kind == "outside_cwd", spec.boundary
    assert "secret.txt" not in shown(spec)
    await spec.reject()
    assert snapshots(space) == before


@pytest.mark.parametrize(
    "mode, command",
    [
        # read-only, and missed by the session's path checks: acceptEdits runs them unasked
        ("acceptEdits", "diff --to-file=../../outside/secret.txt c/f.txt"),
        ("acceptEdits", "comm c/f.txt ../../outside/secret.txt"),
        ("acceptEdits", "git diff --no-index c/f.txt ../../outside/secret.txt"),
        ("acceptEdits", "jq -R . ../../outside/secret.txt"),
        # bypassPermissions lets the session read anywhere; a speculation still may not
        ("bypassPermissions", "cat ../../outside/secret.txt"),
        ("bypassPermissions", "cd ../../outside && cat secret.txt"),
        ("bypassPermissions", "cat < ../../outside/secret.txt"),
        ("bypassPermissions", "grep -r TOP c/"),  # c/link -> the outside folder, followed by -r
    ],
)
async def test_a_read_only_command_reading_outside_cwd_is_a_boundary(space, mode, command):
    os.symlink(space["outside"], space["project"] / "c" / "link")
    before = snapshots(space)
    spec = await run(space, ("Bash", {"command": command}), mode=mode)
    assert spec.boundary is not None and spec.boundary.kind == "outside_cwd", spec.boundary
    assert SECRET not in shown(spec)
    await spec.reject()
    assert snapshots(space) == before


async def test_a_read_only_command_inside_cwd_still_runs(space):
    spec = await run(space, ("Bash", {"command": "cat c/f.txt && ls c"}), mode="bypassPermissions")
    assert spec.boundary is not None and spec.boundary.complete, spec.boundary
    assert "f.txt" in shown(spec)
