"""Builders for Anthropic streaming events, as plain dicts.

The shapes follow the Messages streaming API: ``message_start``, then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``)
/ ``content_block_stop``, then ``message_delta`` (stop reason) and ``message_stop``.
``error`` events may arrive at any point. ScriptedModel, tests and tutorials build
streams from these so every stream in the project has one spelling.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "message_start",
    "block_start",
    "text_delta",
    "input_json_delta",
    "block_stop",
    "message_delta",
    "message_stop",
    "error_event",
    "split_text",
    "block_events",
]


def message_start(message_id: str, model: str = "scripted", input_tokens: int = 0) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 0},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    """``content_block_start`` with the block's empty shell (text "" / input {})."""
    if block.get("type") == "text":
        shell: dict[str, Any] = {"type": "text", "text": ""}
    elif block.get("type") == "tool_use":
        shell = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
    else:
        shell = dict(block)
    return {"type": "content_block_start", "index": index, "content_block": shell}


def text_delta(index: int, text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}


def input_json_delta(index: int, partial_json: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial_json}}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, output_tokens: int = 0) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens}}


def message_stop() -> dict[str, Any]:
    return {"type": "message_stop"}


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def split_text(text: str, pieces: int) -> list[str]:
    """``text`` cut into ``pieces`` nearly equal, non-empty parts (fewer if it is short)."""
    pieces = max(1, min(pieces, len(text)))
    if not text:
        return [""]
    size, extra = divmod(len(text), pieces)
    parts, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


def block_events(index: int, block: dict[str, Any], deltas: int = 1) -> list[dict[str, Any]]:
    """Start, deltas and stop for one finished block (text or tool_use).

    A tool_use block's input is sent as JSON split into ``deltas`` pieces; a block may
    carry ``raw_json`` instead of ``input`` to stream exactly that text (say, broken JSON).
    """
    events = [block_start(index, block)]
    if block.get("type") == "text":
        events += [text_delta(index, part) for part in split_text(block.get("text", ""), deltas)]
    elif block.get("type") == "tool_use":
        raw = block["raw_json"] if "raw_json" in block else json.dumps(block.get("input", {}))
        events += [input_json_delta(index, part) for part in split_text(raw, deltas)]
    events.append(block_stop(index))
    return events
