"""Markers by where a test lives, so the core can run alone in well under a minute.

``python -m pytest`` (the README's command) runs everything. ``-m "not slow"`` skips the
parts that start real kernels, a browser, MCP servers or the teaching notebooks; each
of those also has its own marker (``-m kernel``, ``-m browser``, ``-m mcp``,
``-m notebooks``), as do the few core tests that take seconds by design (``-m heavy``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SLOW_PARTS = {
    "kernel": ROOT / "tests" / "notebook" / "test_kernel.py",
    "browser": ROOT / "tests" / "browser",
    "mcp": ROOT / "tests" / "tools" / "mcp",
    "notebooks": ROOT / "notebooks",
}


# Tests that take seconds by design: they run mypy, feed hostile inputs large enough to show
# linear time, or compare with real bash and git over a whole corpus. Marked ``heavy``.
HEAVY = (
    "tests/test_public_api.py::test_mypy_passes_on_the_package",
    "tests/test_public_api.py::test_a_decorated_function_and_a_typed_tool_keep_their_types",
    "tests/tools/test_html_text.py::test_hostile_pages_convert_in_linear_time",
    "tests/notebook/test_cellparse_prescan.py::test_hostile_bodies_are_read_in_linear_time",
    "tests/tools/files/test_files_grep_bounds.py",
    "tests/shell/test_git_flags.py",
    "tests/shell/test_properties.py",
    "tests/attacks/test_process_cleanup.py",
    "tests/tools/test_bash_processes_bounds.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        for marker, where in SLOW_PARTS.items():
            if path == where or where in path.parents:
                item.add_marker(getattr(pytest.mark, marker))
                item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith(HEAVY):
            item.add_marker(pytest.mark.heavy)
            item.add_marker(pytest.mark.slow)
