"""Store fresh outputs in teaching notebooks: run each in place, then drop what is noise.

    python notebooks/refresh.py                       # every chapter
    python notebooks/refresh.py 06 08                 # some chapters, by number

Each notebook runs with nbconvert as nbval will check it (no API key, no approval policy or
concurrency cap from the environment). Widget state is then removed: its model ids change on
every run, and a saved notebook has no kernel to drive the widgets anyway, so their outputs
keep only their static text and HTML (nbval never compares widget views).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SPENT = 'class="nts-spent"'  # what a finished view leaves in its widget's place
UNSET = ("ANTHROPIC_API_KEY", "NBTOOLSCHED_APPROVAL", "NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY")


def strip_widgets(path: Path) -> None:
    """Remove saved widget state and widget views, keeping each output's other forms; drop
    the emptied outputs a finished view leaves where its widget was (they show nothing)."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if SPENT not in "".join(o.get("data", {}).get("text/html", ""))]
    nbformat.write(nb, path)


def refresh(path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                    "--ExecutePreprocessor.store_widget_state=False", str(path)], check=True, env=env)
    strip_widgets(path)


def main(chapters: list[str]) -> None:
    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in paths if not chapters or p.name[:2] in chapters]
    if not chosen:
        raise SystemExit(f"no notebook for chapters {chapters}; there are {[p.name[:2] for p in paths]}")
    for path in chosen:
        print("refreshing", path.name, flush=True)
        refresh(path)


if __name__ == "__main__":
    main(sys.argv[1:])
