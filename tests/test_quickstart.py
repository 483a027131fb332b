"""The README's Quick start is what CI runs: the install, the demo and the whole suite.

``.ci/run`` clones the checkout, makes a fresh venv and runs exactly the lines that
``.ci/quickstart.py`` reads from the README; these tests keep that chain honest, and
check that the demo shows what the README says it shows.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
INSTALL, DEMO, TESTS = 'pip install -e ".[dev]"', "python -m nbtoolsched demo", "python -m pytest"
ASK = "Edit wants to edit app/config.py -> allowed by the demo's policy"


def _quickstart():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.M | re.S)
    assert found is not None
    return found.group(1)


def test_the_quick_start_installs_once_then_runs_the_demo_then_the_whole_suite() -> None:
    commands = _quickstart().quickstart_commands(README.read_text(encoding="utf-8"))
    assert commands == [INSTALL, DEMO, TESTS], commands
    assert sum("pip install" in c for c in commands) == 1, commands  # one install, not one per command


def test_the_quick_start_keeps_what_ci_must_not_run_out_of_the_commands() -> None:
    section = _section()
    commands = _quickstart().quickstart_commands(README.read_text(encoding="utf-8"))
    assert "jupyter lab notebooks/00_quick_start.ipynb" in section
    assert not any("jupyter" in c for c in commands), commands
    for magic in ("%load_ext nbtoolsched", "%%toolcall", "%%agent"):  # the taste of the magics
        assert magic in section, magic
        assert not any(magic in c for c in commands), commands
    assert 'python -m pytest -m "not slow"' in section  # the one-minute core, named


def test_ci_runs_the_printed_commands_in_a_fresh_clone_and_venv() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 .ci/quickstart.py" in script
    assert "git clone" in script and "python3 -m venv .venv" in script and ". .venv/bin/activate" in script
    assert "grep -qx 'python -m pytest'" in script  # CI refuses a README without the whole-suite line
    assert 'bash -euo pipefail -c "$command"' in script  # a failing test fails CI
    printed = subprocess.run([sys.executable, str(ROOT / ".ci" / "quickstart.py")], capture_output=True, text=True, check=True)
    assert printed.stdout.splitlines() == _quickstart().quickstart_commands(README.read_text(encoding="utf-8"))


def test_the_demo_shows_the_edits_diff_the_changed_read_and_the_answered_ask() -> None:
    """The README's demo command, as a new user runs it (an approval policy in the
    environment does not change the demo's own scripted answer)."""
    env = {**os.environ, "NBTOOLSCHED_APPROVAL": "deny"}
    done = subprocess.run([sys.executable, "-m", "nbtoolsched", "demo"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert ASK in out
    assert re.search(r"toolu_03  Edit  asks .*\n.*toolu_03  Edit  answered  allow\n.*toolu_03  Edit  finished  completed", out), out
    diff = ["--- a/app/config.py", "+++ b/app/config.py",
            "-    return {'name': 'world', 'debug': False}", "+    return {'name': 'world', 'debug': True}"]
    assert all(line in out for line in diff), out  # the Edit's result: a unified diff of the file
    results = out.split("Results (one per tool_use, in order):")[1].split("Timeline")[0]
    first_read, second_read = results.split("toolu_02 Read")[1].split("toolu_03")[0], results.split("toolu_05 Read")[1]
    assert "'debug': False" in first_read and "'debug': True" in second_read  # the Reads differ
    for state in ("started", "finished  completed"):
        assert f"toolu_01  Grep  {state}" in out
    assert "-- batch 1 (safe, parallel)" in out and "-- batch 2 (unsafe, alone)" in out and "-- batch 3 (safe, parallel)" in out


async def test_the_demo_is_fast_and_the_readme_quotes_its_ask() -> None:
    from nbtoolsched._demo import run_demo

    lines: list[str] = []
    started = time.monotonic()
    results = await run_demo(out=lambda *parts: lines.append(" ".join(map(str, parts))))
    assert time.monotonic() - started < 3
    assert [r.tool_use_id for r in results] == [f"toolu_0{i}" for i in range(1, 6)] and not any(r.is_error for r in results)
    assert any(ASK in line for line in lines)
    assert ASK in " ".join(_section().split())  # the README quotes the demo's words


async def test_the_demos_policy_denies_what_it_does_not_allow() -> None:
    import nbtoolsched as nts
    from nbtoolsched._demo import demo_policy

    said: list[str] = []
    policy = demo_policy("/project", lambda *parts: said.append(" ".join(map(str, parts))), lambda: 0.0)
    request = nts.ApprovalRequest("toolu_09", "Bash", {"command": "rm -rf app"}, "Bash wants to run rm -rf app.")
    answer = await policy(request)
    assert answer.kind == "deny" and answer.by_policy
    assert said and said[0].endswith("Bash wants to run rm -rf app -> denied by the demo's policy")
    escape = nts.ApprovalRequest("toolu_10", "Edit", {"file_path": "app/../README.md"}, "Edit wants to edit README.md.")
    assert (await policy(escape)).kind == "deny"
    inside = nts.ApprovalRequest("toolu_11", "Edit", {"file_path": "/project/app/config.py"}, "Edit wants to edit app/config.py.")
    assert (await policy(inside)).kind == "allow"


def test_every_console_script_names_a_function_that_runs_without_arguments() -> None:
    """pyproject's [project.scripts] point at real functions (nbtoolsched-demo once named a
    module that does not exist), which a console script calls with no arguments."""
    import importlib
    import inspect
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts.get("nbtoolsched-demo") == "nbtoolsched._demo:main"
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
