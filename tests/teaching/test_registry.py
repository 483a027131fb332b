"""The checker of chapter 01 (``teaching.registry``): a wrong answer is named, the right one passes.

Its reference rule is also checked against the library's own ToolSearch scoring.
"""

from __future__ import annotations

import random
from typing import Any

from teaching import flow_diagram
from teaching.registry import (TOOLS, check_tool_search_score, claude_code_name_parts, fitted, random_case,
                               reference_score, tool_entry)


def unwritten(terms: list[str], tool: dict[str, Any]) -> int:
    raise NotImplementedError


def name_only(terms: list[str], tool: dict[str, Any]) -> int:
    """Wrong: name parts only, the hint and description never looked at."""
    score = 0
    for term in terms:
        if term in tool["parts"]:
            score += 12 if tool["is_mcp"] else 10
        elif any(term in part for part in tool["parts"]):
            score += 6 if tool["is_mcp"] else 5
    return score


def case_sensitive(terms: list[str], tool: dict[str, Any]) -> int:
    """Wrong: the hint and description matched as written, not lowercased."""
    import re

    def word(term: str, text: str) -> bool:
        return re.search(rf"\b{re.escape(term)}\b", text) is not None

    return name_only(terms, tool) + sum(4 * word(t, tool["search_hint"]) + 2 * word(t, tool["description"]) for t in terms)


def substring_everywhere(terms: list[str], tool: dict[str, Any]) -> int:
    """Wrong: 'in' instead of a word boundary for the hint and description."""
    return name_only(terms, tool) + sum(4 * (t in tool["search_hint"].lower()) + 2 * (t in tool["description"].lower())
                                        for t in terms)


def test_tool_search_score_wrong_answers_are_named() -> None:
    verdict = check_tool_search_score(name_only)
    assert not verdict.ok
    text = str(verdict)
    assert "Claude Code's score is" in text and "description +2" in text and "you gave" in text
    assert not check_tool_search_score(case_sensitive).ok
    assert not check_tool_search_score(substring_everywhere).ok


def test_tool_search_score_right_answer_passes() -> None:
    verdict = check_tool_search_score(reference_score)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ tool_search_score: all 200 cases agree")


def test_tool_search_score_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_tool_search_score(unwritten))


def test_tool_search_score_a_non_number_is_named() -> None:
    assert "it should give a number" in str(check_tool_search_score(lambda terms, tool: "ten"))


def test_tool_search_score_the_right_value_as_a_float_is_told_to_be_an_int() -> None:
    verdict = check_tool_search_score(lambda terms, tool: float(reference_score(terms, tool)))
    text = str(verdict)
    assert not verdict.ok and len(verdict.problems) == verdict.cases  # the score is an int
    assert "you gave the float" in text and "return the int" in text
    assert "you gave 0; Claude Code's score is 0" not in text


def _library_tool(entry: dict[str, Any]) -> Any:
    import nbtoolsched as nts

    class Made(nts.Tool):
        name = entry["name"]
        search_hint = entry["search_hint"]
        description = entry["description"]
        is_mcp = entry["is_mcp"]
        should_defer = True

    return Made()


def test_name_parts_match_the_library_on_the_cases() -> None:
    from nbtoolsched.tools._toolsearch import name_parts

    for entry in TOOLS:
        parts, full = claude_code_name_parts(entry["name"])
        assert name_parts(entry["name"]) == parts, entry["name"]
        assert full == " ".join(parts)


def test_reference_score_matches_the_library_scoring() -> None:
    from nbtoolsched.tools._toolsearch import _Entry

    rng = random.Random(11)
    for _ in range(500):
        terms, entry = random_case(rng)
        library = _Entry.of(_library_tool(entry))
        assert sum(library.score(term) for term in terms) == reference_score(terms, entry), (terms, entry["name"])


def test_reference_score_ranks_as_search_tools_does() -> None:
    """Sorting the deferred tools by the reference score (stable, scores above 0) is ToolSearch's answer."""
    from nbtoolsched.tools._toolsearch import search_tools

    tools = [_library_tool(e) for e in TOOLS]
    rng = random.Random(5)
    for _ in range(200):
        terms = [random_case(rng)[0][0] for _ in range(rng.randint(1, 3))]
        query = " ".join(terms)
        if any(t.lower() == query for t in [e["name"].lower() for e in TOOLS]) or query.startswith("mcp__"):
            continue
        scored = [(reference_score(terms, e), e["name"]) for e in TOOLS]
        want = [name for s, name in sorted((p for p in scored if p[0] > 0), key=lambda p: -p[0])][:5]
        assert search_tools(query, tools, tools, 5) == want, query


def test_fitted_widens_a_clipped_title_only() -> None:
    short = flow_diagram(["a", "b"], title="ok")
    assert fitted(short) is short
    long = flow_diagram(["a", "b"], title="a title much longer than two small boxes can hold, by far")
    wide = fitted(long)
    width = int(wide.svg.split('width="', 1)[1].split('"', 1)[0])
    assert width >= len(long.title) * 8 and wide.title == long.title
    assert tool_entry("mcp__git__git_log")["parts"] == ["git", "git", "log"]
