"""Deferred approvals: a run that stopped for answers nobody could give, and its resumption.

Under the headless ``defer`` policy a call that needs a person is not run; the run stops
after that batch (later batches might depend on it). ``RunState`` holds what is needed
to go on later, as plain JSON-able data: every block, the results already made (never
re-run), the pending approval requests, and which calls are still to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..execution._pipeline import CallOutcome
from ..execution._prepare import PreparedCall
from .._messages import ToolResultBlock, block_to_dict, parse_block
from ..permissions._approvals import ApprovalAnswer, ApprovalRequest

__all__ = ["RunState", "saved_answers"]

RunStateDict = dict[str, Any]


@dataclass(slots=True)
class RunState:
    blocks: list[dict[str, Any]]
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool_use_id -> finished tool_result
    pending: list[dict[str, Any]] = field(default_factory=list)  # ApprovalRequest.to_dict() of deferred calls
    remaining: list[str] = field(default_factory=list)  # ids still to run, in block order

    @classmethod
    def capture(cls, blocks: Sequence[Any], calls: Sequence[PreparedCall], outcomes: Sequence[CallOutcome]) -> "RunState | None":
        """The state of a run that deferred something, or None when nothing was deferred."""
        if not any(o.status == "deferred" for o in outcomes):
            return None
        state = cls([block_to_dict(b) for b in blocks])
        for call, outcome in zip(calls, outcomes):
            if outcome.status == "deferred":
                state.remaining.append(call.tool_use_id)
                if isinstance(outcome.deferred, ApprovalRequest):
                    state.pending.append(outcome.deferred.to_dict())
            else:
                state.results[call.tool_use_id] = outcome.result.to_dict()
        return state

    def to_dict(self) -> RunStateDict:
        return {"blocks": self.blocks, "results": self.results, "pending": self.pending, "remaining": self.remaining}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RunState":
        missing = [key for key in ("blocks", "results", "pending", "remaining") if key not in data]
        if missing:
            raise ValueError(f"not a saved run state: missing {', '.join(missing)}")
        return cls(list(data["blocks"]), dict(data["results"]), list(data["pending"]), list(data["remaining"]))

    def blocks_to_run(self) -> list[dict[str, Any]]:
        todo = set(self.remaining)
        return [b for b in self.blocks if isinstance(b, dict) and b.get("id") in todo]

    def finished_result(self, tool_use_id: str) -> ToolResultBlock:
        block = parse_block(self.results[tool_use_id])
        assert isinstance(block, ToolResultBlock)
        return block


def saved_answers(answers: Mapping[str, ApprovalAnswer | Mapping[str, Any]]) -> dict[str, ApprovalAnswer]:
    """A resumed run's answers by tool_use_id, each an ``ApprovalAnswer`` (dict forms read).
    The run's approver wrapper gives them before its approver is asked."""
    return {key: a if isinstance(a, ApprovalAnswer) else ApprovalAnswer.from_dict(a) for key, a in answers.items()}
