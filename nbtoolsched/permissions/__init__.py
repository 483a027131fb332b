"""Permissions: who may run what, decided the way Claude Code decides it."""

from .approvals import APPROVAL_ENV, ApprovalAnswer, ApprovalBroker, ApprovalRequest, Approver, BrokerEvent, policy_from_env
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
from .classifier import Classifier, ClassifierRequest, ClassifierVerdict, DenialTracker, PatternClassifier
from .engine import Explanation, Permissions, default_splitter
from .errors import PermissionConfigError
from .hooks import DEFAULT_HOOK_TIMEOUT, CommandHook, HookBlock, HookMatcher, HookResult, Hooks, NoHooks, PythonHook
from .modes import MODES, Mode, check_mode
from .rules import PermissionRule, RuleSet, RuleValue, escape_rule_content, format_rule, make_rule, parse_rule, unescape_rule_content
from .settings import LoadedSettings, load_settings, settings_files

__all__ = [
    "APPROVAL_ENV",
    "AllowUnlessDenied",
    "ApprovalAnswer",
    "ApprovalBroker",
    "ApprovalDeferred",
    "ApprovalRequest",
    "Approver",
    "BrokerEvent",
    "Classifier",
    "ClassifierRequest",
    "ClassifierVerdict",
    "CommandHook",
    "DEFAULT_HOOK_TIMEOUT",
    "DenialTracker",
    "Explanation",
    "HookBlock",
    "HookEvent",
    "HookMatcher",
    "HookResult",
    "HookRunner",
    "Hooks",
    "LoadedSettings",
    "MODES",
    "Mode",
    "NoHooks",
    "PatternClassifier",
    "PermissionConfigError",
    "PermissionGate",
    "PermissionRequest",
    "PermissionRule",
    "Permissions",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
    "PythonHook",
    "RuleSet",
    "RuleValue",
    "check_mode",
    "default_splitter",
    "escape_rule_content",
    "format_rule",
    "load_settings",
    "make_rule",
    "parse_rule",
    "policy_from_env",
    "settings_files",
    "unescape_rule_content",
]
