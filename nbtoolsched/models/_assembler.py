"""Turning a stream of events back into content blocks, one block as soon as it is done.

``StreamAssembler.feed(event)`` returns a ``FinishedBlock`` the moment that block's
``content_block_stop`` arrives, so the agent loop can hand a tool_use block to the
executor while later blocks are still streaming. A tool input whose concatenated
``partial_json`` is not a JSON object does not raise: the block comes out with an empty
input and ``input_error`` saying what was wrong, for the loop to answer as an error.
An ``error`` event raises ``ModelError``.

Text arrives in pieces and is joined once, when its block stops (joining as it comes
costs time quadratic in the number of deltas). A block larger than ``MAX_BLOCK_CHARS``
is refused as a ``bad_stream`` (a server streaming forever must not fill memory). Text
cut between the two halves of a UTF-16 surrogate pair (a proxy that splits strings by
code unit) is joined back; a lone half becomes U+FFFD, so nothing that cannot be written
as UTF-8 reaches the transcript or the next request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, AsyncIterable

from .._messages import Block, ToolUseBlock, parse_block
from ._protocol import ModelError, kind_for_error_type

__all__ = ["StreamAssembler", "FinishedBlock", "collect"]

_RAW_PREVIEW = 200
MAX_BLOCK_CHARS = 32 * 1024 * 1024  # one block's text or tool input; a Write of a 30 MB file still fits
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_TEXT_FIELDS = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking")}


@dataclass(slots=True)
class FinishedBlock:
    index: int
    block: Block
    input_error: str | None = None  # set when a tool input did not parse as a JSON object

    @property
    def is_tool_use(self) -> bool:
        return isinstance(self.block, ToolUseBlock)


@dataclass(slots=True)
class _Open:
    data: dict[str, Any]
    partial_json: list[str] = field(default_factory=list)
    pieces: dict[str, list[str]] = field(default_factory=dict)  # "text" / "thinking" -> the deltas so far
    size: int = 0


class StreamAssembler:
    """Feeds on events; knows the finished blocks, the stop reason and the usage."""

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.model: str | None = None
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.finished: dict[int, FinishedBlock] = {}
        self.events_seen = 0
        self.done = False  # message_stop arrived
        self._open: dict[int, _Open] = {}

    # -- feeding ------------------------------------------------------------------------
    def feed(self, event: object) -> FinishedBlock | None:
        """Take one event (a dict, as the API streams it; anything else is refused); return
        the block it finished, if any. Raises ``ModelError``."""
        if not isinstance(event, dict):
            raise self._bad(f"an event must be a dict, got {type(event).__name__}")
        self.events_seen += 1
        kind = event.get("type")
        if kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            return self._stop(event)
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "message_start":
            self._message_start(event)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise self._error(event)
        # "ping" and event types added to the API later are ignored on purpose.
        return None

    def _message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        self.message_id = message.get("id")
        self.model = message.get("model")
        self.usage.update(message.get("usage") or {})

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self.stop_reason = delta["stop_reason"]
        self.usage.update(event.get("usage") or {})

    def _start(self, event: dict[str, Any]) -> None:
        index = self._index(event)
        if index in self._open or index in self.finished:
            raise self._bad(f"content block {index} was started twice")
        block = event.get("content_block")
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise self._bad(f"content_block_start {index} has no content_block with a type")
        self._open[index] = _Open(dict(block))

    def _delta(self, event: dict[str, Any]) -> None:
        index = self._index(event)
        open_block = self._open.get(index)
        if open_block is None:
            raise self._bad(f"a delta arrived for content block {index}, which is not open")
        delta = event.get("delta") or {}
        data = open_block.data
        kind = delta.get("type")
        if kind in _TEXT_FIELDS:
            name, key = _TEXT_FIELDS[kind]
            self._grow(index, open_block, open_block.pieces.setdefault(name, [str(data.get(name, ""))]), str(delta.get(key, "")))
        elif kind == "input_json_delta":
            self._grow(index, open_block, open_block.partial_json, str(delta.get("partial_json", "")))
        elif kind == "signature_delta":
            data["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            data.setdefault("citations", []).append(delta.get("citation"))

    def _grow(self, index: int, open_block: _Open, pieces: list[str], piece: str) -> None:
        open_block.size += len(piece)
        if open_block.size > MAX_BLOCK_CHARS:
            raise self._bad(f"content block {index} grew past {MAX_BLOCK_CHARS:,} characters; the answer was refused")
        pieces.append(piece)

    def _stop(self, event: dict[str, Any]) -> FinishedBlock:
        index = self._index(event)
        open_block = self._open.pop(index, None)
        if open_block is None:
            raise self._bad(f"content_block_stop for block {index}, which is not open")
        data, input_error = open_block.data, None
        for name, pieces in open_block.pieces.items():
            data[name] = _whole("".join(pieces))
        if open_block.partial_json:
            data["input"], input_error = _parse_input(_whole("".join(open_block.partial_json)))
        try:
            block = parse_block(data)
        except ValueError as err:
            raise self._bad(f"content block {index} is not a valid block: {err}") from None
        finished = FinishedBlock(index, block, input_error)
        self.finished[index] = finished
        return finished

    # -- errors ---------------------------------------------------------------------------
    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise self._bad(f"{event.get('type')} has no integer index")
        return index

    def _bad(self, message: str) -> ModelError:
        return ModelError("bad_stream", message, events_before=self.events_seen)

    def _error(self, event: dict[str, Any]) -> ModelError:
        error = event.get("error") or {}
        error_type = error.get("type") if isinstance(error, dict) else None
        message = (error.get("message") if isinstance(error, dict) else None) or "the model sent an error event"
        started = self.message_id is not None or self.events_seen > 1
        kind = "stream_error" if started else kind_for_error_type(error_type)
        return ModelError(kind, message, error_type=error_type, events_before=self.events_seen - 1)

    # -- results ----------------------------------------------------------------------------
    def blocks(self) -> list[Block]:
        """The finished blocks in index order (an unfinished block is never included)."""
        return [self.finished[i].block for i in sorted(self.finished)]

    def content(self) -> list[dict[str, Any]]:
        return [block.to_dict() for block in self.blocks()]

    @property
    def unfinished(self) -> list[int]:
        return sorted(self._open)


def _whole(text: str) -> str:
    """Surrogate halves paired back into their character; a lone half becomes U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _whole_strings(value: Any) -> Any:
    if isinstance(value, str):
        return _whole(value)
    if isinstance(value, list):
        return [_whole_strings(v) for v in value]
    if isinstance(value, dict):
        return {_whole(k): _whole_strings(v) for k, v in value.items()}
    return value


def _parse_input(raw: str) -> tuple[dict[str, Any], str | None]:
    """The tool input as an object, or ``{}`` and a sentence saying why it is not one."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        return {}, f"the input was not valid JSON ({err.msg} at position {err.pos}): {_preview(raw)}"
    if not isinstance(value, dict):
        return {}, f"the input must be a JSON object, got {type(value).__name__}: {_preview(raw)}"
    if _ESCAPED_SURROGATE.search(raw):  # a "\ud83d" escape without its other half
        value = _whole_strings(value)
    return value, None


def _preview(raw: str) -> str:
    return repr(raw if len(raw) <= _RAW_PREVIEW else raw[:_RAW_PREVIEW] + "\u2026")


async def collect(events: AsyncIterable[dict[str, Any]]) -> StreamAssembler:
    """Read a whole stream; the assembler holds the answer (handy in tests and tutorials)."""
    assembler = StreamAssembler()
    async for event in events:
        assembler.feed(event)
    return assembler
