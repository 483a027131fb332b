"""Read: a file's lines, numbered like ``cat -n``, and a note of what was seen.

What it shows is recorded in the session's file-state cache, so Edit, Write and
NotebookEdit can refuse files the model never saw or that changed since. Its results
are never persisted to disk: a persisted Read would only be read back with Read.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..._messages import ImageBlock, TextBlock
from ..._tool._base import ReadOnlyTool, ToolOutput, Validation
from ..._tool._context import ToolContext
from ._base import PathTool
from ._notebook import load_notebook, render_notebook
from ._paths import display, missing_path_message
from ._textfile import decode_bytes

__all__ = ["ReadTool", "ReadInput", "MAX_FILE_BYTES", "DEFAULT_LINE_LIMIT", "MAX_LINE_CHARS"]

MAX_FILE_BYTES = 256 * 1024  # larger files need offset/limit
DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 200_000  # about 50k tokens: beyond this a slice is too big to be useful
MAX_IMAGE_BYTES = 3_750_000  # the API's 5 MB base64 limit, before encoding
SNIFF_BYTES = 8192

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
BINARY_EXTENSIONS = frozenset(
    ".exe .dll .so .dylib .o .a .lib .bin .class .jar .war .pyc .pyo .whl .zip .gz .tgz .bz2 .xz .7z .rar .tar "
    ".zst .pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ico .bmp .tif .tiff .psd .mp3 .mp4 .mov .avi .mkv .wav "
    ".flac .ogg .webm .ttf .otf .woff .woff2 .eot .sqlite .db .parquet .pkl .npy .npz .h5".split()
)


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(min_length=1, description="The file to read; absolute, or relative to the working directory.")
    offset: int | None = Field(None, ge=0, description="The line number to start at (1-based). Give it for large files.")
    limit: int | None = Field(None, ge=1, description=f"How many lines to read (default {DEFAULT_LINE_LIMIT}).")


@dataclass(frozen=True, slots=True)
class _Slice:
    lines: list[str]
    first: int  # line number of lines[0]
    total: int | None  # lines in the file, when the whole file was scanned
    more: bool  # lines exist after the slice


class ReadTool(ReadOnlyTool[ReadInput], PathTool[ReadInput]):
    name = "Read"
    search_hint = "read a file's contents with line numbers"
    description = (
        "Read a file from the local filesystem. file_path may be absolute or relative to the working directory.\n"
        f"- By default up to {DEFAULT_LINE_LIMIT} lines are returned from the start of the file; use offset "
        "(1-based line number) and limit to read other parts. Files over 256 KB must be read in slices.\n"
        "- Lines come numbered like `cat -n` (number, tab, text). The numbers are not part of the file: leave them "
        f"out of Edit's old_string. Lines over {MAX_LINE_CHARS} characters are cut.\n"
        "- Images (PNG, JPEG, GIF, WebP) are shown as images; Jupyter notebooks as their cells with ids and outputs.\n"
        "- Directories cannot be read (use Glob or `ls`), nor binary files.\n"
        "- A file must be read before Edit, Write or NotebookEdit may change it."
    )
    input_model = ReadInput
    max_result_size_chars = float("inf")
    permission_kind = "read"

    async def validate_input(self, input: ReadInput, ctx: ToolContext) -> Validation:
        path = self.target(input, ctx)
        problem = _refusal(path, ctx.cwd, sliced=input.offset is not None or input.limit is not None)
        return Validation.fail(problem) if problem else Validation.OK

    async def call(self, input: ReadInput, ctx: ToolContext) -> ToolOutput:
        path = self.target(input, ctx)
        extension = os.path.splitext(path)[1].lower()
        if extension in IMAGE_TYPES:
            return await asyncio.to_thread(_read_image, path, IMAGE_TYPES[extension], ctx)
        if extension == ".ipynb":
            return await asyncio.to_thread(_read_notebook, path, ctx)
        first, count = max(input.offset or 1, 1), input.limit or DEFAULT_LINE_LIMIT
        chunk = await _read_slice(ctx, path, first, count)
        return await asyncio.to_thread(_shown, path, first, chunk, ctx)


def _refusal(path: str, cwd: str, *, sliced: bool) -> str | None:
    """Why this path cannot be read, or None."""
    if os.path.isdir(path):
        return f"{path} is a directory, not a file. List it with Glob (pattern '*' with path set to it) or `ls`."
    if not os.path.exists(path):
        return missing_path_message(path, cwd)
    if not os.path.isfile(path):
        return f"{path} is not a regular file (a pipe, socket or device); Read only reads files."
    extension = os.path.splitext(path)[1].lower()
    if extension in IMAGE_TYPES:
        size = os.path.getsize(path)
        return f"{path} is an image of {size} bytes, over the {MAX_IMAGE_BYTES} byte limit." if size > MAX_IMAGE_BYTES else None
    if extension in BINARY_EXTENSIONS or _looks_binary(path):
        return f"{path} is a binary file ({extension or 'no extension'}), which Read cannot show as text."
    if extension != ".ipynb" and not sliced and os.path.getsize(path) > MAX_FILE_BYTES:
        size = os.path.getsize(path)
        return (
            f"{path} is {size} bytes, over the {MAX_FILE_BYTES} byte limit for reading a whole file. "
            "Read a slice with offset and limit, or search it with Grep."
        )
    return None


def _looks_binary(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text has NULs but is text
    return b"\0" in head


async def _read_slice(ctx: ToolContext, path: str, first: int, count: int) -> _Slice:
    """Lines first..first+count-1: the host's text when it holds the file (an editor's
    unsaved buffer, through ``ctx.files``), else the disk's. A file too big to read whole
    is asked for the window alone (one line more, to know whether it goes on)."""
    files = ctx.files
    if files is not None:
        whole = await asyncio.to_thread(os.path.getsize, path) <= MAX_FILE_BYTES
        text = await (files.read_text(path) if whole else files.read_text(path, first, count + 1))
        if text is not None:
            return _slice_of_text(text, first, count) if whole else _window(_lines_of(text), first, count)
    return await asyncio.to_thread(_slice, path, first, count)


def _shown(path: str, first: int, chunk: _Slice, ctx: ToolContext) -> ToolOutput:
    whole = first == 1 and not chunk.more
    ctx.file_state.record(path, partial=not whole)
    label = display(path, ctx.cwd)
    if not chunk.lines:
        return ToolOutput(_empty_note(label, first, chunk.total))
    body = "\n".join(f"{n:>6}\t{_cut(line)}" for n, line in enumerate(chunk.lines, start=first))
    if len(body) > MAX_OUTPUT_CHARS:
        return ToolOutput(
            f"Lines {first}-{first + len(chunk.lines) - 1} of {label} come to {len(body)} characters, too many to show "
            f"at once (limit {MAX_OUTPUT_CHARS}). Read fewer lines with a smaller limit, or search with Grep.",
            is_error=True,
        )
    if chunk.more:
        last = first + len(chunk.lines) - 1
        of = f" of {chunk.total}" if chunk.total else ""
        body += f"\n\n(Showing lines {first}-{last}{of}. The file continues: read on with offset={last + 1}.)"
    return ToolOutput(body)


def _slice(path: str, first: int, count: int) -> _Slice:
    """Lines first..first+count-1 without holding more of a big file than needed."""
    size = os.path.getsize(path)
    if size <= MAX_FILE_BYTES:
        with open(path, "rb") as handle:
            text, _ = decode_bytes(handle.read())
        return _slice_of_text(text, first, count)
    with open(path, "rb") as handle:
        encoding = decode_bytes(handle.read(4))[1]
    with open(path, encoding=encoding, errors="replace", newline=None) as handle:
        window = list(itertools.islice(handle, first - 1, first + count))
    return _window([line.rstrip("\n") for line in window], first, count)


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _slice_of_text(text: str, first: int, count: int) -> _Slice:
    """The slice of a whole file's text."""
    lines = _lines_of(text)
    return _Slice(lines[first - 1 : first - 1 + count], first, len(lines), len(lines) > first - 1 + count)


def _window(lines: list[str], first: int, count: int) -> _Slice:
    """A slice from the lines that start at ``first`` (up to ``count + 1`` of them; the
    file's length unknown)."""
    return _Slice(lines[:count], first, None, len(lines) > count)


def _cut(line: str) -> str:
    line = line.rstrip("\r")
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line) - MAX_LINE_CHARS} more characters]"


def _empty_note(label: str, first: int, total: int | None) -> str:
    if total == 0:
        return f"{label} exists but is empty."
    return f"{label} has {total if total is not None else 'fewer'} lines; offset {first} is past its end. Use a smaller offset."


def _read_image(path: str, media_type: str, ctx: ToolContext) -> ToolOutput:
    with open(path, "rb") as handle:
        data = base64.b64encode(handle.read()).decode("ascii")
    ctx.file_state.record(path)
    source = {"type": "base64", "media_type": media_type, "data": data}
    return ToolOutput(path, content=[ImageBlock(source=source), TextBlock(f"Image: {display(path, ctx.cwd)}")])


def _read_notebook(path: str, ctx: ToolContext) -> ToolOutput:
    notebook = load_notebook(path)
    ctx.file_state.record(path)
    return ToolOutput(render_notebook(notebook, display(path, ctx.cwd)))
