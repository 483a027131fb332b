"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

Goes through nbformat, so the result is validated before it is written (atomically);
like Edit, it refuses a notebook the model has not read or that changed since.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..._tool._context import ToolContext
from ..._tool._base import ToolOutput
from ._access import report_change
from ._base import CheckedWriteTool
from ._guard import remember_write, stale_read_error
from ._notebook import NotebookFileError, cell_label, find_cell, load_notebook, new_cell, save_notebook
from ._paths import display, missing_path_message

__all__ = ["NotebookEditTool", "NotebookEditInput"]


class NotebookEditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebook_path: str = Field(min_length=1, description="The .ipynb file; absolute, or relative to the working directory.")
    cell_id: str | None = Field(None, description="The cell's id as Read shows it (or cell-N for the N-th, 0-based). "
                                "insert puts the new cell after it (at the start when omitted).")
    cell_number: int | None = Field(None, ge=0, description="The cell's 0-based index, instead of cell_id.")
    new_source: str = Field("", description="The cell's new source (ignored by delete).")
    cell_type: Literal["code", "markdown"] | None = Field(None, description="The cell type; required for insert.")
    edit_mode: Literal["replace", "insert", "delete"] = Field("replace", description="replace, insert or delete.")

    @model_validator(mode="after")
    def _one_locator(self) -> "NotebookEditInput":
        if self.cell_id is not None and self.cell_number is not None:
            raise ValueError("give cell_id or cell_number, not both")
        if self.edit_mode != "insert" and self.cell_id is None and self.cell_number is None:
            raise ValueError(f"edit_mode {self.edit_mode!r} needs cell_id (or cell_number) to say which cell")
        if self.edit_mode == "insert" and self.cell_type is None:
            raise ValueError("edit_mode 'insert' needs cell_type ('code' or 'markdown')")
        return self


class NotebookEditTool(CheckedWriteTool[NotebookEditInput]):
    name = "NotebookEdit"
    search_hint = "edit a Jupyter notebook cell"
    description = (
        "Replace, insert or delete one cell of a Jupyter notebook (.ipynb).\n"
        "- Read the notebook first; Read shows each cell's id. Name the cell with cell_id (or cell_number).\n"
        "- replace sets the cell's source (and type, if cell_type is given) and clears its outputs; insert adds a "
        "new cell after cell_id (at the start without one) and needs cell_type; delete removes the cell.\n"
        "- The notebook is validated with nbformat before it is written."
    )
    input_model = NotebookEditInput
    path_field = "notebook_path"

    def refusal(self, path: str, ctx: ToolContext) -> str | None:
        return _refusal(path, ctx)

    async def write(self, path: str, input: NotebookEditInput, ctx: ToolContext) -> ToolOutput:
        # A notebook is JSON that nbformat validates: always the disk's, never an editor's text.
        # A host that hears of changes (ctx.files) is told the file's text before and after.
        before = await asyncio.to_thread(_text, path) if ctx.files is not None else None
        try:
            message = await asyncio.to_thread(_edit, path, input, ctx)
        except NotebookFileError as err:
            return ToolOutput(str(err), is_error=True)
        if ctx.files is not None:
            report_change(ctx, path, before, await asyncio.to_thread(_text, path))
        return ToolOutput({"notebook_path": path, "edit_mode": input.edit_mode}, content=message)


def _text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _refusal(path: str, ctx: ToolContext) -> str | None:
    if not path.endswith(".ipynb"):
        return f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files."
    if not os.path.isfile(path):
        return missing_path_message(path, ctx.cwd, "Notebook")
    return stale_read_error(ctx, path)


def _edit(path: str, input: NotebookEditInput, ctx: ToolContext) -> str:
    notebook = load_notebook(path)
    index = _locate(notebook, input)
    label = display(path, ctx.cwd)
    if input.edit_mode == "delete":
        removed = cell_label(notebook, index)
        del notebook.cells[index]
        outcome = f"Deleted cell {removed} from {label}."
    elif input.edit_mode == "insert" or index == len(notebook.cells):
        cell = _new_cell(notebook, input.cell_type or "code", input.new_source)
        notebook.cells.insert(index, cell)
        outcome = f"Inserted {cell.cell_type} cell {cell_label(notebook, index)} at position {index} in {label}."
    else:
        _replace(notebook, index, input)
        outcome = f"Replaced the source of cell {cell_label(notebook, index)} in {label}."
    save_notebook(path, notebook)
    remember_write(ctx, path)
    return outcome


def _locate(notebook: Any, input: NotebookEditInput) -> int:
    """The index the edit acts on (for insert: where the new cell goes)."""
    count = len(notebook.cells)
    if input.cell_id is None and input.cell_number is None:
        return 0  # insert at the start
    if input.cell_number is not None:
        index = input.cell_number
        allowed = count if input.edit_mode == "replace" else count - 1  # replace one past the end appends
        if index > allowed:
            raise NotebookFileError(f"cell_number {index} is out of range: the notebook has {count} cells (0-{count - 1}).")
        return index + 1 if input.edit_mode == "insert" else index
    found = find_cell(notebook, input.cell_id or "")
    if found is None:
        known = ", ".join(cell_label(notebook, i) for i in range(min(count, 20)))
        raise NotebookFileError(f"No cell with id {input.cell_id!r}. The cells are: {known or '(none)'}.")
    return found + 1 if input.edit_mode == "insert" else found


def _new_cell(notebook: Any, cell_type: str, source: str) -> Any:
    cell = new_cell(cell_type, source)
    if notebook.nbformat_minor < 5:
        cell.pop("id", None)  # ids only exist from nbformat 4.5
    return cell


def _replace(notebook: Any, index: int, input: NotebookEditInput) -> None:
    old = notebook.cells[index]
    if input.cell_type and input.cell_type != old.cell_type:
        cell = _new_cell(notebook, input.cell_type, input.new_source)
        if "id" in old:
            cell["id"] = old["id"]
        cell.metadata = old.metadata
        notebook.cells[index] = cell
        return
    old.source = input.new_source
    if old.cell_type == "code":
        old.outputs = []
        old.execution_count = None
