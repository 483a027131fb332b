"""What a waiting edit would change: the diff a person sees before allowing it.

Edit, Write and NotebookEdit are read from the file as it is now, without running the
tool and without touching anything. When the edit could not apply (old_string not
found, a missing cell), the diff still shows what the model asked for, with a note.
"""

from __future__ import annotations

import os
from typing import Any

from ._render import unified

__all__ = ["EDIT_TOOLS", "would_be_diff"]

EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})
_MAX_BYTES = 2_000_000  # a bigger file gets no preview (reading it would stall the loop)


def would_be_diff(tool: str, data: Any, cwd: str) -> tuple[str, str] | None:
    """``(unified diff, note)`` for an edit-like call, or None for any other tool."""
    if tool not in EDIT_TOOLS or not isinstance(data, dict):
        return None
    try:
        if tool == "Write":
            return _write(data, cwd)
        if tool == "Edit":
            return _edit(data, cwd)
        if tool == "MultiEdit":
            return _multi_edit(data, cwd)
        return _notebook_edit(data, cwd)
    except Exception as err:  # noqa: BLE001 - a preview must never break the panel
        return "", f"no preview: {err}"


def _path(data: dict[str, Any], cwd: str, key: str = "file_path") -> tuple[str, str]:
    raw = data.get(key)
    if not isinstance(raw, str) or not raw:
        raise ValueError(f"no {key}")
    path = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))
    label = os.path.relpath(path, cwd) if path.startswith(os.path.normpath(cwd) + os.sep) else path
    return path, label


def _read(path: str) -> str | None:
    if not os.path.isfile(path):
        return None
    if os.path.getsize(path) > _MAX_BYTES:
        raise ValueError(f"{os.path.basename(path)} is larger than {_MAX_BYTES:,} bytes")
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read().replace("\r\n", "\n")


def _write(data: dict[str, Any], cwd: str) -> tuple[str, str]:
    path, label = _path(data, cwd)
    before = _read(path)
    after = str(data.get("content", ""))
    note = "creates the file" if before is None else ("no change" if before == after else "replaces the whole file")
    return unified(before, after, label), note


def _replace(text: str, old: str, new: str, every: bool) -> tuple[str, int]:
    count = text.count(old) if old else 0
    return text.replace(old, new, -1 if every else 1), count


def _edit(data: dict[str, Any], cwd: str) -> tuple[str, str]:
    path, label = _path(data, cwd)
    old, new = str(data.get("old_string", "")), str(data.get("new_string", ""))
    before = _read(path)
    if before is None:
        if old == "":
            return unified(None, new, label), "creates the file"
        return unified(old, new, label), "the file does not exist: the edit will fail"
    if old == "":
        return unified(before, new, label), "fills the file" if not before.strip() else "the file is not empty: the edit will fail"
    after, count = _replace(before, old, new, bool(data.get("replace_all")))
    if count == 0:
        return unified(old, new, label), "old_string is not in the file as it is now: the edit will fail"
    if count > 1 and not data.get("replace_all"):
        return unified(before, after, label), f"old_string occurs {count} times: the edit will fail unless replace_all"
    return unified(before, after, label), f"replaces {count} occurrence{'s' if count != 1 else ''}"


def _multi_edit(data: dict[str, Any], cwd: str) -> tuple[str, str]:
    path, label = _path(data, cwd)
    before = _read(path) or ""
    after = before
    for edit in data.get("edits") or []:
        if isinstance(edit, dict):
            after, _ = _replace(after, str(edit.get("old_string", "")), str(edit.get("new_string", "")), bool(edit.get("replace_all")))
    return unified(before, after, label), f"{len(data.get('edits') or [])} edits"


def _notebook_edit(data: dict[str, Any], cwd: str) -> tuple[str, str]:
    import nbformat

    from ..tools.files._notebook_edit import NotebookEditInput, _locate

    path, label = _path(data, cwd, "notebook_path")
    parsed = NotebookEditInput.model_validate(data)
    notebook = nbformat.read(path, as_version=4)
    index = _locate(notebook, parsed)
    new = parsed.new_source
    if parsed.edit_mode == "insert" or index == len(notebook.cells):
        return unified(None, new, f"{label} (new cell at {index})"), f"inserts a {parsed.cell_type or 'code'} cell"
    old = notebook.cells[index].source
    if parsed.edit_mode == "delete":
        return unified(old, None, f"{label} (cell {index})"), "deletes the cell"
    return unified(old, new, f"{label} (cell {index})"), "replaces the cell's source"
