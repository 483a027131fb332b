"""Permissions: who may run what, decided the way Claude Code decides it."""

from .base import (
    AllowUnlessDenied,
    ApprovalDeferred,
    HookEvent,
    HookRunner,
    PermissionGate,
    PermissionRequest,
    PostToolUseOutcome,
    PreToolUseOutcome,
)

__all__ = [
    "AllowUnlessDenied",
    "ApprovalDeferred",
    "HookEvent",
    "HookRunner",
    "PermissionGate",
    "PermissionRequest",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
]
