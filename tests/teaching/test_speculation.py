"""The checker of chapter 08 (``teaching.speculation``): a wrong gate is named, the right one passes.

The reference rule (Claude Code's ``canUseTool`` for a speculation) is also checked
against nbtoolsched's ``SpeculationGate``: equal on every case but the ones where
nbtoolsched is stricter on purpose, or reads the path keys in another order, each named.
"""

from __future__ import annotations

import copy
import os
import posixpath
from pathlib import Path
from typing import Any

import pytest

from teaching import speculation
from teaching.speculation import CWD, OVERLAY, check_gate, gate_cases, path_key, reference_gate


def unwritten(*args: Any) -> Any:
    raise NotImplementedError


def file_path_first(tool: str, data: dict[str, Any], edits_auto: bool, written: set[str]) -> tuple[str, Any]:
    """Wrong: reads `file_path` before `path` (the order a reader might guess)."""
    present = [k for k in ("notebook_path", "file_path", "path") if k in data]
    if not present or present[0] == path_key(data):
        return reference_gate(tool, data, edits_auto, written)
    first = present[0]
    hidden = {k: v for k, v in data.items() if k not in ("notebook_path", "path") or k == first}
    got = reference_gate(tool, hidden, edits_auto, written)
    return ("overlay", {**data, first: got[1][first]}) if got[0] == "overlay" else got


def prefix_inside(tool: str, data: dict[str, Any], edits_auto: bool, written: set[str]) -> tuple[str, Any]:
    """Wrong: 'inside cwd' tested as a string prefix, so /home/you/project-old is inside."""
    key = path_key(data)
    path = data.get(key)
    if (tool in speculation.WRITE_TOOLS and edits_auto and path and path.startswith(CWD)
            and not posixpath.relpath(path, CWD).startswith("..")) or not (path and path.startswith(CWD)):
        return reference_gate(tool, data, edits_auto, written)
    rel = path[len(CWD):].lstrip("/")
    if tool in speculation.WRITE_TOOLS and edits_auto:
        written.add(rel)
        return ("overlay", {**data, key: posixpath.join(OVERLAY, rel)})
    return reference_gate(tool, data, edits_auto, written)


def forgets_written(tool: str, data: dict[str, Any], edits_auto: bool, written: set[str]) -> tuple[str, Any]:
    """Wrong: rewrites the write but never records it, so a later Read reads the real file."""
    return reference_gate(tool, data, edits_auto, set(written))


def outside_is_a_boundary(tool: str, data: dict[str, Any], edits_auto: bool, written: set[str]) -> tuple[str, Any]:
    """Wrong for Claude Code (nbtoolsched's own stricter rule): outside cwd stops the run."""
    got = reference_gate(tool, data, edits_auto, written)
    key = path_key(data)
    path = data.get(key)
    outside = bool(path) and posixpath.relpath(path, CWD).startswith("..")
    if outside and (tool in speculation.SAFE_READ_ONLY_TOOLS or (tool in speculation.WRITE_TOOLS and edits_auto)):
        return ("boundary", "outside_cwd")
    return got


def test_gate_wrong_key_order_is_named() -> None:
    verdict = check_gate(file_path_first)
    assert not verdict.ok
    assert "the path is read from `path`" in str(verdict) and "`file_path` is not looked at" in str(verdict)


def test_gate_prefix_test_is_named() -> None:
    text = str(check_gate(prefix_inside))
    assert "/home/you/project-old/app.py is outside cwd" in text


def test_gate_forgetting_written_is_named() -> None:
    text = str(check_gate(forgets_written))
    assert "written should hold" in text and "overlay copy" in text


def test_gate_nbtoolsched_stricter_rule_is_named_as_claude_codes_difference() -> None:
    text = str(check_gate(outside_is_a_boundary))
    assert "a read there runs as is" in text or "a write there is denied and the run goes on" in text


def test_gate_other_wrong_answers_are_named() -> None:
    def everything_overlay(tool: str, data: dict[str, Any], edits_auto: bool, written: set[str]) -> Any:
        return ("boundary", "bash") if tool == "Bash" else ("as_is", None)

    text = str(check_gate(everything_overlay))
    assert "edit boundary" in text or "denied_tool" in text
    assert "your function gave" in str(check_gate(lambda *a: "allow"))


def test_gate_right_answer_passes() -> None:
    verdict = check_gate(reference_gate)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ overlay gate: all 160 cases agree")


def test_gate_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_gate(unwritten))


def test_cases_cover_every_decision() -> None:
    seen = {(d[0], d[1] if d[0] == "boundary" else None)
            for t, i, e, w in gate_cases() for d in [reference_gate(t, copy.deepcopy(i), e, set(w))]}
    assert seen == {("overlay", None), ("as_is", None), ("deny", None), ("boundary", "edit"), ("boundary", "bash"),
                    ("boundary", "denied_tool")}


# -- the rule against nbtoolsched's SpeculationGate --------------------------------------------------
def _difference(tool: str, data: dict[str, Any], edits_auto: bool) -> str | None:
    """Where nbtoolsched decides otherwise on purpose (or by its key order), else None."""
    if tool in speculation.WRITE_TOOLS and not edits_auto:
        return None
    if tool not in speculation.WRITE_TOOLS | speculation.SAFE_READ_ONLY_TOOLS:
        return None
    present = [k for k in ("notebook_path", "path", "file_path") if k in data]
    if "path" in present and "file_path" in present:
        return "key order"  # nbtoolsched: notebook_path, file_path, path; and an empty value is skipped
    path = data.get(path_key(data))
    if path and posixpath.relpath(path, CWD).startswith(".."):
        return "outside"  # nbtoolsched stops the run (outside_cwd); `..draft.md` is inside for it
    return None


def _real(value: Any, project: str) -> Any:
    if isinstance(value, str) and (value == CWD or value.startswith(CWD)):
        return project + value[len(CWD):]
    return value


class _Named:
    """A tool nbtoolsched does not ship, by name only (read-only when Claude Code's is)."""

    def __new__(cls, name: str, reads: bool) -> Any:
        import nbtoolsched as nts

        class Named(nts.Tool):
            def is_read_only(self, input: Any) -> bool:
                return reads

        Named.name = name
        return Named()


async def _library_decision(tool: str, data: dict[str, Any], edits_auto: bool, written: frozenset[str],
                            space: Path) -> tuple[str, Any]:
    import nbtoolsched as nts
    from nbtoolsched.permissions._base import PermissionRequest
    from nbtoolsched.speculation import Overlay
    from nbtoolsched.speculation._gate import SpeculationGate
    from nbtoolsched.tools import default_registry

    project, session = space / "project", space / f"session{len(os.listdir(space))}"
    session.mkdir()
    overlay = Overlay(str(project), str(session))
    gate = SpeculationGate(overlay, nts.AbortSignal())
    registry = default_registry()

    def request(name: str, given: dict[str, Any]) -> PermissionRequest:
        found = registry.get(name) or _Named(name, name in speculation.SAFE_READ_ONLY_TOOLS)
        real = {k: _real(v, str(project)) for k, v in given.items()}
        try:
            parsed = found.input_model.model_validate(real)
        except ValueError:
            parsed = found.input_model.model_construct(**real)
        return PermissionRequest(found, real, parsed, nts.ToolContext(str(project)), "toolu_x")

    try:
        for rel in sorted(written):
            assert (await gate.decide(request("Write", {"file_path": f"{CWD}/{rel}", "content": ""}))).allowed
        gate.allow_edits = edits_auto
        decision = await gate.decide(request(tool, data))
        if not decision.allowed:
            return ("boundary", gate.boundary.kind) if gate.boundary is not None else ("deny", None)
        updated = decision.updated_input or {}
        for key in ("notebook_path", "path", "file_path"):  # whichever key the gate rewrote
            rel = posixpath.relpath(data[key], CWD) if isinstance(data.get(key), str) and data[key] else None
            if rel is not None and updated.get(key) == overlay.overlay_path(rel):
                return ("overlay", {**data, key: posixpath.join(OVERLAY, rel)})
        return ("as_is", None)
    finally:
        overlay.discard()


@pytest.fixture
def space(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for rel in speculation.FILES:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("'debug': False\n")
    return tmp_path


async def test_reference_matches_speculation_gate(space: Path) -> None:
    compared = 0
    for tool, data, edits_auto, written in gate_cases():
        if _difference(tool, data, edits_auto) is not None:
            continue
        want = reference_gate(tool, copy.deepcopy(data), edits_auto, set(written))
        got = await _library_decision(tool, data, edits_auto, written, space)
        assert got == want, speculation.describe_case(tool, data, edits_auto, written)
        compared += 1
    assert compared > 120


async def test_the_differences_are_the_ones_the_notebook_names(space: Path) -> None:
    """Outside cwd nbtoolsched stops the run; with both `path` and `file_path` it reads `file_path`."""
    seen = set()
    for tool, data, edits_auto, written in gate_cases():
        kind = _difference(tool, data, edits_auto)
        if kind is None:
            continue
        seen.add(kind)
        got = await _library_decision(tool, data, edits_auto, written, space)
        want = reference_gate(tool, copy.deepcopy(data), edits_auto, set(written))
        if kind == "outside" and data.get(path_key(data), "").startswith(CWD + "/.."):
            assert got[0] == "overlay"  # `..draft.md` is a name inside cwd for nbtoolsched
        elif kind == "outside":
            assert got == ("boundary", "outside_cwd") and want in (("as_is", None), ("deny", None))
        else:
            assert got != want
    assert seen == {"outside", "key order"}


def test_read_only_helper_follows_the_library() -> None:
    assert speculation.read_only("ls app") and speculation.read_only("cat README.md")
    assert not speculation.read_only("rm -rf tests") and not speculation.read_only("echo hi > out.txt")
    assert not speculation.read_only("")
