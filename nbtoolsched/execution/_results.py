"""From a tool's output to the tool_result the model reads.

Large outputs are written to disk in full and the model gets a preview and the path;
empty outputs get an explicit marker (some models stop when a prompt ends empty).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .._files import atomic_write
from .._messages import TextBlock, ToolResultBlock
from .._tool._base import DEFAULT_MAX_RESULT_SIZE_CHARS
from ._texts import empty_output

__all__ = ["finish_content", "persist_large_result", "format_exception", "format_size", "preview"]

PREVIEW_CHARS = 2000
SHORT = 2000  # text at most this long is never persisted (every threshold is larger)
MAX_ERROR_CHARS = 10_000


def format_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}".removesuffix(".0")
            return f"{text}{unit}"
    raise AssertionError("unreachable")


def preview(text: str, limit: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """The head of ``text``, cut at a line break when one falls in the second half."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    cut = head.rfind("\n")
    return (head[:cut] if cut > limit // 2 else head), True


def _is_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return all(isinstance(b, TextBlock) and not b.text.strip() for b in content)
    return False


def _size(content: str | list[Any]) -> int | None:
    """Characters of text, or None when the content holds something that is not text."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if not isinstance(block, TextBlock):
            return None
        total += len(block.text)
    return total


def threshold_for(declared: float) -> float:
    return declared if not math.isfinite(declared) else min(declared, DEFAULT_MAX_RESULT_SIZE_CHARS)


def finish_content(
    tool_name: str, tool_use_id: str, content: Any, max_chars: float, session_dir: Path
) -> str | list[Any]:
    """Empty marker, or the content itself, or a persisted-output preview."""
    if type(content) is str and len(content) <= SHORT and content and not content.isspace():
        return content  # the common case, decided without a second look
    if _is_empty(content):
        return empty_output(tool_name)
    limit = threshold_for(max_chars)
    if math.isinf(limit):
        return content
    size = _size(content)
    if size is None or size <= limit:
        return content
    return persist_large_result(tool_use_id, content, size, session_dir) or content


def persist_large_result(tool_use_id: str, content: str | list[Any], size: int, session_dir: Path) -> str | None:
    """Write the full output atomically; return the preview text, or None if it could not be written."""
    folder = session_dir / "tool-results"
    if isinstance(content, str):
        path, payload, text = folder / f"{_safe_name(tool_use_id)}.txt", content, content
    else:
        blocks = [b.to_dict() for b in content]
        path, payload = folder / f"{_safe_name(tool_use_id)}.json", json.dumps(blocks, indent=2, ensure_ascii=False)
        text = "\n".join(b.text for b in content)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            atomic_write(str(path), payload.encode("utf-8"))
    except OSError:
        return None
    head, more = preview(text)
    return (
        "<persisted-output>\n"
        f"Output too large ({format_size(size)}). Full output saved to: {path}\n\n"
        f"Preview (first {format_size(PREVIEW_CHARS)}):\n{head}" + ("\n...\n" if more else "\n") + "</persisted-output>"
    )


def _safe_name(tool_use_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in tool_use_id) or "result"


def format_exception(err: BaseException) -> str:
    """An exception from ``call`` as text: message, then any stderr and stdout it carries."""
    parts: list[str] = []
    exit_code = getattr(err, "exit_code", None)
    if exit_code is not None:
        parts.append(f"Exit code {exit_code}")
    message = str(err)
    if message:
        parts.append(message)
    for attr in ("stderr", "stdout"):
        value = getattr(err, attr, None)
        if isinstance(value, str) and value.strip():
            parts.append(value.rstrip())
    text = "\n".join(p for p in parts if p.strip()) or f"{type(err).__name__} with no message"
    if len(text) > MAX_ERROR_CHARS:
        half = MAX_ERROR_CHARS // 2
        text = f"{text[:half]}\n\n... [{len(text) - MAX_ERROR_CHARS} characters cut] ...\n\n{text[-half:]}"
    return text


def error_result(tool_use_id: str, text: str) -> ToolResultBlock:
    return ToolResultBlock.make(tool_use_id, text, is_error=True)
