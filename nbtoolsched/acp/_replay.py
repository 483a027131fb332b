"""A loaded conversation told to the client again, as ``session/load`` requires.

The user's words as user message chunks, the model's as agent message chunks (its
thinking as thought chunks), and each tool call once, already in its final state: the
status, content and title it ended with, its result found by ``tool_use_id``.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from acp.helpers import (
    SessionUpdate,
    image_block,
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message,
    update_user_message_text,
)
from acp.schema import ToolCallStatus

from ._toolcalls import kind_of, locations_of, result_content, title_of
from ._updates import final_status

__all__ = ["history_updates"]


def history_updates(messages: Sequence[Mapping[str, Any]], cwd: str) -> Iterator[SessionUpdate]:
    results = {block["tool_use_id"]: block for message in messages if message.get("role") == "user"
               for block in _blocks(message) if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str)}
    for message in messages:
        user = message.get("role") == "user"
        for block in _blocks(message):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
                yield update_user_message_text(block["text"]) if user else update_agent_message_text(block["text"])
            elif kind == "image" and user:
                source = block.get("source")
                if isinstance(source, Mapping) and source.get("type") == "base64" and isinstance(source.get("data"), str):
                    yield update_user_message(image_block(source["data"], str(source.get("media_type", "image/png"))))
            elif kind == "thinking" and not user and isinstance(block.get("thinking"), str) and block["thinking"]:
                yield update_agent_thought_text(block["thinking"])
            elif kind == "tool_use" and not user and isinstance(block.get("id"), str):
                yield _finished_call(block, results.get(block["id"]), cwd)


def _finished_call(use: Mapping[str, Any], result: Mapping[str, Any] | None, cwd: str) -> SessionUpdate:
    name = str(use.get("name", ""))
    input = use.get("input") if isinstance(use.get("input"), dict) else {}
    status: ToolCallStatus = "failed" if result is None else final_status("completed", bool(result.get("is_error")))
    content = result_content(name, result.get("content", "")) if result is not None else []
    return start_tool_call(str(use["id"]), title_of(name, input, cwd), kind=kind_of(name), status=status,
                           content=content, locations=locations_of(name, input, cwd), raw_input=input)


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or () if isinstance(block, Mapping)]
