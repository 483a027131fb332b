"""Jupyter notebooks through nbformat: load and validate, show as cells, find a cell, save."""

from __future__ import annotations

import re
from typing import Any

from ..._files import atomic_write

__all__ = ["new_cell", "NotebookFileError", "load_notebook", "render_notebook", "cell_label", "find_cell", "save_notebook"]

MAX_OUTPUT_CHARS = 2000  # per cell output shown by Read
_INDEX_ID = re.compile(r"cell-(\d+)")


class NotebookFileError(ValueError):
    """The file is not a notebook nbformat can read, or the change would make it invalid.

    The file tools turn it into a tool_result; it never reaches users (unlike
    ``nbtoolsched.NotebookError``, about a notebook cell or session request)."""


def load_notebook(path: str) -> Any:
    import nbformat  # late: it pulls in jsonschema, which takes seconds to import

    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except nbformat.ValidationError as err:
        raise NotebookFileError(f"{path} is not a valid notebook: {err.message}") from None
    except Exception as err:  # JSON errors, unknown major versions
        raise NotebookFileError(f"{path} could not be read as a Jupyter notebook: {err}") from None
    return notebook


def save_notebook(path: str, notebook: Any) -> None:
    """Validate, then write atomically; an invalid notebook is never written."""
    import nbformat

    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as err:
        raise NotebookFileError(f"the edit would make the notebook invalid: {err.message}") from None
    atomic_write(path, (nbformat.writes(notebook) + "\n").encode("utf-8"))


def cell_label(notebook: Any, index: int) -> str:
    """A cell's id, or ``cell-N`` in notebooks too old to have ids."""
    return str(notebook.cells[index].get("id") or f"cell-{index}")


def find_cell(notebook: Any, cell_id: str) -> int | None:
    """Index of the cell with this id; ``cell-N`` also names the N-th cell (0-based)."""
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return index
    match = _INDEX_ID.fullmatch(cell_id)
    if match and int(match.group(1)) < len(notebook.cells):
        return int(match.group(1))
    return None


def render_notebook(notebook: Any, label: str) -> str:
    language = notebook.metadata.get("language_info", {}).get("name") or "python"
    parts = [f"Notebook {label}: {len(notebook.cells)} cells, language {language}."]
    for index, cell in enumerate(notebook.cells):
        parts.append(f'<cell id="{cell_label(notebook, index)}" index="{index}" type="{cell.cell_type}">')
        parts.append(cell.source)
        parts.extend(_render_output(output) for output in cell.get("outputs", ()))
        parts.append("</cell>")
    return "\n".join(parts)


def _render_output(output: Any) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
    elif kind == "error":
        text = f"{output.get('ename')}: {output.get('evalue')}"
    else:
        data = output.get("data", {})
        text = data.get("text/plain", "") or ("[" + ", ".join(sorted(data)) + " output]" if data else "")
    if isinstance(text, list):
        text = "".join(text)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"... [{len(text) - MAX_OUTPUT_CHARS} more characters]"
    return f"<output type=\"{kind}\">\n{text.rstrip()}\n</output>"


def new_cell(cell_type: str, source: str) -> Any:
    import nbformat

    return nbformat.v4.new_markdown_cell(source) if cell_type == "markdown" else nbformat.v4.new_code_cell(source)
