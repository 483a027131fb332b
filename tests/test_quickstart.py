"""The README's Quick start is what CI runs: two commands, the demo and the whole suite.

``.ci/run`` clones the checkout, makes a fresh venv and runs exactly the lines that
``.ci/quickstart.py`` reads from the README; these tests keep that chain honest.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quickstart():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_has_two_quick_start_commands_the_demo_and_the_tests() -> None:
    commands = _quickstart().quickstart_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2, commands
    demo, tests = commands
    assert demo.startswith('pip install -e ".[dev]"') and demo.endswith("python -m nbtoolsched demo"), demo
    assert tests.startswith('pip install -e ".[dev]"') and tests.endswith("python -m pytest"), tests


def test_ci_runs_the_printed_commands_in_a_fresh_clone_and_venv() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 .ci/quickstart.py" in script
    assert "git clone" in script and "python3 -m venv .venv" in script and ". .venv/bin/activate" in script
    printed = subprocess.run([sys.executable, str(ROOT / ".ci" / "quickstart.py")], capture_output=True, text=True, check=True)
    assert printed.stdout.splitlines() == _quickstart().quickstart_commands((ROOT / "README.md").read_text(encoding="utf-8"))


def test_every_console_script_names_a_function_that_runs_without_arguments() -> None:
    """pyproject's [project.scripts] point at real functions (nbtoolsched-demo once named a
    module that does not exist), which a console script calls with no arguments."""
    import importlib
    import inspect
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert "nbtoolsched-demo" in scripts
    for name, target in scripts.items():
        module, _, attribute = target.partition(":")
        function = getattr(importlib.import_module(module), attribute)
        required = [p for p in inspect.signature(function).parameters.values()
                    if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        assert callable(function) and not required, (name, target, required)


def test_a_readme_without_the_section_is_a_clear_error() -> None:
    import pytest

    with pytest.raises(SystemExit, match="no '## Quick start' section"):
        _quickstart().quickstart_commands("# nbtoolsched\n\n## Install\n")
