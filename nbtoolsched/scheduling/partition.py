"""Partition: consecutive concurrency-safe calls share a batch; every other call is alone.

Order is never changed. ``[Grep, Read, Edit, Glob, Read]`` becomes
``[Grep, Read] [Edit] [Glob, Read]``: parallel, serial, parallel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..execution import PreparedCall, prepare_calls
from ..registry import ToolRegistry

__all__ = ["Batch", "partition_tool_calls", "partition_prepared"]


@dataclass(slots=True)
class Batch:
    number: int  # 1-based, for traces and pictures
    concurrency_safe: bool
    calls: list[PreparedCall]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.calls]

    def __repr__(self) -> str:
        kind = "parallel" if self.concurrency_safe else "serial"
        return f"Batch({self.number}, {kind}, {self.names})"


def partition_prepared(calls: Iterable[PreparedCall]) -> list[Batch]:
    batches: list[Batch] = []
    for call in calls:
        if call.safe and batches and batches[-1].concurrency_safe:
            batches[-1].calls.append(call)
        else:
            batches.append(Batch(len(batches) + 1, call.safe, [call]))
    return batches


def partition_tool_calls(blocks: Iterable[Any], registry: ToolRegistry) -> list[Batch]:
    """The batches a list of tool_use blocks (dicts or models) would run in."""
    return partition_prepared(prepare_calls(blocks, registry))
