"""Partition: consecutive concurrency-safe calls share a batch; every other call is alone.

Order is never changed. ``[Grep, Read, Edit, Glob, Read]`` becomes
``[Grep, Read] [Edit] [Glob, Read]``: parallel, serial, parallel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..execution._prepare import PreparedCall, prepare_calls
from .._messages import Block, ToolUseLike
from .._registry import ToolRegistry

__all__ = ["Batch", "block_list", "partition_tool_calls", "partition_prepared", "type_name"]

EXPECTED_BLOCKS = "blocks must be a list of tool_use blocks (dicts or ToolUseBlock)"


def block_list(blocks: Any, caller: str) -> list[Any]:
    """``blocks`` as a list; a TypeError naming ``caller`` and what it got for anything else.

    A single block (a dict or a model) is refused rather than iterated: its keys or
    fields would each become a bogus call. A bad item inside the list is not refused
    here: it gets its own error result, like any malformed block from a model.
    """
    if isinstance(blocks, (Mapping, Block)):
        raise TypeError(f"{caller}: {EXPECTED_BLOCKS}, got a single {type(blocks).__name__}; wrap it in a list: [block]")
    if isinstance(blocks, (str, bytes, bytearray)) or not isinstance(blocks, Iterable):
        raise TypeError(f"{caller}: {EXPECTED_BLOCKS}, got {type_name(blocks)}")
    return list(blocks)


def type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


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


def partition_tool_calls(blocks: Iterable[ToolUseLike], registry: ToolRegistry) -> list[Batch]:
    """The batches a list of tool_use blocks (dicts or models) would run in."""
    return partition_prepared(prepare_calls(block_list(blocks, "partition_tool_calls()"), registry))
