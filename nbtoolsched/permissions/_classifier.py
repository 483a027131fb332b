"""Auto mode: a classifier settles what would otherwise be a prompt.

The protocol is one async method, so an LLM-backed classifier can be plugged in; the
default is a deterministic pattern list, good enough for tests and cautious scripts.
Denials are tracked: after 3 in a row, or 20 in all, auto mode goes back to asking a
person (a classifier that keeps refusing is probably wrong about the task).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Protocol, runtime_checkable

__all__ = [
    "ClassifierRequest",
    "ClassifierVerdict",
    "Classifier",
    "PatternClassifier",
    "DenialTracker",
    "DEFAULT_BLOCKED_PATTERNS",
]


@dataclass(frozen=True, slots=True)
class ClassifierRequest:
    tool_name: str
    input: dict[str, Any]
    cwd: str
    read_only: bool
    why_asked: str  # the message the call would have been asked with


@dataclass(frozen=True, slots=True)
class ClassifierVerdict:
    allow: bool
    reason: str


@runtime_checkable
class Classifier(Protocol):
    async def classify(self, request: ClassifierRequest) -> ClassifierVerdict: ...


DEFAULT_BLOCKED_PATTERNS: tuple[str, ...] = (
    r"\brm\s+(-[A-Za-z]*[rRf][A-Za-z]*\s+)+",  # recursive or forced removal
    r"\bsudo\b",
    r"\bgit\s+push\b.*(--force|-f\b)",
    r"\bgit\s+reset\s+--hard\b",
    r"\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b",  # piping a download into a shell
    r"\bmkfs(\.\w+)?\b",
    r"\bdd\s+if=",
    r"\bchmod\s+(-R\s+)?777\b",
    r":\(\)\s*\{",  # fork bomb
)


class PatternClassifier:
    """Deterministic: read-only calls pass; a call whose input text hits a blocked pattern is denied."""

    def __init__(self, blocked: Iterable[str] = DEFAULT_BLOCKED_PATTERNS, *, allow_unmatched: bool = True) -> None:
        self.blocked = [re.compile(p) for p in blocked]
        self.allow_unmatched = allow_unmatched

    async def classify(self, request: ClassifierRequest) -> ClassifierVerdict:
        if request.read_only:
            return ClassifierVerdict(True, "the call only reads")
        command = request.input.get("command")
        text = command if isinstance(command, str) else json.dumps(request.input, sort_keys=True, default=str)
        for pattern in self.blocked:
            if pattern.search(text):
                return ClassifierVerdict(False, f"the input matches the risky pattern {pattern.pattern!r}")
        if self.allow_unmatched:
            return ClassifierVerdict(True, "no risky pattern matched")
        return ClassifierVerdict(False, "only read-only calls are allowed by this classifier")


@dataclass
class DenialTracker:
    """Counts classifier denials; ``exhausted`` means: stop trusting it, ask a person."""

    max_consecutive: int = 3
    max_total: int = 20
    consecutive: int = 0
    total: int = 0

    def record_denial(self) -> None:
        self.consecutive += 1
        self.total += 1

    def record_allow(self) -> None:
        self.consecutive = 0

    @property
    def exhausted(self) -> bool:
        return self.consecutive >= self.max_consecutive or self.total >= self.max_total
