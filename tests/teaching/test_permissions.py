"""The checker of chapter 03 (``teaching.permissions``): a wrong answer is named, the right one passes.

Its reference rule is Claude Code's order; ``library_precedence`` is nbtoolsched's, checked
against ``Permissions.explain`` on real built-in tools, and the two differ only where the
chapter says nbtoolsched is stricter on purpose.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

from teaching import permissions as tp
from teaching.permissions import Facts, check_precedence, library_precedence, reference_precedence


def unwritten(facts: Facts) -> Any:
    raise NotImplementedError


def old_picture(f: Facts) -> tuple[str, str]:
    """Wrong (the chapter's old picture): deny rules, the tool's check, then ask rules, mode, allow."""
    if "deny" in f.tool_wide:
        return ("deny", "tool-wide deny")
    if "deny" in f.content:
        return ("deny", "content deny")
    if f.own == "safety":
        return ("ask", "safety check")
    if "ask" in f.tool_wide:
        return ("ask", "tool-wide ask")
    if "ask" in f.content:
        return ("ask", "content ask")
    if f.mode == "bypassPermissions":
        return ("allow", "bypass mode")
    if "allow" in f.tool_wide:
        return ("allow", "tool-wide allow")
    if "allow" in f.content or f.own == "allow" or (f.own == "edit" and f.mode == "acceptEdits"):
        return ("allow", "tool's check allows")
    return ("deny", "dontAsk") if f.mode == "dontAsk" else ("ask", "nothing allowed it")


def bypass_wins(f: Facts) -> tuple[str, str]:
    """Wrong: bypass mode first, as if it skipped every rule."""
    return ("allow", "bypass mode") if f.mode == "bypassPermissions" else reference_precedence(f)


def test_precedence_wrong_answers_are_named() -> None:
    verdict = check_precedence(old_picture)
    assert str(verdict).startswith("✗ precedence:")
    problems = " ".join(verdict.problems)
    assert "tool-wide rules, deny then ask, come before the tool's own check" in problems
    assert "acceptEdits would" in problems and "you gave ask by 'content ask'" in problems
    bypass = " ".join(check_precedence(bypass_wins).problems)
    assert "hold even in bypass mode" in bypass and "Claude Code gives ask" in bypass


def test_precedence_names_an_ask_before_a_content_deny() -> None:
    verdict = check_precedence(library_precedence)  # nbtoolsched's order is not Claude Code's
    assert not verdict.ok
    assert any("Claude Code gives ask by 'tool-wide ask'" in p for p in verdict.problems)


def test_precedence_right_answer_passes() -> None:
    verdict = check_precedence(reference_precedence)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ precedence: all 250 cases agree with Claude Code's order")


def test_precedence_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_precedence(unwritten))


def test_precedence_cases_reach_every_step() -> None:
    rng = random.Random(tp.SEED)
    steps = {reference_precedence(tp.random_facts(rng))[1] for _ in range(250)}
    assert steps == set(tp.STEPS)


def _every_facts() -> list[Facts]:
    behaviors = [frozenset(c) for n in range(4) for c in itertools.combinations(("deny", "ask", "allow"), n)]
    return [Facts(tool, own, mode, tw, content)
            for (tool, own), mode, tw, content in itertools.product(tp.TEMPLATES, tp.MODES, behaviors, behaviors)]


def test_the_two_rules_differ_only_where_the_chapter_says() -> None:
    for f in _every_facts():
        same = reference_precedence(f)[0] == library_precedence(f)[0]
        assert same or tp.differences(f), f"{f}: Claude Code {reference_precedence(f)}, nbtoolsched {library_precedence(f)}"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")  # judged by the command-line analysis alone
    project, outside = tmp_path / "proj", tmp_path / "outside"
    for folder in ("src", "build", ".git"):
        (project / folder).mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    outside.mkdir()
    (outside / "shared.txt").write_text("x\n")
    return project.resolve(), outside.resolve()


def test_library_rule_matches_permissions_on_real_built_in_tools(folders: tuple[Path, Path]) -> None:
    from nbtoolsched.tools import default_registry

    project, outside = folders
    pool = default_registry().full_pool
    cases = _every_facts()
    random.Random(1).shuffle(cases)
    for f in cases[:900]:
        (row,) = tp.library_rows([f], project, outside, pool)
        why = row[2]
        behavior, step = library_precedence(f)
        assert why.behavior == behavior, f"{f}: explain gave {why.behavior} ({why.steps}); the library rule {behavior} by {step}"
        _, _, _, names = tp.real_call(f, project, outside)
        if step in names:  # a rule step: explain names that rule
            assert why.rule == names[step], f"{f}: explain named {why.rule}; the step {step} is {names[step]}"
