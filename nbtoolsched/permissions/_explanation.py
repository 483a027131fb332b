"""What ``Permissions.explain`` hands back, and the tool it judges when it knows only a name.

``Explanation`` names the rule, hook, mode or check that settled a call and the steps
that led there. ``NamedTool`` stands in for a tool known only by its name (Bash, Read,
Edit...: a transcript replay meets tools no registry here has): its kind from the name,
and for Bash the same read-only analysis as the real tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..shell import analyze
from .._tool._decision import Decision
from .._tool._base import PermissionKind, Tool
from ._rules import SHELL_RULE_TOOLS

__all__ = ["Explanation", "NamedTool"]


@dataclass
class Explanation:
    """Which rule, hook, mode or check settled a call, and the steps that led there."""

    tool_name: str
    behavior: str  # allow | deny | ask
    decision: Decision
    steps: list[str] = field(default_factory=list)

    @property
    def decided_by(self) -> str:
        return self.decision.reason.kind if self.decision.reason else "default"

    @property
    def rule(self) -> str | None:
        return self.decision.reason.rule if self.decision.reason else None

    @property
    def source(self) -> str | None:
        return self.decision.reason.source if self.decision.reason else None

    @property
    def message(self) -> str | None:
        return self.decision.message

    def __str__(self) -> str:
        head = f"{self.tool_name}: {self.behavior} (decided by {self.decision.reason.describe() if self.decision.reason else 'default'})"
        lines = [head] + [f"  - {step}" for step in self.steps]
        if self.decision.message:
            lines.append(f"  message: {self.decision.message}")
        return "\n".join(lines)


class NamedTool(Tool[Any]):
    """Stands in for a tool that explain() only knows by name (Bash, Read, Edit...): its
    kind from the name, and for Bash the same read-only analysis as the real tool."""

    _READ = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
    _EDIT = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]
        self.is_mcp = name.startswith("mcp__")  # type: ignore[misc]
        kind: PermissionKind = "generic"
        if name in self._READ or name in self._EDIT:
            kind = "read" if name in self._READ else "edit"
        elif name in SHELL_RULE_TOOLS or name == "WebFetch":
            kind = "shell" if name in SHELL_RULE_TOOLS else "web"
        self.permission_kind = kind  # type: ignore[misc]

    def is_read_only(self, input: Any) -> bool:
        return self.permission_kind == "read"

    def is_read_only_in(self, input: Any, cwd: str) -> bool:
        if self.name == "Bash":  # the analysis BashTool runs, so explain() agrees with a run
            command = input.get("command") if isinstance(input, dict) else None
            return isinstance(command, str) and analyze(command, cwd).read_only
        return self.is_read_only(input)

    def get_path(self, input: Any) -> str | None:
        data = input if isinstance(input, dict) else {}
        return next((data[k] for k in ("file_path", "notebook_path", "path") if isinstance(data.get(k), str)), None)
