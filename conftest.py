"""Markers by what a test needs, so the core can run alone in well under a minute.

``python -m pytest`` (the README's command) runs everything. ``-m "not slow"`` leaves out
the parts that start real kernels, a browser, MCP servers, a local Ray or the teaching
notebooks, and the core tests that take seconds by design. Each part has its own marker
(``-m kernel``, ``-m browser``, ``-m mcp``, ``-m ray``, ``-m notebooks``, ``-m heavy``) and
``slow`` is exactly their union. A test carries its marker where it is written
(``@pytest.mark.heavy``, a module's ``pytestmark``); only the parts that are a whole folder
are marked here, by folder. tests/test_markers.py checks that each marker selects all that
pyproject.toml says it does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings

# Property tests are deterministic: the same examples on every run and every machine (a
# failure reproduces; a pass is not luck). A test's own @settings changes only what it names.
settings.register_profile("deterministic", derandomize=True, print_blob=True)
settings.load_profile("deterministic")

ROOT = Path(__file__).resolve().parent
FOLDERS = {  # the parts that are a whole folder
    "browser": ROOT / "tests" / "browser",
    "mcp": ROOT / "tests" / "tools" / "mcp",
    "notebooks": ROOT / "notebooks",
}
SLOW = ("kernel", "browser", "mcp", "notebooks", "ray", "heavy")  # what -m "not slow" leaves out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        for marker, folder in FOLDERS.items():
            if folder in path.parents:
                item.add_marker(getattr(pytest.mark, marker))
        if any(item.get_closest_marker(name) for name in SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _kernel_overlay_is_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """``-m kernel_overlay`` selects every test whose speculation runs in the kernel overlay:
    one that ran a speculation there without the marker fails here."""
    from nbtoolsched.speculation import Speculation

    made: list[Speculation] = []
    init = Speculation.__init__

    def recording_init(self: Speculation, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Speculation, "__init__", recording_init)
        yield
    if any(spec.overlay_kind == "kernel" for spec in made) and request.node.get_closest_marker("kernel_overlay") is None:
        pytest.fail("this test ran a speculation in the kernel overlay: mark it @pytest.mark.kernel_overlay", pytrace=False)
