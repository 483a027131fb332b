"""JupyterLab in headless Chromium: one ``%%agent`` cell asks for an approval mid-turn; a person
clicks Allow in the turn's tool panel and the session goes on to its final, Markdown-rendered
answer. Reuses the JupyterLab fixtures of test_jupyterlab.py (same server setup, same skips)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_jupyterlab import WAIT, _run_cell, browser_available, lab_page  # noqa: F401  (autouse fixture)

pytestmark = [pytest.mark.timeout(400)]

SETUP = '''%load_ext nbtoolsched
from nbtoolsched.models import ScriptedModel, Turn, text, tool_use
model = ScriptedModel([
    Turn([text("I'll write the **notes** file."), tool_use("Write", file_path="notes.txt", content="hello\\n")],
         text_deltas=10, delay_per_delta=0.05),
    Turn([text("Done: `notes.txt` now says *hello*.")], text_deltas=6, delay_per_delta=0.05),
])'''
AGENT = "%%agent --model model --name t\nPlease write my notes."


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, AGENT)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def test_an_agent_cell_with_an_approval_in_jupyterlab(tmp_path):
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    root = tmp_path / "root"
    root.mkdir()
    _notebook(root / "agent.ipynb")
    with lab_page(tmp_path, root, "perCommTarget", viewport=(1400, 1000)) as (page, url):
        _drive(page, expect, url, root)


def _drive(page, expect, url: str, root: Path) -> None:
    page.goto(f"{url}/lab/tree/agent.ipynb")
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=120_000)
    cells = page.locator(".jp-NotebookPanel-notebook .jp-Cell")
    expect(cells).to_have_count(2)
    _run_cell(page, cells.nth(0))
    expect(cells.nth(0).locator(".jp-OutputArea")).to_contain_text("nbtoolsched:")

    _run_cell(page, cells.nth(1))
    view = cells.nth(1).locator(".nts-agent")
    expect(view.locator(".nts-agent-text").first.locator("strong")).to_have_text("notes")  # Markdown, as it streamed
    asking = view.locator(".nts-panel .nts-approval")
    expect(asking).to_have_count(1)
    expect(view.locator('.nts-panel .nts-row[data-state="awaiting_approval"]')).to_contain_text("awaiting approval")
    expect(asking.locator(".nts-would-diff")).to_contain_text("hello")  # what it would write, once
    assert not (root / "notes.txt").exists()
    asking.locator("button.nts-allow").click()
    # When the cell is over, its live view is replaced by the true record: static HTML of
    # what the agent said (Markdown) and did, which a saved notebook shows without a kernel.
    record = cells.nth(1).locator(".nts-agent-record")
    expect(record.locator('.nts-row[data-state="completed"]')).to_have_count(1)
    final = record.locator(".nts-md").nth(1)
    expect(final).to_contain_text("Done: notes.txt now says hello.")
    expect(final.locator("code")).to_have_text("notes.txt")
    expect(record.locator(".nts-agent-status")).to_have_text("finished")
    expect(cells.nth(1).locator(".nts-agent button.nts-agent-stop")).to_have_count(0)  # no live widget left
    assert (root / "notes.txt").read_text() == "hello\n"
