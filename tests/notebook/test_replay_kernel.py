"""``%replay`` in a real kernel, executed as nbconvert executes a notebook: the saved
notebook and its HTML export hold the finished progress line ("2/2 sessions"), never a
widget nor "0%| 0/2", and the report after it.

nbclient applies ``update_display_data`` to the output with the same display id, as
JupyterLab does, so what it saves is what a reopened notebook shows without a kernel.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .kernels import kernel_python, running_kernel

pytestmark = [pytest.mark.timeout(300), pytest.mark.kernel]

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
WIDGET = "application/vnd.jupyter.widget-view+json"


def test_a_saved_notebook_holds_the_finished_replay(tmp_path):
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    work = tmp_path / "work"
    (work / "sessions").mkdir(parents=True)
    for name in ("hand_parallel.jsonl", "fasthooks_main.jsonl"):
        shutil.copy(TRANSCRIPTS / name, work / "sessions" / name)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%load_ext nbtoolsched"),
                                         nbformat.v4.new_code_cell("%replay sessions --workers 1")])
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "NBTOOLSCHED_APPROVAL": ""}
    with running_kernel(kernel_python("ipykernel-current"), work, env) as (manager, _client):
        NotebookClient(nb, km=manager, timeout=120, allow_errors=False).execute()
    outputs = nb.cells[1].outputs
    assert all(WIDGET not in o.get("data", {}) for o in outputs), outputs
    progress = [o for o in outputs if o["output_type"] == "display_data" and "nts-progress" in o["data"].get("text/html", "")]
    assert len(progress) == 1, outputs
    assert "2/2 sessions · " in progress[0]["data"]["text/plain"] and "2/2 sessions · " in progress[0]["data"]["text/html"]
    result = next(o for o in outputs if o["output_type"] == "execute_result")
    assert "nts-replay-headline" in result["data"]["text/html"] and "2 sessions, 19 calls" in result["data"]["text/html"]
    page, _ = HTMLExporter().from_notebook_node(nb)
    assert "2/2 sessions" in page and "0%|" not in page and "Error displaying widget" not in page
