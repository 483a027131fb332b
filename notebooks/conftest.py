"""nbval settings for the teaching notebooks.

Run them with::

    python -m pytest --nbval notebooks/ --nbval-current-env \
        --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 60 -p no:cacheprovider

When ``--nbval`` is on and an option below was not given on the command line, this file
fills it in, so ``python -m pytest --nbval notebooks`` alone runs them the same way.
It also removes ``ANTHROPIC_API_KEY`` from the kernel's environment (the kernel inherits
pytest's): the stored outputs are the offline ones, and a test run must not spend money.
``NBTOOLSCHED_APPROVAL`` is left alone: every notebook names the approval policy it needs,
and must give the same outputs with the variable set or not.
Set ``NBTOOLSCHED_NOTEBOOKS_LIVE=1`` to keep the key (then use ``--nbval-lax``, since a
real model's answers cannot match stored outputs).

A cell tagged ``needs-kernel-overlay`` (chapters 08, 14 and 15) shows the OS sandbox at
work, or a speculation in the kernel overlay, which needs the OS sandbox and overlayfs
(the tag asks for both, so chapter 14's sandbox cells go uncompared also where only
overlayfs is missing). Its stored outputs are that run's, and
they are compared where the overlay can start; where it cannot, the cell still runs (and
must not fail: speculation falls back to the path-rewriting overlay and says why), but its
outputs are not compared, and the run's summary says so and why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SANITIZE = HERE / "sanitize.cfg"
CELL_TIMEOUT = 60  # seconds: every cell takes well under 5 s, so a stuck one fails fast
NBVAL_DEFAULT_CELL_TIMEOUT = 2000
# Variables that would change what the notebooks print. (Not NBTOOLSCHED_APPROVAL: the
# notebooks set their approval policy explicitly, so nbval checks them with it set too.)
UNSET_FOR_DETERMINISM = ("NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY",)


def pytest_configure(config: pytest.Config) -> None:
    option = config.option
    if not (getattr(option, "nbval", False) or getattr(option, "nbval_lax", False)):
        return
    if option.nbval_sanitize_with is None:
        option.nbval_sanitize_with = str(SANITIZE)
    if int(option.nbval_cell_timeout) == NBVAL_DEFAULT_CELL_TIMEOUT:
        option.nbval_cell_timeout = CELL_TIMEOUT
    if option.nbval_kernel_name is None:
        option.nbval_current_env = True
    for name in UNSET_FOR_DETERMINISM:
        os.environ.pop(name, None)
    if os.environ.get("NBTOOLSCHED_NOTEBOOKS_LIVE") != "1":
        os.environ.pop("ANTHROPIC_API_KEY", None)
    _own_temp_dir()


_RUN_DIR: list[str] = []


def _own_temp_dir() -> None:
    """Kernels started by this run make their scratch projects in a folder of this run's
    own (TMPDIR), removed at the end: another test run's folders are never touched."""
    import tempfile

    run_dir = tempfile.mkdtemp(prefix="nbtoolsched-notebooks-run-")
    _RUN_DIR.append(run_dir)
    os.environ["TMPDIR"] = run_dir


KERNEL_OVERLAY_TAG = "needs-kernel-overlay"
_UNCOMPARED: list[str] = []  # why the tagged cells' outputs were not compared, if they were not


def kernel_overlay_missing() -> str | None:
    """None when a speculation's kernel overlay can start here (as ``speculate`` decides:
    the OS sandbox, then an overlayfs mount), else why not."""
    import shutil
    import tempfile

    from nbtoolsched.sandbox import KernelOverlay, OverlayUnavailable, availability
    from nbtoolsched.sandbox._probe import switch

    if switch() == "off":
        return "NBTOOLSCHED_SANDBOX=off"
    found = availability()
    if not found.ok:
        return f"the OS sandbox cannot start here ({found.reason})"
    lower, work = tempfile.mkdtemp(prefix="nbtoolsched-kernel-probe-"), tempfile.mkdtemp(prefix="nbtoolsched-kernel-probe-")
    try:
        KernelOverlay.check(lower, work).discard()
    except (OverlayUnavailable, OSError) as err:
        return f"overlayfs cannot be mounted here ({err})"
    finally:
        shutil.rmtree(lower, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return None


def _kernel_cells(items: list[pytest.Item]) -> list[pytest.Item]:
    return [i for i in items if isinstance(getattr(i, "options", None), dict)
            and KERNEL_OVERLAY_TAG in (getattr(getattr(i, "cell", None), "metadata", {}) or {}).get("tags", [])]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Where the kernel overlay cannot start, run the cells tagged for it without comparing outputs."""
    cells = _kernel_cells(items)
    if not cells:
        return
    missing = kernel_overlay_missing()
    if missing is None:
        return
    for item in cells:
        item.options["check"] = False  # type: ignore[attr-defined]
    _UNCOMPARED.append(f"{len(cells)} cells tagged {KERNEL_OVERLAY_TAG} ran without comparing their outputs: {missing}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _UNCOMPARED:
        terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """nbval stops kernels without running their exit hooks: remove the scratch projects they made."""
    import shutil

    for run_dir in _RUN_DIR:
        shutil.rmtree(run_dir, ignore_errors=True)
