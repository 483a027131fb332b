"""What every file tool shares: which input field names the path, and how hooks see it."""

from __future__ import annotations

from typing import Any, ClassVar

from ..._tool._base import InputT, Tool, ToolOutput, Validation
from ..._tool._context import ToolContext
from ._paths import backfill_path, resolve

__all__ = ["PathTool", "CheckedWriteTool"]


class PathTool(Tool[InputT]):
    """A tool whose input names one file or directory in ``path_field``."""

    path_field: ClassVar[str] = "file_path"

    def get_path(self, input: InputT) -> str | None:
        value = getattr(input, self.path_field, None)
        return value if isinstance(value, str) and value else None

    def backfill_observable_input(self, observable: dict[str, Any], ctx: ToolContext) -> None:
        backfill_path(observable, self.path_field, ctx)

    def target(self, input: InputT, ctx: ToolContext) -> str:
        """The absolute path the call acts on (cwd when the optional path is absent)."""
        raw = self.get_path(input)
        return resolve(ctx, raw) if raw else ctx.cwd


class CheckedWriteTool(PathTool[InputT]):
    """A writing tool that refuses early and checks again just before it writes.

    The first check (in ``validate_input``) spares a permission prompt for a write that
    cannot happen; the second (in ``call``) catches a file changed while a person was
    deciding. Subclasses say what makes a target unacceptable and how to write it.
    """

    permission_kind = "edit"

    def refusal(self, path: str, ctx: ToolContext) -> str | None:
        raise NotImplementedError

    async def write(self, path: str, input: InputT, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    async def validate_input(self, input: InputT, ctx: ToolContext) -> Validation:
        problem = self.refusal(self.target(input, ctx), ctx)
        return Validation.fail(problem) if problem else Validation.OK

    async def call(self, input: InputT, ctx: ToolContext) -> ToolOutput:
        path = self.target(input, ctx)
        problem = self.refusal(path, ctx)
        if problem:
            return ToolOutput(problem, is_error=True)
        return await self.write(path, input, ctx)
