"""Cleaning a speculated transcript before it joins the real conversation.

Kept: text, and tool_use/tool_result pairs whose result succeeded. Dropped: thinking
blocks, calls that failed, were denied or interrupted (with their results), interrupt
placeholders, and messages left empty. Overlay paths in results are shown as the real
paths they stand for. When the run stopped at a boundary, trailing assistant messages
are cut so the conversation ends on a user message and a normal turn can continue.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..execution._texts import INTERRUPT_NOTE, INTERRUPT_NOTE_TOOLS
from .._messages import Message

__all__ = ["clean_transcript", "clean_with_sources", "cut_to_continuable", "as_message_dicts", "INTERRUPT_PLACEHOLDERS"]

# Ours, and Claude Code's (a transcript may come from a loop that uses its wording).
INTERRUPT_PLACEHOLDERS = frozenset(
    {
        INTERRUPT_NOTE,
        INTERRUPT_NOTE_TOOLS,
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
    }
)


def as_message_dicts(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Messages (dicts or ``Message`` models) as plain dicts with block dicts inside."""
    out = []
    for item in messages:
        message = item if isinstance(item, Message) else Message.model_validate(item)
        out.append(message.to_dict())
    return out


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _succeeded(block: dict[str, Any]) -> bool:
    return not block.get("is_error") and not any(p in _result_text(block) for p in INTERRUPT_PLACEHOLDERS)


def _is_placeholder(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and block.get("text", "").strip() in INTERRUPT_PLACEHOLDERS


def _keep(block: dict[str, Any], good: set[str]) -> bool:
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking") or _is_placeholder(block):
        return False
    if kind == "tool_use":
        return block.get("id") in good
    if kind == "tool_result":
        return block.get("tool_use_id") in good
    return True


def _blank(content: list[dict[str, Any]]) -> bool:
    return all(b.get("type") == "text" and not b.get("text", "").strip() for b in content)


def clean_transcript(messages: Iterable[Any], rewrite: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """The speculated messages as they may be injected into the real conversation."""
    return [message for message, _ in clean_with_sources(messages, rewrite)]


def clean_with_sources(
    messages: Iterable[Any], rewrite: Callable[[str], str] | None = None
) -> list[tuple[dict[str, Any], int]]:
    """Like ``clean_transcript``, each message paired with the last input index it came from."""
    items = as_message_dicts(messages)
    results = [b for m in items if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    failed = {b.get("tool_use_id") for b in results if not _succeeded(b)}
    good = {b.get("tool_use_id") for b in results} - failed
    out: list[tuple[dict[str, Any], int]] = []
    for index, message in enumerate(items):
        content = message["content"]
        if isinstance(content, str):
            blocks = [] if not content.strip() or content.strip() in INTERRUPT_PLACEHOLDERS else [{"type": "text", "text": content}]
        else:
            blocks = [_rewritten(b, rewrite) for b in content if _keep(b, good)]
        if not blocks or _blank(blocks):
            continue
        if out and out[-1][0]["role"] == message["role"]:
            out[-1][0]["content"].extend(blocks)  # keep roles alternating after a drop
            out[-1] = (out[-1][0], index)
        else:
            out.append(({"role": message["role"], "content": blocks}, index))
    return out


def _rewritten(block: dict[str, Any], rewrite: Callable[[str], str] | None) -> dict[str, Any]:
    if rewrite is None or block.get("type") != "tool_result":
        return block
    content = block.get("content")
    if isinstance(content, str):
        return {**block, "content": rewrite(content)}
    if isinstance(content, list):
        parts = [{**p, "text": rewrite(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p for p in content]
        return {**block, "content": parts}
    return block


def cut_to_continuable(messages: list[Any]) -> list[Any]:
    """Drop trailing assistant messages so the conversation ends on a user message.

    Works on messages or on ``(message, source)`` pairs from ``clean_with_sources``.
    """
    end = len(messages)
    while end and _role(messages[end - 1]) == "assistant":
        end -= 1
    return messages[:end]


def _role(item: Any) -> str:
    return item[0]["role"] if isinstance(item, tuple) else item["role"]


