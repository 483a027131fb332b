"""Is a conversation one the Messages API would accept? And how to mend a cut-off one.

The rules checked are the ones an agent loop can break: roles alternate starting with
the user; every ``tool_use`` is answered exactly once by a ``tool_result`` at the head
of the very next user message; no result answers a call that was never made (or made
twice); no message is empty.
"""

from __future__ import annotations

from .._errors import TranscriptError

from typing import Any, Iterable

from .._messages import Block, Message, MessageLike

__all__ = ["InvalidTranscript", "transcript_problems", "validate_transcript", "answer_dangling", "as_dict"]


class InvalidTranscript(TranscriptError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid transcript:\n" + "\n".join(f"- {p}" for p in problems))
        self.problems = problems


def as_dict(message: Any) -> dict[str, Any]:
    """A message (dict or ``Message``) as a dict whose blocks are dicts."""
    if isinstance(message, Message):
        return message.to_dict()
    if not isinstance(message, dict):
        raise TypeError(f"a message must be a dict or a Message, got {type(message).__name__}")
    content = message.get("content")
    if isinstance(content, list):
        content = [b.to_dict() if isinstance(b, Block) else b for b in content]
    return {**message, "content": content}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _ids(blocks: Iterable[dict[str, Any]], kind: str, key: str) -> list[Any]:
    return [b.get(key) for b in blocks if b.get("type") == kind]


def transcript_problems(messages: Iterable[MessageLike]) -> list[str]:
    """Every rule the transcript breaks, one sentence each (empty when it is valid)."""
    msgs = [as_dict(m) for m in messages]
    problems: list[str] = []
    seen_tool_uses: set[Any] = set()
    for i, msg in enumerate(msgs):
        role, content = msg.get("role"), msg.get("content")
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            problems.append(f"message {i} has role {role!r}; roles must alternate starting with 'user'")
        if not isinstance(content, (str, list)) or content in ("", []):
            problems.append(f"message {i} ({role}) has empty or missing content")
            continue
        blocks = _blocks(msg)
        uses = _ids(blocks, "tool_use", "id")
        results = _ids(blocks, "tool_result", "tool_use_id")
        if role == "user" and uses:
            problems.append(f"message {i} (user) contains tool_use blocks {uses}")
        if role == "assistant" and results:
            problems.append(f"message {i} (assistant) contains tool_result blocks {results}")
        for tool_use_id in uses:
            if tool_use_id in seen_tool_uses:
                problems.append(f"tool_use id {tool_use_id!r} is used more than once (again in message {i})")
            seen_tool_uses.add(tool_use_id)
        if role == "assistant" and uses:
            problems += _answer_problems(i, uses, msgs[i + 1] if i + 1 < len(msgs) else None)
        if role == "user" and results:
            before = msgs[i - 1] if i > 0 else None
            asked = set(_ids(_blocks(before), "tool_use", "id")) if before and before.get("role") == "assistant" else set()
            orphans = [r for r in results if r not in asked]
            if orphans:
                problems.append(f"message {i} answers tool_use ids {orphans} that the previous message did not call")
    return problems


def _answer_problems(i: int, uses: list[Any], reply: dict[str, Any] | None) -> list[str]:
    if reply is None or reply.get("role") != "user":
        return [f"tool_use ids {uses} in message {i} are never answered (no user message follows)"]
    blocks = _blocks(reply)
    results = _ids(blocks, "tool_result", "tool_use_id")
    problems = []
    missing = [u for u in uses if u not in results]
    if missing:
        problems.append(f"tool_use ids {missing} in message {i} have no tool_result in message {i + 1}")
    doubled = sorted({r for r in results if results.count(r) > 1}, key=str)
    if doubled:
        problems.append(f"tool_use ids {doubled} are answered more than once in message {i + 1}")
    kinds = [b.get("type") for b in blocks]
    if kinds[: len(results)] != ["tool_result"] * len(results):
        problems.append(f"message {i + 1} must start with its tool_result blocks, before any other content")
    return problems


def validate_transcript(messages: Iterable[MessageLike]) -> None:
    """Raise ``InvalidTranscript`` listing every problem, or return quietly."""
    problems = transcript_problems(messages)
    if problems:
        raise InvalidTranscript(problems)


def answer_dangling(messages: list[dict[str, Any]], text: str) -> int:
    """Give every unanswered tool_use an error result saying ``text``, in place.

    For a transcript cut short (a cancelled run): the missing results go at the head of
    the next user message, or a new one. Returns how many results were added.
    """
    added = 0
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
            uses = _ids(_blocks(msg), "tool_use", "id")
            reply = messages[i + 1] if i + 1 < len(messages) and messages[i + 1].get("role") == "user" else None
            answered = set(_ids(_blocks(reply), "tool_result", "tool_use_id")) if reply else set()
            missing = [{"type": "tool_result", "tool_use_id": u, "content": text, "is_error": True}
                       for u in uses if u not in answered]
            if missing:
                if reply is None:
                    messages.insert(i + 1, {"role": "user", "content": missing})
                else:
                    content = reply["content"]
                    content = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
                    reply["content"] = missing + content
                added += len(missing)
        i += 1
    return added
