"""Markers by where a test lives, so the core can run alone in well under a minute.

``python -m pytest`` (the README's command) runs everything. ``-m "not slow"`` skips the
parts that start real kernels, a browser, MCP servers or the teaching notebooks; each
of those also has its own marker (``-m kernel``, ``-m browser``, ``-m mcp``,
``-m notebooks``).
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        for marker, where in SLOW_PARTS.items():
            if path == where or where in path.parents:
                item.add_marker(getattr(pytest.mark, marker))
                item.add_marker(pytest.mark.slow)
