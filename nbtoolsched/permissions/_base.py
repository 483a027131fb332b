"""The contracts between the call pipeline and the permission system.

The pipeline (execution layer) asks two things of the layer here: what the PreToolUse /
PostToolUse hooks say about a call, and whether the call may run. Both are protocols,
so a test, a notebook or another agent can plug in its own; ``AllowUnlessDenied`` and
``NoHooks`` are the simplest useful answers. A hook runner may also answer
``permission_request`` and ``permission_denied`` (Claude Code's PermissionRequest and
PermissionDenied events); the gate calls them when present.

A hook that misbehaves without blocking (its program is missing, it exits 1, times
out or prints an invalid answer) is reported as a ``HookNotice``: the call goes on, as
in Claude Code, and the notice travels with the call's outcome for the person to see.
"""

from __future__ import annotations

from .._errors import NbtoolschedError

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._tool._decision import PASSTHROUGH, Decision, DecisionReason
from .._tool._base import Tool, overrides
from .._tool._context import ToolContext

if TYPE_CHECKING:  # _approvals imports this module (ApprovalDeferred): the type only, for checkers
    from ._approvals import ApprovalRequest, Approver

__all__ = [
    "HookEvent",
    "HookNotice",
    "HookRunner",
    "PermissionGate",
    "PermissionRequest",
    "PermissionRequestOutcome",
    "PermissionDeniedOutcome",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
    "AllowUnlessDenied",
    "ApprovalDeferred",
]


@dataclass(slots=True)
class PermissionRequest:
    """One call awaiting a permission decision."""

    tool: Tool
    input: dict[str, Any]  # the observable (backfilled) input, possibly updated by hooks
    parsed: Any  # the validated input model instance
    ctx: ToolContext
    tool_use_id: str
    hook_decision: Decision | None = None  # the PreToolUse hooks' combined decision
    # This run's approver, resolved once when the run started and wrapped once (so the
    # run can show "awaiting approval"); a gate that needs to ask a person uses it.
    approver: "Approver | None" = None
    mode: str | None = None  # this run's permission mode, when it overrides the gate's
    # The pipeline's hook runner: the gate fires PermissionRequest / PermissionDenied
    # hooks through it, and leaves their non-blocking problems in ``notices``.
    hooks: Any = None
    notices: list["HookNotice"] = field(default_factory=list)


@runtime_checkable
class PermissionGate(Protocol):
    """Decides a call; the answer is final: ``allow`` (maybe with updated input) or ``deny``.

    Asking a person happens inside ``decide``; a rejection without feedback comes back
    as a deny with ``abort_turn=True``.
    """

    async def decide(self, request: PermissionRequest) -> Decision: ...

    def hides(self, tool: Tool) -> bool:
        """True for a blanket-denied tool: the model must never be offered it."""
        ...


@dataclass(slots=True)
class HookEvent:
    """What a hook learns about a call (mirrors Claude Code's hook stdin)."""

    event: str  # PreToolUse | PostToolUse | PostToolUseFailure | PermissionRequest | PermissionDenied
    tool: Tool
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    ctx: ToolContext
    tool_response: Any = None
    error: str | None = None
    is_interrupt: bool = False
    permission_suggestions: list[dict[str, Any]] | None = None  # PermissionRequest
    reason: str | None = None  # PermissionDenied: why the call was denied


@dataclass(frozen=True, slots=True)
class HookNotice:
    """A hook problem or message for the person (never sent to the model).

    ``kind``: missing_program, not_executable, exit_status, timeout, invalid_output,
    start_failed, exception, unsupported, or system_message (a hook's ``systemMessage``).
    ``blocked`` is True when strict hooks turned the problem into a block."""

    event: str
    hook: str
    kind: str
    message: str
    source: str | None = None  # the settings file the hook came from
    blocked: bool = False

    def __str__(self) -> str:
        origin = f" (from {self.source})" if self.source else ""
        return f"{self.event} hook {self.hook!r}{origin}: {self.message}"


@dataclass(slots=True)
class PreToolUseOutcome:
    decision: Decision | None = None  # combined deny > ask > allow
    updated_input: dict[str, Any] | None = None  # an input change without a decision
    updated_by: str | None = None  # the hook that made that change, for error messages
    additional_context: list[str] = field(default_factory=list)
    prevent_continuation: bool = False
    stop_reason: str | None = None
    stop: str | None = None  # a hook failed under strict hooks: the call must not run
    notices: list[HookNotice] = field(default_factory=list)  # non-blocking hook problems, for the user


@dataclass(slots=True)
class PostToolUseOutcome:
    additional_context: list[str] = field(default_factory=list)
    blocking_error: str | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None  # MCP tools only: replaces the tool's output
    notices: list[HookNotice] = field(default_factory=list)  # non-blocking hook problems, for the user


@dataclass(slots=True)
class PermissionRequestOutcome:
    """What PermissionRequest hooks answered for a call about to be put to a person."""

    decision: Decision | None = None  # allow or deny answers the request; None: ask the person
    updated_permissions: list[dict[str, Any]] = field(default_factory=list)
    notices: list[HookNotice] = field(default_factory=list)


@dataclass(slots=True)
class PermissionDeniedOutcome:
    retry: bool = False  # a hook says the call is now approved and may be retried
    notices: list[HookNotice] = field(default_factory=list)


@runtime_checkable
class HookRunner(Protocol):
    async def pre_tool_use(self, event: HookEvent) -> PreToolUseOutcome: ...

    async def post_tool_use(self, event: HookEvent) -> PostToolUseOutcome: ...

    async def post_tool_use_failure(self, event: HookEvent) -> PostToolUseOutcome: ...


class ApprovalDeferred(NbtoolschedError):
    """Raised by a gate under the headless ``defer`` policy: nobody can answer now.

    The scheduler records the call as pending (serialisable) instead of running it, and
    a later ``resume`` with the answers runs only those calls.
    """

    def __init__(self, request: ApprovalRequest, message: str = "approval deferred") -> None:
        super().__init__(message)
        self.request = request


_DEFAULT_REASON = DecisionReason("default", "no permission system configured")
_ALLOWED = Decision.allow(None, _DEFAULT_REASON)


class AllowUnlessDenied:
    """The simplest gate: a hook's or the tool's own deny stands, anything else runs."""

    async def decide(self, request: PermissionRequest) -> Decision:
        hook = request.hook_decision
        if hook is not None and hook.behavior == "deny":
            return hook
        tool = request.tool
        own = await tool.check_permissions(request.parsed, request.ctx) if overrides(tool, "check_permissions") else PASSTHROUGH
        if own.behavior == "deny":
            return own
        updated = (hook.updated_input if hook is not None else None) or own.updated_input
        return _ALLOWED if updated is None else Decision.allow(updated, _DEFAULT_REASON)

    def hides(self, tool: Tool) -> bool:
        return False
