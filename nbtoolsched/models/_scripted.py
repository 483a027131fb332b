"""ScriptedModel: a model whose answers are written down in advance.

Each call to ``stream`` plays the next turn of the script as real streaming events,
with optional delays before each block and each delta, so tests and tutorials can show
tools starting while the "model" is still talking. Ids are deterministic
(``toolu_<turn>_<block>``, ``msg_scripted_<turn>``), so two runs of one script produce
the same transcript.

A script is a list of turns, or a function ``f(messages) -> turn | None`` that answers
the conversation so far. A turn is a ``Turn``, a list of blocks, or a string (one text
block); a block is a dict, a content block model, or a string (a text block).

When the script has no turn left (or the function returns ``None``) the model answers
with one text block, ``(script finished)``, and no tool calls, so an agent loop ends
cleanly. Pass ``strict=True`` to get ``ModelError(kind="script")`` instead.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Sequence, Union, cast

from .._messages import Block, BlockLike
from . import _stream_events as ev
from ._protocol import ModelError

__all__ = ["ScriptedModel", "Turn", "text", "tool_use", "SCRIPT_FINISHED"]

SCRIPT_FINISHED = "(script finished)"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any] | None = None, *, id: str | None = None, **fields: object) -> dict[str, Any]:
    """A tool_use block; the input as a dict or as keyword arguments."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input or {}, **fields)}
    if id is not None:
        block["id"] = id
    return block


@dataclass
class Turn:
    """One scripted answer and how to stream it."""

    blocks: Sequence[str | BlockLike] = ()  # a string is a text block
    delay_before_block: float = 0.0  # seconds before each content_block_start
    delay_per_delta: float = 0.0  # seconds before each delta
    input_deltas: int = 4  # how many input_json_delta pieces a tool input is split into
    text_deltas: int = 1  # how many text_delta pieces a text block is split into
    stop_reason: str | None = None  # default: "tool_use" if the turn calls a tool, else "end_turn"
    fail_after: int | None = None  # raise ModelError(kind="stream_error") after this many events
    error_event_after: int | None = None  # or send an ``error`` event after this many events

    def __post_init__(self) -> None:
        self.blocks = [_as_block_dict(b) for b in self.blocks]
        for name in ("delay_before_block", "delay_per_delta"):
            if getattr(self, name) < 0:
                raise ValueError(f"Turn.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("input_deltas", "text_deltas"):
            if getattr(self, name) < 1:
                raise ValueError(f"Turn.{name} must be >= 1, got {getattr(self, name)}")


TurnLike = Union[Turn, Sequence[Union[str, BlockLike]], str]
Script = Union[Iterable[TurnLike], Callable[[list[dict[str, Any]]], "TurnLike | None"]]


@dataclass
class ScriptedCall:
    """What the model was asked (kept so tests can check what it saw)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    system: str | None


@dataclass
class ScriptedModel:
    script: Script = field(default_factory=list)
    strict: bool = False
    name: str = "scripted"

    def __post_init__(self) -> None:
        if callable(self.script):
            self._answer: Callable[[list[dict[str, Any]]], TurnLike | None] = self.script
        else:
            turns = [as_turn(t) for t in self.script]  # check the whole script up front
            queue = iter(turns)
            self._answer = lambda messages: next(queue, None)
        self.calls: list[ScriptedCall] = []
        self._turns = itertools.count(1)

    @property
    def turns_played(self) -> int:
        return len(self.calls)

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        system: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        snapshot = copy.deepcopy(list(messages))
        self.calls.append(ScriptedCall(snapshot, list(tools or []), system))
        number = next(self._turns)
        answer = self._answer(snapshot)
        if answer is None:
            if self.strict:
                raise ModelError("script", f"the script has no turn {number}: it has {number - 1} turn(s)")
            answer = Turn([text(SCRIPT_FINISHED)])
        turn = as_turn(answer)
        count = 0
        async for event in self._play(turn, number):
            if turn.fail_after is not None and count >= turn.fail_after:
                raise ModelError("stream_error", f"scripted failure after {count} events", events_before=count)
            if turn.error_event_after is not None and count >= turn.error_event_after:
                yield ev.error_event("overloaded_error", f"scripted error event after {count} events")
                return
            count += 1
            yield event

    async def _play(self, turn: Turn, number: int) -> AsyncIterator[dict[str, Any]]:
        yield ev.message_start(f"msg_scripted_{number:03d}", self.name)
        has_tool = False
        for index, given in enumerate(turn.blocks):
            block = cast("dict[str, Any]", given)  # __post_init__ made every block a dict
            if block.get("type") == "tool_use":
                has_tool = True
                block = {**block, "id": block.get("id") or f"toolu_{number:03d}_{index:02d}"}
            await _sleep(turn.delay_before_block)
            deltas = turn.input_deltas if block.get("type") == "tool_use" else turn.text_deltas
            for event in ev.block_events(index, block, deltas):
                if event["type"] == "content_block_delta":
                    await _sleep(turn.delay_per_delta)
                yield event
        yield ev.message_delta(turn.stop_reason or ("tool_use" if has_tool else "end_turn"))
        yield ev.message_stop()


def as_turn(value: Any) -> Turn:
    """A Turn from any of the accepted spellings; a clear error for anything else."""
    if isinstance(value, Turn):
        return value
    if isinstance(value, (str, dict, Block)):
        return Turn([value])
    if isinstance(value, Sequence):
        return Turn(list(value))
    raise TypeError(f"a scripted turn must be a Turn, a list of blocks or a string, got {type(value).__name__}")


def _as_block_dict(block: Any) -> dict[str, Any]:
    if isinstance(block, str):
        return text(block)
    if isinstance(block, Block):
        return block.to_dict()
    if not isinstance(block, dict):
        raise TypeError(f"a scripted block must be a dict, a block or a string, got {type(block).__name__}")
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ValueError("a scripted text block needs a string 'text'")
    elif kind == "tool_use":
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise ValueError("a scripted tool_use block needs a non-empty string 'name'")
        if "raw_json" not in block and not isinstance(block.get("input", {}), dict):
            raise ValueError(f"the input of scripted tool_use {block['name']!r} must be a dict")
    else:
        raise ValueError(f"a scripted block must be of type 'text' or 'tool_use', got {kind!r}")
    return dict(block)


async def _sleep(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)
