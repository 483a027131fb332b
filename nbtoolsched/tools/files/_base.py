"""What every file tool shares: which input field names the path, and how hooks see it."""

from __future__ import annotations

from typing import Any, ClassVar

from ...tool import Tool, ToolContext
from ._paths import backfill_path, resolve

__all__ = ["PathTool"]


class PathTool(Tool):
    """A tool whose input names one file or directory in ``path_field``."""

    path_field: ClassVar[str] = "file_path"

    def get_path(self, input: Any) -> str | None:
        value = getattr(input, self.path_field, None)
        return value if isinstance(value, str) and value else None

    def backfill_observable_input(self, observable: dict[str, Any], ctx: ToolContext) -> None:
        backfill_path(observable, self.path_field, ctx)

    def target(self, input: Any, ctx: ToolContext) -> str:
        """The absolute path the call acts on (cwd when the optional path is absent)."""
        raw = self.get_path(input)
        return resolve(ctx, raw) if raw else ctx.cwd
