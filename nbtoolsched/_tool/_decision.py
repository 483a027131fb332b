"""What a permission step answers: allow, deny, ask, or pass the question on.

It lives in the tool layer because a tool's own ``check_permissions`` returns one;
the permission system above builds on the same type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Decision", "DecisionReason", "Behavior"]

Behavior = Literal["allow", "deny", "ask", "passthrough"]


@dataclass(frozen=True, slots=True)
class DecisionReason:
    """Who decided: a rule, a mode, a hook, the tool's own check, a classifier, a person."""

    kind: Literal["rule", "mode", "hook", "tool", "safety_check", "sandbox", "classifier", "user", "policy", "default", "other"]
    detail: str = ""
    rule: str | None = None
    source: str | None = None

    def describe(self) -> str:
        parts: list[str] = [self.kind]
        if self.rule:
            parts.append(f"rule {self.rule!r}" + (f" from {self.source}" if self.source else ""))
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)


@dataclass(frozen=True, slots=True)
class Decision:
    behavior: Behavior
    message: str | None = None
    updated_input: dict[str, Any] | None = None
    reason: DecisionReason | None = None
    suggestions: tuple[str, ...] = ()
    # A person rejected the call without feedback: the whole turn stops.
    abort_turn: bool = False
    # Text a person typed when approving; it travels to the model with the result.
    feedback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def allow(cls, updated_input: dict[str, Any] | None = None, reason: DecisionReason | None = None) -> "Decision":
        return cls("allow", updated_input=updated_input, reason=reason)

    @classmethod
    def deny(cls, message: str, reason: DecisionReason | None = None, *, abort_turn: bool = False) -> "Decision":
        return cls("deny", message=message, reason=reason, abort_turn=abort_turn)

    @classmethod
    def ask(cls, message: str, reason: DecisionReason | None = None, suggestions: tuple[str, ...] = ()) -> "Decision":
        return cls("ask", message=message, reason=reason, suggestions=suggestions)

    @classmethod
    def passthrough(cls, message: str | None = None) -> "Decision":
        return cls("passthrough", message=message) if message is not None else PASSTHROUGH

    @property
    def allowed(self) -> bool:
        return self.behavior == "allow"


ALLOW = Decision("allow")
PASSTHROUGH = Decision("passthrough")
