"""The file tools' text, read and written through the host when it holds the files.

``ToolContext.files`` (a ``FileAccess``) is set by a host with editor buffers of its own
(the ACP agent: an editor's unsaved text is what Read shows and what Edit changes). When
it is None, or declines an operation, the local disk serves, as it always has. Either way
the tools keep their own semantics: a CRLF file is seen with LF and written back with
CRLF, an encoding found on disk is kept when the disk is written.
"""

from __future__ import annotations

import asyncio
import os

from ..._tool._context import ToolContext
from ._textfile import TextFile, load_text, save_text, sniff_encoding, text_file

__all__ = ["read_text", "write_text", "report_change"]


async def read_text(ctx: ToolContext, path: str) -> TextFile:
    """The whole text of ``path``: the host's, else the disk's."""
    files = ctx.files
    if files is not None:
        text = await files.read_text(path)
        if text is not None:  # the encoding is the disk's, in case the disk is written later
            return text_file(text, await asyncio.to_thread(_encoding_on_disk, path))
    return await asyncio.to_thread(load_text, path)


async def write_text(ctx: ToolContext, path: str, text: str, like: TextFile | None = None) -> None:
    """Replace ``path`` with ``text`` in the line endings (and, on disk, the encoding) of
    ``like``; missing parent folders are made first."""
    await asyncio.to_thread(os.makedirs, os.path.dirname(path), exist_ok=True)
    files = ctx.files
    if files is not None and await files.write_text(path, (like or TextFile("")).render(text)):
        return
    await asyncio.to_thread(save_text, path, text, like)


def report_change(ctx: ToolContext, path: str, before: str | None, after: str) -> None:
    """Tell the host what a call changed (nothing to do without one)."""
    if ctx.files is not None:
        ctx.files.changed(ctx.tool_use_id, path, before, after)


def _encoding_on_disk(path: str) -> str:
    try:
        return sniff_encoding(path)
    except OSError:
        return "utf-8"
