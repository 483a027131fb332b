"""Every ``-m`` marker selects all that pyproject.toml says it does, and ``heavy`` is written
on the tests, never kept as a list of test ids.

One child pytest collects the whole suite (as ``python -m pytest --collect-only`` does) and
records each item's markers, the markers written on it (decorators, ``pytestmark``,
parameters) and what its module uses; each test below holds one marker to its criterion.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched.sandbox

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.heavy  # collects the whole suite in a child process

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("kernel", "browser", "mcp", "notebooks", "ray", "heavy")  # what slow is the union of
FOLDERS = {"browser": "tests/browser/", "mcp": "tests/tools/mcp/", "notebooks": "notebooks/"}

_PROBE = r'''
import json, sys, types
import pytest

def written_on(owner):
    """The marks a decorator or a ``pytestmark`` put on a module, class or function."""
    marks = getattr(owner, "pytestmark", [])
    return {mark.name for mark in (marks if isinstance(marks, list) else [marks])}

class Probe:
    def pytest_collection_finish(self, session):
        from nbtoolsched.scale import RayEngine
        root = str(session.config.rootpath) + "/"
        modules, items = {}, []
        for item in session.items:
            module = getattr(item, "module", None)
            written = set()
            if module is not None:
                name = module.__name__
                if name not in modules:
                    values = list(vars(module).values())
                    modules[name] = {
                        "kernels": any(getattr(v, "__module__", None) == "tests.notebook.kernels" for v in values),
                        "ray": any(v is RayEngine or (isinstance(v, types.ModuleType) and v.__name__ == "ray") for v in values),
                    }
                for owner in (module, getattr(item, "cls", None), getattr(item, "function", None)):
                    written |= written_on(owner)
                callspec = getattr(item, "callspec", None)
                written |= {m.name for m in getattr(callspec, "marks", [])}
            items.append({"id": item.nodeid, "path": str(item.path).removeprefix(root),
                          "module": module.__name__ if module is not None else None,
                          "markers": sorted({m.name for m in item.iter_markers()}), "written": sorted(written)})
        registered = [line.split(":")[0].split("(")[0].strip() for line in session.config.getini("markers")]
        with open(sys.argv[1], "w") as out:
            json.dump({"items": items, "modules": modules, "registered": registered}, out)

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"], plugins=[Probe()]))
'''


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("markers") / "items.json"
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and out.exists(), f"collecting the suite failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    found = json.loads(out.read_text())
    assert len(found["items"]) > 1000, len(found["items"])
    return found


def selected(suite: dict[str, Any], marker: str) -> set[str]:
    """What ``-m marker`` selects: the items that carry the marker."""
    return {item["id"] for item in suite["items"] if marker in item["markers"]}


def test_every_marker_in_use_is_registered(suite: dict[str, Any]) -> None:
    """A misspelt marker would select nothing and warn once among many lines."""
    used = {name for item in suite["items"] for name in item["markers"]}
    assert used - set(suite["registered"]) == set()


def test_slow_is_exactly_the_parts_the_core_run_leaves_out(suite: dict[str, Any]) -> None:
    parts = set().union(*(selected(suite, part) for part in PARTS))
    assert selected(suite, "slow") == parts
    assert parts and len(parts) < len(suite["items"])


@pytest.mark.parametrize("marker", sorted(FOLDERS))
def test_a_folder_part_selects_its_folder_and_nothing_else(suite: dict[str, Any], marker: str) -> None:
    inside = {item["id"] for item in suite["items"] if item["path"].startswith(FOLDERS[marker])}
    assert inside, f"nothing collected in {FOLDERS[marker]}"
    assert selected(suite, marker) == inside


@pytest.mark.parametrize(("marker", "use"), [("kernel", "kernels"), ("ray", "ray")])
def test_a_part_selects_every_test_whose_module_uses_it(suite: dict[str, Any], marker: str, use: str) -> None:
    """kernel: the modules that drive kernels through tests/notebook/kernels.py; ray: the
    modules that start the scale layer's RayEngine (or import ray itself)."""
    using = {item["id"] for item in suite["items"] if item["module"] and suite["modules"][item["module"]][use]}
    assert selected(suite, marker) == using
    if marker == "kernel":
        assert using, "no test drives a kernel: the criterion no longer finds them"


def test_heavy_is_written_on_each_test(suite: dict[str, Any]) -> None:
    heavy = [item for item in suite["items"] if "heavy" in item["markers"]]
    assert heavy
    assert [item["id"] for item in heavy if "heavy" not in item["written"]] == []


def test_no_conftest_keeps_a_list_of_test_ids() -> None:
    test_id = re.compile(r"""["'][\w./-]*test_\w+\.py(?:::\w+)?["']""")
    conftests = [ROOT / "conftest.py", *ROOT.glob("notebooks/**/conftest.py"), *ROOT.glob("tests/**/conftest.py")]
    found = {str(path.relative_to(ROOT)): test_id.findall(path.read_text()) for path in conftests}
    assert {path: ids for path, ids in found.items() if ids} == {}


_SPECULATES = '''
import pytest

import nbtoolsched as nts
from nbtoolsched import Agent, models
from nbtoolsched.speculation import agent_loop, speculate


async def speculation(tmp_path):
    (tmp_path / "a.txt").write_text("a\\n")
    sched = nts.Scheduler(nts.default_registry(), permissions=nts.Permissions(mode="acceptEdits", cwd=tmp_path), cwd=tmp_path)
    model = models.ScriptedModel([[models.text("done")]])
    loop = agent_loop(lambda s, messages, turns: Agent(model, s, messages=messages, max_turns=turns))
    spec = await speculate("look", loop, scheduler=sched)
    await spec.reject()
    if spec.overlay_kind != "kernel":
        pytest.skip(spec.overlay_note)


async def test_unmarked(tmp_path):
    await speculation(tmp_path)


@pytest.mark.kernel_overlay
async def test_marked(tmp_path):
    await speculation(tmp_path)
'''


def test_a_speculation_in_the_kernel_overlay_must_be_marked(pytester: pytest.Pytester) -> None:
    """conftest.py fails a test that ran a speculation in the kernel overlay unmarked, so
    ``-m kernel_overlay`` selects every such test wherever it is filed."""
    if not nbtoolsched.sandbox.availability().ok:
        pytest.skip("the OS sandbox cannot start here, so no speculation runs in the kernel overlay")
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    pytester.makeini("[pytest]\nasyncio_mode = auto\nmarkers =\n    kernel_overlay: runs in the kernel overlay\n")
    pytester.makepyfile(test_speculates=_SPECULATES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    if outcomes.get("skipped"):
        pytest.skip(f"the kernel overlay did not start: {result.stdout.str()[-500:]}")
    assert (outcomes.get("passed"), outcomes.get("errors")) == (2, 1), result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_unmarked*", "*mark it @pytest.mark.kernel_overlay*"])
