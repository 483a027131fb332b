"""Edit: replace an exact string in a file the model has read and that has not changed.

The old string must occur exactly once (or ``replace_all``); anything else is refused
with a message that says what to do. Curly quotes in the file match straight quotes in
``old_string`` (models often type the straight ones). Writes are atomic.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..._tool._context import ToolContext
from ..._tool._base import ToolOutput, Validation
from ._base import PathTool
from ._diff import diff_snippet
from ._access import read_text, report_change, write_text
from ._guard import remember_write, stale_read_error
from ._paths import display, missing_path_message
from ._textfile import TextFile

__all__ = ["EditTool", "EditInput", "EditRefused", "plan_edit"]

_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


class EditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(min_length=1, description="The file to change; absolute, or relative to the working directory.")
    old_string: str = Field(description="The exact text to replace (without Read's line-number prefixes).")
    new_string: str = Field(description="The text to put in its place (must differ from old_string).")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring exactly one.")


class EditRefused(ValueError):
    """The edit cannot be made as asked; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class _Plan:
    path: str
    before: TextFile | None  # None: the edit creates the file
    after: str
    replaced: int


class EditTool(PathTool[EditInput]):
    name = "Edit"
    search_hint = "replace exact text in a file"
    description = (
        "Replace an exact string in a file.\n"
        "- Read the file first in this session; an edit of a file never read, or changed on disk since, is refused.\n"
        "- old_string must match the file exactly, indentation included, without Read's line-number prefix. It must "
        "occur once: add surrounding lines to make it unique, or set replace_all to change every occurrence.\n"
        "- An empty old_string creates a new file (or fills an empty one) with new_string.\n"
        "- Use NotebookEdit for .ipynb files."
    )
    input_model = EditInput
    permission_kind = "edit"

    async def validate_input(self, input: EditInput, ctx: ToolContext) -> Validation:
        try:
            await plan_edit(self.target(input, ctx), input, ctx)
        except EditRefused as refused:
            return Validation.fail(str(refused))
        return Validation.OK

    async def call(self, input: EditInput, ctx: ToolContext) -> ToolOutput:
        try:
            plan = await plan_edit(self.target(input, ctx), input, ctx)
        except EditRefused as refused:  # the file changed while permission was asked
            return ToolOutput(str(refused), is_error=True)
        return await _apply(plan, ctx)


async def plan_edit(path: str, input: EditInput, ctx: ToolContext) -> _Plan:
    """Check everything and compute the new text, touching nothing; EditRefused says why not.

    The file's text is the host's when it holds the file (``ctx.files``), else the disk's."""
    created = await asyncio.to_thread(_check_target, path, input, ctx)
    if created is not None:
        return created
    before = await read_text(ctx, path)
    return await asyncio.to_thread(_replacement, path, input, before)  # a big file's search stays off the loop


def _check_target(path: str, input: EditInput, ctx: ToolContext) -> _Plan | None:
    """The checks made on disk; a plan when the edit creates the file, None when it changes one."""
    if input.old_string == input.new_string:
        raise EditRefused("old_string and new_string are identical, so there is nothing to change.")
    if path.endswith(".ipynb"):
        raise EditRefused(f"{path} is a Jupyter notebook; change its cells with NotebookEdit.")
    if os.path.isdir(path):
        raise EditRefused(f"{path} is a directory, not a file.")
    if not os.path.exists(path):
        if input.old_string == "":
            return _Plan(path, None, input.new_string, 0)
        raise EditRefused(missing_path_message(path, ctx.cwd) + " To create a file, use an empty old_string or Write.")
    problem = stale_read_error(ctx, path)
    if problem:
        raise EditRefused(problem)
    return None


def _replacement(path: str, input: EditInput, before: TextFile) -> _Plan:
    """The new text of an existing file, or EditRefused."""
    if input.old_string == "":
        if before.text.strip():
            raise EditRefused(f"old_string is empty, which creates a file, but {path} already has content. "
                              "Give the text to replace, or use Write to replace the whole file.")
        return _Plan(path, before, input.new_string, 1)
    old = _locate(before.text, input.old_string.replace("\r\n", "\n") if before.crlf else input.old_string, path)
    count = before.text.count(old)
    if count > 1 and not input.replace_all:
        raise EditRefused(
            f"old_string occurs {count} times in {path}. Include more surrounding lines so it matches exactly one "
            "place, or set replace_all to true to change all of them."
        )
    after = before.text.replace(old, input.new_string, -1 if input.replace_all else 1)
    return _Plan(path, before, after, count if input.replace_all else 1)


def _locate(text: str, old: str, path: str) -> str:
    """The text in the file that old_string means: itself, or a curly-quoted twin."""
    if old in text:
        return old
    straight = text.translate(_CURLY)
    index = straight.find(old.translate(_CURLY))
    if index >= 0:
        return text[index : index + len(old)]
    raise EditRefused(
        f"old_string was not found in {path}. Copy it exactly from a fresh Read (same whitespace and indentation, "
        "no line-number prefix)."
    )


async def _apply(plan: _Plan, ctx: ToolContext) -> ToolOutput:
    await write_text(ctx, plan.path, plan.after, like=plan.before)
    remember_write(ctx, plan.path)
    report_change(ctx, plan.path, plan.before.text if plan.before is not None else None, plan.after)
    return await asyncio.to_thread(_summary, plan, ctx)


def _summary(plan: _Plan, ctx: ToolContext) -> ToolOutput:
    label = display(plan.path, ctx.cwd)
    if plan.before is None:
        return ToolOutput({"file_path": plan.path, "replaced": 0}, content=f"Created {label} with the given text.")
    what = f"{plan.replaced} occurrences" if plan.replaced > 1 else "1 occurrence"
    diff = diff_snippet(plan.before.text, plan.after, label)
    return ToolOutput({"file_path": plan.path, "replaced": plan.replaced}, content=f"Edited {label}: replaced {what}.\n{diff}")
