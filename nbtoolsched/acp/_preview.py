"""What a waiting Edit or Write would change, as the diff a person sees before allowing it.

Computed by the tools' own code (``plan_edit``: exact match, curly quotes, replace_all)
from the text the tool itself would read (the editor's buffer when the client offers
it), touching nothing. A call that could not apply, or any other tool, shows no diff;
the reason it asks is shown either way.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Mapping

from acp.schema import FileEditToolCallContent

from .._registry import ToolRegistry
from .._tool._context import ToolContext
from ..tools.files._access import read_text
from ..tools.files._edit import EditInput, EditRefused, EditTool, plan_edit
from ..tools.files._write import WriteInput, WriteTool
from ._toolcalls import diff_content

__all__ = ["would_change"]


async def would_change(tool_name: str, input: Mapping[str, Any], ctx: ToolContext,
                       registry: ToolRegistry) -> list[FileEditToolCallContent]:
    tool = registry.get(tool_name)
    try:
        if isinstance(tool, EditTool):
            edit = EditInput.model_validate(dict(input))
            plan = await plan_edit(tool.target(edit, ctx), edit, ctx)
            return [diff_content(plan.path, plan.before.text if plan.before is not None else None, plan.after)]
        if isinstance(tool, WriteTool):
            write = WriteInput.model_validate(dict(input))
            path = tool.target(write, ctx)
            exists = await asyncio.to_thread(os.path.isfile, path)
            return [diff_content(path, (await read_text(ctx, path)).text if exists else None, write.content)]
    except (EditRefused, ValueError, OSError):
        return []  # it will fail when it runs, and say why then
    return []
