"""Every chapter runs from a copy of this folder alone, with an approval policy in the environment.

nbval checks the notebooks in place, without ``NBTOOLSCHED_APPROVAL``, against their stored
outputs. A reader who copied the notebooks folder (or has only it and the installed
package), and whose environment sets ``NBTOOLSCHED_APPROVAL=allow`` as a headless kernel
may, must still be able to run each one top to bottom: no chapter may read a file outside
this folder or depend on the variable being unset. Each notebook runs here with
``jupyter nbconvert --execute`` (which fails on the first error), a few side by side.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIDE_BY_SIDE = 3  # the chapters wait on staged sleeps much of the time
PER_NOTEBOOK_S = 180
UNSET = ("ANTHROPIC_API_KEY", "NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY")


def _run(notebook: Path, env: dict[str, str]) -> str | None:
    """None when the notebook ran to the end, else why not (the end of nbconvert's stderr)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output",
             notebook.stem + ".run", "--ExecutePreprocessor.timeout=60", notebook.name],
            cwd=notebook.parent, env=env, capture_output=True, text=True, timeout=PER_NOTEBOOK_S)
    except subprocess.TimeoutExpired:
        return f"{notebook.name}: did not finish in {PER_NOTEBOOK_S} s"
    if done.returncode != 0:
        return f"{notebook.name}: exit {done.returncode}\n" + "\n".join(done.stderr.splitlines()[-25:])
    return None


def test_every_chapter_runs_from_a_copy_of_the_folder_with_approvals_allowed(tmp_path: Path) -> None:
    copy = tmp_path / "notebooks"
    shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.run.ipynb"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(NBTOOLSCHED_APPROVAL="allow", TMPDIR=str(scratch))
    env.pop("PYTHONPATH", None)  # the installed package and this folder, nothing of the repository
    chapters = sorted(copy.glob("[0-9][0-9]_*.ipynb"))
    assert len(chapters) >= 16, [p.name for p in chapters]
    with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
        failures = [f for f in pool.map(lambda nb: _run(nb, env), chapters) if f]
    assert not failures, "\n\n".join(failures)
