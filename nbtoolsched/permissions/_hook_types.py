"""What a hook is: the event names, a command or Python hook, the matcher that selects a
group of hooks for a tool, and what one hook said about one event."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Literal, Union

from ._errors import PermissionConfigError
from ._rules import PermissionRule

__all__ = [
    "CLAUDE_CODE_HOOK_EVENTS",
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "OTHER_CLAUDE_EVENTS",
    "CommandHook",
    "Hook",
    "HookBlock",
    "HookFunction",
    "HookMatcher",
    "HookResult",
    "PythonHook",
    "matcher_problem",
]

DEFAULT_HOOK_TIMEOUT = 600.0  # seconds, as in Claude Code
# The events a tool scheduler fires.
HOOK_EVENTS: tuple[str, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied")
# Every event name Claude Code 2.1 accepts in a settings file.
CLAUDE_CODE_HOOK_EVENTS: frozenset[str] = frozenset(
    {*HOOK_EVENTS, "Notification", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "StopFailure",
     "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "Setup", "TeammateIdle", "TaskCreated",
     "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
     "InstructionsLoaded", "CwdChanged", "FileChanged"}
)
OTHER_CLAUDE_EVENTS = CLAUDE_CODE_HOOK_EVENTS - set(HOOK_EVENTS)


class HookBlock(Exception):
    """Raise from a Python hook to block the call (like exit code 2); the text goes to the model."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None
    source: str | None = None  # the settings file it came from
    condition: PermissionRule | None = None  # Claude Code's "if": a rule the call must match

    @property
    def label(self) -> str:
        return self.name or self.command


# A Python hook: Claude Code's hook input as a dict in; its JSON answer (a dict, None for
# no opinion), or an awaitable of one, out. The answer is checked as a command's would be.
HookFunction = Callable[[dict[str, Any]], object]


@dataclass(frozen=True, slots=True)
class PythonHook:
    fn: HookFunction
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None
    source: str | None = None
    condition: PermissionRule | None = None

    @property
    def label(self) -> str:
        return self.name or str(getattr(self.fn, "__qualname__", None) or repr(self.fn))


Hook = Union[CommandHook, PythonHook]


@dataclass(frozen=True)
class HookMatcher:
    """Which tools a group of hooks fires for, read as Claude Code reads it.

    ``*`` or empty: every tool. Only letters, digits, ``_`` and ``|``: an exact name or a
    ``|``-list. Anything else is a regex *searched* in the tool name (not anchored), so
    ``(Edit|Write)`` also fires for ``NotebookEdit``."""

    matcher: str
    hooks: tuple[Hook, ...]

    def __post_init__(self) -> None:
        problem = matcher_problem(self.matcher)
        if problem:
            raise PermissionConfigError(problem, item=self.matcher)

    def matches(self, tool_name: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        if _is_simple(self.matcher):
            return tool_name in self.matcher.split("|")
        return re.search(self.matcher, tool_name) is not None


def _is_simple(matcher: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_|]*", matcher) is not None


def matcher_problem(matcher: str) -> str | None:
    """Why a matcher can never match (not a valid regex), or None."""
    if matcher in ("", "*") or _is_simple(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as err:
        return f"the hook matcher is not a valid regex ({err})"
    return None


@dataclass
class HookResult:
    """What one hook said about one event."""

    hook: Hook
    blocking_error: str | None = None  # exit 2, decision "block", or HookBlock
    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None
    permission_request: dict[str, Any] | None = None  # PermissionRequest: hookSpecificOutput.decision
    retry: bool = False  # PermissionDenied
    system_message: str | None = None
    error: str | None = None  # a non-blocking error (blocks only under strict hooks)
    error_kind: str | None = None

    @property
    def label(self) -> str:
        return self.hook.label
