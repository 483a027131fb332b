"""NotebookEdit through the real Scheduler: replace, insert, delete, and its refusals."""

from __future__ import annotations

import nbformat
import pytest


@pytest.fixture
def notebook(files):
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("x = 1", id="code1")
    code.outputs = [nbformat.v4.new_output("stream", text="out\n")]
    code.execution_count = 3
    nb.cells = [nbformat.v4.new_markdown_cell("# Intro", id="md1"), code]
    path = files.root / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def cells(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb.cells


async def test_replace_sets_source_and_clears_outputs(files, notebook):
    await files.ok("Read", file_path="nb.ipynb")
    text = await files.ok("NotebookEdit", notebook_path="nb.ipynb", cell_id="code1", new_source="x = 2")
    cell = cells(notebook)[1]
    assert cell.source == "x = 2" and cell.outputs == [] and cell.execution_count is None
    assert "code1" in text


async def test_replace_can_change_the_cell_type_and_keep_the_id(files, notebook):
    await files.ok("Read", file_path="nb.ipynb")
    await files.ok("NotebookEdit", notebook_path="nb.ipynb", cell_id="code1", new_source="*now text*", cell_type="markdown")
    cell = cells(notebook)[1]
    assert cell.cell_type == "markdown" and cell.id == "code1" and "outputs" not in cell


async def test_insert_after_a_cell_and_at_the_start(files, notebook):
    await files.ok("Read", file_path="nb.ipynb")
    await files.ok("NotebookEdit", notebook_path="nb.ipynb", cell_id="md1", new_source="y = 2",
                   cell_type="code", edit_mode="insert")
    await files.ok("NotebookEdit", notebook_path="nb.ipynb", new_source="first", cell_type="markdown", edit_mode="insert")
    assert [c.source for c in cells(notebook)] == ["first", "# Intro", "y = 2", "x = 1"]


async def test_delete_by_id_and_by_number(files, notebook):
    await files.ok("Read", file_path="nb.ipynb")
    await files.ok("NotebookEdit", notebook_path="nb.ipynb", cell_id="md1", edit_mode="delete")
    await files.ok("NotebookEdit", notebook_path="nb.ipynb", cell_number=0, edit_mode="delete")
    assert cells(notebook) == []


async def test_unread_or_changed_notebooks_are_refused(files, notebook):
    text = await files.error("NotebookEdit", notebook_path="nb.ipynb", cell_id="md1", new_source="z")
    assert "has not been read" in text
    await files.ok("Read", file_path="nb.ipynb")
    notebook.write_text(notebook.read_text() + "\n\n")
    assert "changed on disk" in await files.error("NotebookEdit", notebook_path="nb.ipynb", cell_id="md1", new_source="z")


async def test_bad_cell_and_bad_input_give_clear_errors(files, notebook):
    await files.ok("Read", file_path="nb.ipynb")
    text = await files.error("NotebookEdit", notebook_path="nb.ipynb", cell_id="nope", new_source="z")
    assert "No cell with id 'nope'" in text and "md1" in text
    text = await files.error("NotebookEdit", notebook_path="nb.ipynb", cell_id="md1", new_source="z", edit_mode="insert")
    assert "cell_type" in text
    text = await files.error("NotebookEdit", notebook_path="nb.ipynb", cell_number=9, new_source="z")
    assert "out of range" in text
    text = await files.error("NotebookEdit", notebook_path="nb.ipynb", new_source="z")
    assert "cell_id" in text
    (files.root / "plain.txt").write_text("x")
    assert ".ipynb" in await files.error("NotebookEdit", notebook_path="plain.txt", cell_id="a", new_source="z")


async def test_a_file_that_is_not_a_notebook_is_refused_untouched(files):
    path = files.root / "broken.ipynb"
    path.write_text("{not json")
    text = await files.error("Read", file_path="broken.ipynb")
    assert "could not be read as a Jupyter notebook" in text
    assert path.read_text() == "{not json"


async def test_old_notebooks_without_ids_are_addressed_by_position(files):
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = 4
    nb.cells = [nbformat.v4.new_code_cell("a"), nbformat.v4.new_code_cell("b")]
    for cell in nb.cells:
        del cell["id"]
    path = files.root / "old.ipynb"
    nbformat.write(nb, path)
    text = await files.ok("Read", file_path="old.ipynb")
    assert 'id="cell-1"' in text
    await files.ok("NotebookEdit", notebook_path="old.ipynb", cell_id="cell-1", new_source="c", cell_type="code",
                   edit_mode="insert")
    assert [c.source for c in cells(path)] == ["a", "b", "c"]
    assert all("id" not in c for c in cells(path))
