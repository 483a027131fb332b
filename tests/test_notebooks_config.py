"""The teaching notebooks are stored in a state nbval can check, and check honestly.

nbval itself runs them (``pytest --nbval notebooks``); these fast checks guard what nbval
cannot see: that every chapter exists with stored outputs, that no compared text hides
behind NBVAL_IGNORE_OUTPUT, that each chapter ends with exercises and worked answers, and
that the sanitizers replace what varies and nothing more.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = [f"{n:02d}" for n in range(16)]
PATHS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _code_cells(path: Path) -> list[nbformat.NotebookNode]:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _ignored(cell: nbformat.NotebookNode) -> bool:
    return any(line.strip().lstrip("#").strip() == "NBVAL_IGNORE_OUTPUT" for line in cell.source.splitlines())


def _live_view(cell: nbformat.NotebookNode) -> bool:
    """A cell tagged to keep its record out of nbval's comparison (a %%toolcall or %%agent cell)."""
    return "nbval-ignore-output" in cell.metadata.get("tags", [])


def test_every_chapter_has_a_notebook() -> None:
    assert [p.name[:2] for p in PATHS] == CHAPTERS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_notebook_is_valid_and_fully_executed_without_errors(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in _code_cells(path):
        assert cell.execution_count is not None, f"not executed, nothing for nbval to compare:\n{cell.source[:200]}"
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"stored error output in:\n{cell.source[:200]}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_ignored_outputs_are_only_pictures(path: Path) -> None:
    """A cell whose output is not compared may only show an (SVG) picture, never text."""
    for cell in filter(_ignored, _code_cells(path)):
        assert cell.outputs, f"an ignored cell with no output:\n{cell.source[:200]}"
        for output in cell.outputs:
            assert output.output_type in ("display_data", "execute_result"), f"ignored text output in:\n{cell.source[:200]}"
            assert "image/svg+xml" in output.data, f"ignored non-picture output in:\n{cell.source[:200]}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_live_views_are_saved_as_true_records(path: Path) -> None:
    """A %%toolcall or %%agent cell returns before its run has done anything, and its output
    becomes the run's final record when the run ends (later, in another cell). nbval sees
    only the first, live state, so these cells are tagged ``nbval-ignore-output``; what is
    saved must then be the finished record, never a live state."""
    for cell in _code_cells(path):
        magic = cell.source.startswith(("%%toolcall", "%%agent")) and "--wait" not in cell.source.splitlines()[0]
        assert _live_view(cell) == magic, f"tag nbval-ignore-output on exactly the %%toolcall/%%agent cells:\n{cell.source[:200]}"
        if not magic:
            continue
        records = [o for o in cell.outputs if o.output_type == "display_data" and 'class="nts-record' in "".join(o.data.get("text/html", ""))]
        assert len(records) == 1 and len(cell.outputs) == 1, f"not saved as one finished record:\n{cell.source[:200]}"
        text = "".join(records[0].data["text/plain"])
        live = re.search(r"^\S+ #?\w+: (waiting|running)|\[b\d+\] (queued|executing|waiting|asking)", text, re.M)
        assert live is None, f"a live state was saved ({live.group(0) if live else ''}):\n{cell.source[:200]}"


EXERCISE = re.compile(r"^#+ Exercise\b", re.M)


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.metadata.get("tags", []))


def _folded(cell: nbformat.NotebookNode) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_chapter_starts_with_a_knobs_cell(path: Path) -> None:
    first = next((c for c in _code_cells(path) if c.source.startswith("# Knobs:")), None)
    assert first is not None, "no code cell starting with '# Knobs:'"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_exercises_follow_their_sections_with_answers_out_of_sight(path: Path) -> None:
    """Exercises sit after the section they practise, not in one block at the end; every
    answer comes after its exercise and is folded (a ``solution`` code cell with its source
    hidden, a written answer in a ``<details>`` block in a hidden markdown cell)."""
    cells = nbformat.read(path, as_version=4).cells
    exercises = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and EXERCISE.search(c.source)]
    assert exercises, "no '### Exercise' heading"
    sections = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and re.search(r"^## ", c.source, re.M)]
    if len(sections) > 2:  # exercises are spread over the sections, not all after the last one
        assert exercises[0] < sections[-1], "every exercise is after the last section: put each after its section"
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and "solution" in _tags(cell):
            assert _folded(cell), f"a solution cell whose source is not folded:\n{cell.source[:200]}"
            assert cell.source.startswith("# Solution"), f"a solution cell not headed '# Solution':\n{cell.source[:200]}"
            assert any(e < i for e in exercises), f"a solution before any exercise:\n{cell.source[:200]}"
        if cell.cell_type == "markdown" and "<details>" in cell.source and re.search(r"<summary>[^<]*(Answer|Solution)", cell.source):
            assert _folded(cell), f"a written answer whose cell is not folded:\n{cell.source[:200]}"
        if cell.cell_type == "markdown":
            assert not re.search(r"^#+ (Worked answers?|Solutions)\b", cell.source, re.M), \
                "a Solutions section at the end: fold each answer after its exercise instead"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_exercise_stubs_are_left_for_the_learner(path: Path) -> None:
    """A stub the learner fills is stored unfilled (it raises NotImplementedError), and its
    check says so in the stored output rather than failing the notebook."""
    cells = _code_cells(path)
    for i, cell in enumerate(cells):
        if "exercise" not in _tags(cell):
            continue
        assert "NotImplementedError" in cell.source, f"an exercise stub that is already solved:\n{cell.source[:200]}"
        later = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                        for c in cells[i + 1:i + 3] for o in c.outputs)
        assert "not written yet" in later, f"no check after the stub says it is not written yet:\n{cell.source[:200]}"


def test_notebooks_read_nothing_outside_their_folder() -> None:
    """A reader with only the notebooks folder (and the installed package) can run them all."""
    for path in PATHS:
        for cell in _code_cells(path):
            assert not re.search(r"""["'/]\.\./|\bparents?\[\d\]""", cell.source), \
                f"{path.name} reads outside the notebooks folder:\n{cell.source[:200]}"
        for cell in nbformat.read(path, as_version=4).cells:  # nor shows a picture from outside it
            assert cell.cell_type != "markdown" or not re.search(r"\]\((\.\./|/)", cell.source), \
                f"{path.name} shows a file outside the notebooks folder:\n{cell.source[:200]}"


def _sanitizers() -> list[tuple[re.Pattern[str], str]]:
    parser = configparser.ConfigParser()
    parser.read(NOTEBOOKS / "sanitize.cfg")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _sanitize(text: str) -> str:
    for regex, replacement in _sanitizers():
        text = regex.sub(replacement, text)
    return text


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("read /tmp/nbtoolsched-nb-a1_b2c3d/notes.md now", "read <TMP>/notes.md now"),
        ("took 12 ms, then 1.5 s", "took <DURATION>, then <DURATION>"),
        ("<Thing at 0x7f3a2b1c9d40>", "<Thing at 0x<ADDR>>"),
        ("session /tmp/nbtoolsched/0123456789ab/x", "session /tmp/nbtoolsched/<SESSION>/x"),
        ("nbtoolsched: 10 tools, mode default, approvals: allow", "nbtoolsched: 10 tools, mode default, approvals: <POLICY FROM THE ENVIRONMENT>"),
    ],
)
def test_sanitizers_replace_what_varies(raw: str, clean: str) -> None:
    assert _sanitize(raw) == clean


@pytest.mark.parametrize("kept", ["batch 12  toolu_01", "peak running = 3", "max_concurrency=10", "Exit code 1", "step 2/3"])
def test_sanitizers_leave_facts_alone(kept: str) -> None:
    assert _sanitize(kept) == kept


def _conftest() -> object:
    spec = importlib.util.spec_from_file_location("notebooks_conftest", NOTEBOOKS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config(**options: object) -> SimpleNamespace:
    base = dict(nbval=True, nbval_lax=False, nbval_sanitize_with=None, nbval_cell_timeout=2000, nbval_kernel_name=None,
                nbval_current_env=False)
    return SimpleNamespace(option=SimpleNamespace(**{**base, **options}))


def test_conftest_fills_in_missing_nbval_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY", "2")
    monkeypatch.delenv("NBTOOLSCHED_NOTEBOOKS_LIVE", raising=False)
    config = _config()
    _conftest().pytest_configure(config)  # type: ignore[attr-defined]
    assert Path(config.option.nbval_sanitize_with) == NOTEBOOKS / "sanitize.cfg"
    assert config.option.nbval_cell_timeout == 60 and config.option.nbval_current_env
    assert "ANTHROPIC_API_KEY" not in os.environ and "NBTOOLSCHED_MAX_TOOL_USE_CONCURRENCY" not in os.environ


def test_conftest_leaves_the_approval_policy_variable_to_the_notebooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The notebooks must pass with NBTOOLSCHED_APPROVAL set: nbval must not hide it from them."""
    monkeypatch.setenv("NBTOOLSCHED_APPROVAL", "allow")
    _conftest().pytest_configure(_config())  # type: ignore[attr-defined]
    assert os.environ["NBTOOLSCHED_APPROVAL"] == "allow"


def test_conftest_keeps_explicit_options_and_ignores_runs_without_nbval() -> None:
    explicit = _config(nbval_sanitize_with="mine.cfg", nbval_cell_timeout=5, nbval_kernel_name="py")
    _conftest().pytest_configure(explicit)  # type: ignore[attr-defined]
    assert (explicit.option.nbval_sanitize_with, explicit.option.nbval_cell_timeout) == ("mine.cfg", 5)
    assert not explicit.option.nbval_current_env
    off = _config(nbval=False)
    _conftest().pytest_configure(off)  # type: ignore[attr-defined]
    assert off.option.nbval_sanitize_with is None and off.option.nbval_cell_timeout == 2000


KERNEL_TAG = "needs-kernel-overlay"


def _cell_item(tags: list[str]) -> SimpleNamespace:
    return SimpleNamespace(options={"check": True}, cell=SimpleNamespace(metadata={"tags": tags}))


@pytest.mark.parametrize("missing", [None, "overlayfs cannot be mounted here (test)"])
def test_conftest_compares_kernel_overlay_cells_only_where_the_overlay_starts(monkeypatch: pytest.MonkeyPatch,
                                                                            missing: str | None) -> None:
    module = _conftest()
    monkeypatch.setattr(module, "kernel_overlay_missing", lambda: missing)
    tagged, plain, live = _cell_item([KERNEL_TAG]), _cell_item([]), _cell_item(["nbval-ignore-output"])
    module.pytest_collection_modifyitems(SimpleNamespace(), [tagged, plain, live])  # type: ignore[attr-defined]
    assert tagged.options["check"] is (missing is None)
    assert plain.options["check"] and live.options["check"]
    assert bool(module._UNCOMPARED) is (missing is not None)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_kernel_overlay_cells_are_saved_from_a_kernel_overlay_run(path: Path) -> None:
    """Their outputs are compared only where the overlay starts: they must be that run's."""
    fallbacks = ("so no kernel overlay", "path-rewriting overlay is used", "overlay: paths")
    for cell in _code_cells(path):
        if KERNEL_TAG not in cell.metadata.get("tags", []):
            continue
        text = "".join(o.get("text", "") + "".join(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
        assert not any(f in text for f in fallbacks), f"saved from a run without the kernel overlay:\n{cell.source[:200]}"
