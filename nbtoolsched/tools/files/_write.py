"""Write: create a file, or replace one the model has read in full.

The write is atomic (temp file + rename, mode kept), so a crash or a concurrent reader
never sees half a file; an existing file keeps its encoding and CRLF line endings.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import BaseModel, ConfigDict, Field

from ..._tool._context import ToolContext
from ..._tool._base import ToolOutput
from ._base import CheckedWriteTool
from ._diff import diff_snippet
from ._access import read_text, report_change, write_text
from ._guard import remember_write, stale_read_error
from ._paths import display
from ._textfile import TextFile

__all__ = ["WriteTool", "WriteInput"]


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(min_length=1, description="The file to write; absolute, or relative to the working directory.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(CheckedWriteTool[WriteInput]):
    name = "Write"
    search_hint = "create or overwrite a file"
    description = (
        "Write a whole file: create it (missing parent directories are made) or replace its content.\n"
        "- To replace an existing file you must have read all of it with Read first in this session, and it must "
        "not have changed since; otherwise the write is refused.\n"
        "- To change part of a file prefer Edit, which sends only the change.\n"
        "- The write is atomic; an existing file keeps its permissions, encoding and line endings."
    )
    input_model = WriteInput

    def refusal(self, path: str, ctx: ToolContext) -> str | None:
        return _refusal(path, ctx)

    async def write(self, path: str, input: WriteInput, ctx: ToolContext) -> ToolOutput:
        # The text replaced is the host's when it holds the file (ctx.files), else the disk's.
        before = await read_text(ctx, path) if await asyncio.to_thread(os.path.exists, path) else None
        await write_text(ctx, path, input.content, like=before)
        remember_write(ctx, path)
        report_change(ctx, path, before.text if before is not None else None, _as_shown(input.content, before))
        return await asyncio.to_thread(_summary, path, input.content, before, ctx)


def _refusal(path: str, ctx: ToolContext) -> str | None:
    if os.path.isdir(path):
        return f"{path} is a directory; give the path of a file inside it."
    if os.path.exists(path):
        return stale_read_error(ctx, path, need_full=True)
    return None


def _as_shown(content: str, before: TextFile | None) -> str:
    """The new text as the old one is shown: with LF when the file keeps CRLF endings."""
    return content.replace("\r\n", "\n") if before is not None and before.crlf else content


def _summary(path: str, content: str, before: TextFile | None, ctx: ToolContext) -> ToolOutput:
    label = display(path, ctx.cwd)
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    if before is None:
        return ToolOutput({"type": "create", "file_path": path}, content=f"Created {label} ({lines} lines).")
    diff = diff_snippet(before.text, _as_shown(content, before), label)
    summary = f"Replaced the content of {label} ({lines} lines)." + (f"\n{diff}" if diff else " The content was unchanged.")
    return ToolOutput({"type": "update", "file_path": path}, content=summary)
