"""Test tools shaped like Claude Code's (same names and input fields) and tree hashing.

They touch the real file system and run real subprocesses, so the speculation's
redirection is tested against what a tool actually does with the path it is given.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import shlex
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import nbtoolsched as nts
from nbtoolsched.speculation import ScriptedTurn, scripted_loop


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadInput(_Strict):
    file_path: str


class WriteInput(_Strict):
    file_path: str
    content: str


class EditInput(_Strict):
    file_path: str
    old_string: str
    new_string: str


class PathInput(_Strict):
    file_path: str


class BashInput(_Strict):
    command: str


class UrlInput(_Strict):
    url: str


class Read(nts.Tool):
    name = "Read"
    input_model = ReadInput
    permission_kind = "read"

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    async def validate_input(self, input: ReadInput, ctx: nts.ToolContext) -> nts.Validation:
        if not os.path.isfile(ctx.resolve_path(input.file_path)):
            return nts.Validation.fail(f"File does not exist: {input.file_path}")
        return nts.Validation.OK

    async def call(self, input: ReadInput, ctx: nts.ToolContext) -> str:
        path = ctx.resolve_path(input.file_path)
        text = Path(path).read_text()
        ctx.file_state.record(path)
        return text


class Write(nts.Tool):
    name = "Write"
    input_model = WriteInput
    permission_kind = "edit"

    async def validate_input(self, input: WriteInput, ctx: nts.ToolContext) -> nts.Validation:
        path = ctx.resolve_path(input.file_path)
        if os.path.exists(path) and ctx.file_state.changed_since_read(path):
            return nts.Validation.fail("File has not been read yet. Read it first before writing to it.")
        return nts.Validation.OK

    async def call(self, input: WriteInput, ctx: nts.ToolContext) -> str:
        path = ctx.resolve_path(input.file_path)
        if os.path.exists(path) and ctx.file_state.changed_since_read(path):
            return nts.ToolOutput("File has not been read yet.", is_error=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).write_text(input.content)
        ctx.file_state.record(path)
        return f"File written: {path}"


class Edit(nts.Tool):
    name = "Edit"
    input_model = EditInput
    permission_kind = "edit"

    async def validate_input(self, input: EditInput, ctx: nts.ToolContext) -> nts.Validation:
        path = ctx.resolve_path(input.file_path)
        if not os.path.isfile(path):
            return nts.Validation.fail(f"File does not exist: {input.file_path}")
        if ctx.file_state.changed_since_read(path):
            return nts.Validation.fail("File has not been read yet. Read it first before editing it.")
        if input.old_string not in Path(path).read_text():
            return nts.Validation.fail(f"String to replace not found in file: {input.old_string!r}")
        return nts.Validation.OK

    async def call(self, input: EditInput, ctx: nts.ToolContext) -> nts.ToolOutput:
        path = ctx.resolve_path(input.file_path)
        if ctx.file_state.changed_since_read(path):
            return nts.ToolOutput("File has not been read yet.", is_error=True)
        text = Path(path).read_text()
        Path(path).write_text(text.replace(input.old_string, input.new_string, 1))
        ctx.file_state.record(path)
        return nts.ToolOutput(f"Edited {path}")


class Delete(nts.Tool):
    """A write tool that removes a file: how a deletion reaches the overlay."""

    name = "Delete"
    input_model = PathInput
    permission_kind = "edit"

    async def call(self, input: PathInput, ctx: nts.ToolContext) -> str:
        os.remove(ctx.resolve_path(input.file_path))
        return "deleted"


READ_ONLY_COMMANDS = {"cat", "ls", "echo", "grep", "head", "wc", "pwd", "true"}


class Bash(nts.Tool):
    name = "Bash"
    input_model = BashInput
    errors_cancel_siblings = True

    def is_read_only(self, input: BashInput) -> bool:
        if any(ch in input.command for ch in ">|;&`$("):
            return False
        words = shlex.split(input.command)
        return bool(words) and words[0] in READ_ONLY_COMMANDS

    def is_concurrency_safe(self, input: BashInput) -> bool:
        return self.is_read_only(input)

    async def call(self, input: BashInput, ctx: nts.ToolContext) -> nts.ToolOutput:
        proc = await asyncio.create_subprocess_shell(
            input.command, cwd=ctx.cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await proc.communicate()
        return nts.ToolOutput(out.decode(), is_error=proc.returncode != 0, exit_code=proc.returncode)


class WebFetch(nts.Tool):
    """Read-only, like the real one, and still outside what a speculation may touch."""

    name = "WebFetch"
    input_model = UrlInput

    def is_read_only(self, input: Any) -> bool:
        return True

    async def call(self, input: UrlInput, ctx: nts.ToolContext) -> str:
        raise AssertionError("WebFetch must never run during a speculation")


class Clock(nts.Tool):
    """A read tool without a path (as Glob or Grep over cwd are)."""

    name = "Clock"
    permission_kind = "read"

    def is_read_only(self, input: Any) -> bool:
        return True

    async def call(self, input: Any, ctx: nts.ToolContext) -> str:
        return "12:00"


def make_registry() -> nts.ToolRegistry:
    return nts.ToolRegistry([Read(), Write(), Edit(), Delete(), Bash(), WebFetch(), Clock()])


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
