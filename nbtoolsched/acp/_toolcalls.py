"""How one tool call looks to an ACP client: its title, kind, locations and content.

Pure presentation, shared by the live run (``_updates``), the permission request
(``_permission``) and the replay of a loaded transcript (``_replay``). Tool names are
Claude Code's, so a transcript written by Claude Code itself (TodoWrite, MultiEdit,
WebSearch...) reads as well as one of ours.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from acp.helpers import image_block, text_block, tool_content, tool_diff_content
from acp.schema import ContentToolCallContent, FileEditToolCallContent, ToolCallLocation, ToolKind

from .._messages import block_to_dict
from ..tools.files._paths import display

__all__ = ["EDIT_TOOLS", "kind_of", "title_of", "locations_of", "result_content", "result_text", "fenced", "diff_content"]

EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})
_KINDS: dict[str, ToolKind] = {
    "Read": "read", "NotebookRead": "read",
    "Edit": "edit", "MultiEdit": "edit", "Write": "edit", "NotebookEdit": "edit",
    "Bash": "execute", "BashOutput": "execute", "KillShell": "execute", "KillBash": "execute",
    "Glob": "search", "Grep": "search", "LS": "search", "ToolSearch": "search",
    "WebFetch": "fetch", "WebSearch": "fetch",
    "TodoWrite": "think", "Task": "think",
    "ExitPlanMode": "switch_mode",
}
_PATH_KEYS = ("file_path", "notebook_path")
_TITLE_CHARS = 200

Content = ContentToolCallContent | FileEditToolCallContent


def kind_of(tool_name: str) -> ToolKind:
    """The ACP kind a client picks an icon by; "other" for tools it has no word for (MCP tools)."""
    return _KINDS.get(tool_name, "other")


def title_of(tool_name: str, input: Mapping[str, Any] | None, cwd: str) -> str:
    """A short human title: ``Read src/app.py``, `` `git status` ``, ``Search `TODO` in src``."""
    data = input if isinstance(input, Mapping) else {}
    path = _path(data, cwd)
    shown = display(path, cwd) if path else None
    if tool_name == "Read" and shown:
        offset, limit = data.get("offset"), data.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"Read {shown} (lines {offset}-{offset + limit - 1})"
        return f"Read {shown}" + (f" (from line {offset})" if isinstance(offset, int) else "")
    if tool_name in ("Edit", "MultiEdit", "Write") and shown:
        return f"{tool_name} {shown}"
    if tool_name == "NotebookEdit" and shown:
        return f"Edit notebook {shown}"
    if tool_name == "Bash" and isinstance(data.get("command"), str):
        return _cut(f"`{' '.join(data['command'].split())}`")
    if tool_name in ("Glob", "Grep") and isinstance(data.get("pattern"), str):
        where = data.get("path")
        verb = "Find" if tool_name == "Glob" else "Search"
        suffix = f" in {display(_absolute(where, cwd), cwd)}" if isinstance(where, str) and where else ""
        return _cut(f"{verb} `{data['pattern']}`{suffix}")
    if tool_name == "WebFetch" and isinstance(data.get("url"), str):
        return _cut(f"Fetch {data['url']}")
    if tool_name == "ToolSearch" and isinstance(data.get("query"), str):
        return _cut(f"Find tools: {data['query']}")
    return tool_name


def locations_of(tool_name: str, input: Mapping[str, Any] | None, cwd: str) -> list[ToolCallLocation] | None:
    """The file a file tool works on (and the line a Read starts at), for "follow along"."""
    data = input if isinstance(input, Mapping) else {}
    path = _path(data, cwd)
    if path is None:
        if tool_name in ("Glob", "Grep") and isinstance(data.get("path"), str) and data["path"]:
            return [ToolCallLocation(path=_absolute(data["path"], cwd))]
        return None
    offset = data.get("offset") if tool_name == "Read" else None
    return [ToolCallLocation(path=path, line=offset if isinstance(offset, int) and offset > 0 else None)]


def result_text(content: Any) -> str:
    """A tool_result's content as plain text (a string, or text blocks as dicts or models)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, Sequence) else ():
        data = block_to_dict(block)
        if isinstance(data, Mapping) and data.get("type") == "text" and isinstance(data.get("text"), str):
            parts.append(data["text"])
    return "\n".join(parts)


def result_content(tool_name: str, content: Any) -> list[Content]:
    """A tool_result as ACP content: its text (fenced for a shell, so it shows as output)
    and its images."""
    found: list[Content] = []
    text = result_text(content)
    if text:
        found.append(tool_content(text_block(fenced(text) if kind_of(tool_name) == "execute" else text)))
    for block in content if isinstance(content, list) else ():
        data = block_to_dict(block)
        source = data.get("source") if isinstance(data, Mapping) and data.get("type") == "image" else None
        if isinstance(source, Mapping) and source.get("type") == "base64" and isinstance(source.get("data"), str):
            found.append(tool_content(image_block(source["data"], str(source.get("media_type", "image/png")))))
    return found


def diff_content(path: str, before: str | None, after: str) -> FileEditToolCallContent:
    """A change as the client's diff view shows it (before None: the file is new)."""
    return tool_diff_content(path, after, before)


def fenced(text: str) -> str:
    """``text`` as a Markdown code block, its fence longer than any run of backticks inside."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def _path(data: Mapping[str, Any], cwd: str) -> str | None:
    for key in _PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value:
            return _absolute(value, cwd)
    return None


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _cut(text: str) -> str:
    return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "\u2026"
