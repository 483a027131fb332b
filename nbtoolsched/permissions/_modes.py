"""Permission modes: what each one changes, and checking a mode name at load time."""

from __future__ import annotations

from typing import Literal, get_args

from ._errors import PermissionConfigError

__all__ = ["Mode", "MODES", "MODE_TITLES", "ACCEPT_EDITS_COMMANDS", "AUTO_SAFE_TOOLS", "check_mode"]

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
MODES: tuple[str, ...] = get_args(Mode)
MODE_TITLES = {
    "default": "Default",
    "acceptEdits": "Accept edits",
    "plan": "Plan mode",
    "bypassPermissions": "Bypass permissions",
    "dontAsk": "Don't ask",
    "auto": "Auto",
}
# Shell commands acceptEdits lets through once their paths are inside the working dirs.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
# Tools auto mode allows without asking its classifier: they read, plan or coordinate.
AUTO_SAFE_TOOLS = frozenset(
    {"Read", "Grep", "Glob", "LSP", "ToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool", "TodoWrite",
     "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "TaskStop", "TaskOutput", "AskUserQuestion",
     "EnterPlanMode", "ExitPlanMode", "TeamCreate", "TeamDelete", "SendMessage", "Sleep"}
)


def check_mode(mode: object, *, source: str = "python") -> Mode:
    """The mode, or a PermissionConfigError (Claude Code quietly falls back to default)."""
    if mode not in MODES:
        raise PermissionConfigError(f"unknown permission mode; expected one of {', '.join(MODES)}", source=source, item=str(mode))
    return mode  # type: ignore[return-value]
