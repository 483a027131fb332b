"""Checker and helpers for chapters 00-02 (the registry, tool search, input validation).

* ``check_tool_search_score`` (chapter 01): the points ToolSearch gives one deferred tool for
  a keyword query, as Claude Code's ``searchToolsWithKeywords`` scores them (reference §7,
  ``tools/ToolSearchTool/ToolSearchTool.ts``): per term, an exact name part +10 (MCP +12),
  else a name part containing the term +5 (MCP +6), else the spaced name containing it +3
  while the tool's score is still 0; a word-boundary match in the search hint +4 and in
  the description +2. Hint and description are lowercased first.
* ``claude_code_name_parts``: Claude Code's ``parseToolName``: ``mcp__server__action`` loses
  its prefix and splits on ``__`` and ``_``; other names split where a lower-case letter
  meets an upper-case one, and on ``_``.
* ``fitted``: a picture made as wide as its title (the shared helpers size a picture by its
  boxes, and a long title would be clipped).

``reference_score`` is the rule the checker compares with; ``tests/teaching/test_registry.py``
checks it against the library's own scoring (``nbtoolsched.tools._toolsearch``).
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

from . import Picture
from .checks import Verdict, run_check

__all__ = [
    "claude_code_name_parts", "tool_entry", "reference_score", "score_breakdown", "check_tool_search_score",
    "random_case", "TOOLS", "fitted",
]

SEED = 1


# -- Claude Code's name parsing and scoring (reference §7) -------------------------------------
def claude_code_name_parts(name: str) -> tuple[list[str], str]:
    """``(parts, full)`` as Claude Code's ``parseToolName`` makes them."""
    if name.startswith("mcp__"):
        rest = name[len("mcp__"):].lower()
        parts = [p for chunk in rest.split("__") for p in chunk.split("_") if p]
        return parts, rest.replace("__", " ").replace("_", " ")
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
    parts = [p for p in spaced.split() if p]
    return parts, " ".join(parts)


def tool_entry(name: str, search_hint: str = "", description: str = "") -> dict[str, Any]:
    """A tool as the learner's scoring function receives it."""
    parts, full = claude_code_name_parts(name)
    return {"name": name, "is_mcp": name.startswith("mcp__"), "parts": parts, "full": full,
            "search_hint": search_hint, "description": description}


def _word(term: str, text: str) -> bool:
    # JavaScript's \b is ASCII-only; re.ASCII makes Python's the same
    return bool(text) and re.search(rf"\b{re.escape(term)}\b", text, re.ASCII) is not None


def score_breakdown(terms: list[str], tool: dict[str, Any]) -> list[tuple[str, list[tuple[str, int]]]]:
    """For each term, the reasons it scored and their points (Claude Code's order)."""
    hint = (tool.get("search_hint") or "").lower()
    description = (tool.get("description") or "").lower()
    mcp = bool(tool.get("is_mcp"))
    parts, full = tool["parts"], tool["full"]
    total = 0
    out: list[tuple[str, list[tuple[str, int]]]] = []
    for term in terms:
        why: list[tuple[str, int]] = []
        if term in parts:
            why.append(("name part", 12 if mcp else 10))
        elif any(term in part for part in parts):
            why.append(("inside a name part", 6 if mcp else 5))
        if term in full and total + sum(p for _, p in why) == 0:  # Claude Code tests the tool's running score
            why.append(("inside the spaced name", 3))
        if hint and _word(term, hint):
            why.append(("search hint", 4))
        if _word(term, description):
            why.append(("description", 2))
        total += sum(p for _, p in why)
        out.append((term, why))
    return out


def reference_score(terms: list[str], tool: dict[str, Any]) -> int:
    """The tool's score for the query's scoring terms (what ToolSearch sorts by)."""
    return sum(points for _, why in score_breakdown(terms, tool) for _, points in why)


def _explain(terms: list[str], tool: dict[str, Any]) -> str:
    bits = []
    for term, why in score_breakdown(terms, tool):
        bits.append(f"{term}: " + (", ".join(f"{reason} +{p}" for reason, p in why) if why else "0"))
    return "; ".join(bits)


# -- the cases ---------------------------------------------------------------------------------
TOOLS: list[dict[str, Any]] = [
    tool_entry("NotebookEdit", "edit Jupyter notebook cells", "Replace, insert or delete one cell in a Jupyter notebook (.ipynb file)."),
    tool_entry("WebFetch", "fetch a URL and read the page", "Fetches content from a URL and answers a prompt about it."),
    tool_entry("TodoWrite", "manage the session task checklist", "Create and manage a structured task list for the current coding session."),
    tool_entry("AskUserQuestion", "ask the user a multiple choice question", "Asks the user questions to gather preferences or decisions."),
    tool_entry("CronCreate", "schedule a recurring prompt", "Schedule a prompt to run later, once or on a cron schedule."),
    tool_entry("TaskStop", "stop a running background task", "Stops a running background task by its id."),
    tool_entry("EnterPlanMode", "switch to plan mode before coding", "Use it to design an approach and get it approved before writing code."),
    tool_entry("ListMcpResourcesTool", "", "List the resources that configured MCP servers offer."),
    tool_entry("mcp__github__create_issue", "", "Create a new issue in a GitHub repository."),
    tool_entry("mcp__github__list_pull_requests", "", "List the pull requests of a GitHub repository."),
    tool_entry("mcp__slack__send_message", "", "Send a message to a Slack channel."),
    tool_entry("mcp__git__git_log", "", "Shows the commit logs of a git repository."),
    tool_entry("jira_create_issue", "create a new issue in a jira project", "Create a new issue in a jira project."),
]

_JUNK = ["banana", "zzz", "deploy", "pdf", "mcp", "git", "issue", "task", "note", "pull", "web"]


def _vocabulary(tool: dict[str, Any]) -> list[str]:
    words = list(tool["parts"])
    words += [p[:k] for p in tool["parts"] for k in (3, 4) if len(p) > k]  # pieces of a part: "note", "pul"
    words += re.findall(r"[a-z]+", (tool["search_hint"] + " " + tool["description"]).lower())
    return words


def random_case(rng: random.Random) -> tuple[list[str], dict[str, Any]]:
    """One tool and 1-3 lowercase terms: its own words, words of other tools, junk."""
    tool = rng.choice(TOOLS)
    own, other = _vocabulary(tool), _vocabulary(rng.choice(TOOLS))
    terms = [rng.choice(rng.choice([own, own, other, _JUNK])) for _ in range(rng.randint(1, 3))]
    return terms, tool


def _shown(tool: dict[str, Any]) -> str:
    bits = [f"parts {tool['parts']}"]
    if tool["search_hint"]:
        bits.append(f"hint {tool['search_hint']!r}")
    bits.append(f"description {tool['description']!r}")
    return f"{tool['name']} ({'MCP, ' if tool['is_mcp'] else ''}{'; '.join(bits)})"


def check_tool_search_score(fn: Callable[[list[str], dict[str, Any]], Any], cases: int = 200) -> Verdict:
    """Compare ``fn(terms, tool)`` with Claude Code's keyword score on seeded random cases."""
    rng = random.Random(SEED)
    chosen = [random_case(rng) for _ in range(cases)]

    def problems(case: tuple[list[str], dict[str, Any]]) -> list[str]:
        terms, tool = case
        want = reference_score(terms, tool)
        got = fn(list(terms), dict(tool, parts=list(tool["parts"])))
        if isinstance(got, int) and not isinstance(got, bool) and got == want:
            return []
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return [f"terms {terms} on {_shown(tool)}: your function gave {got!r:.60}; it should give a number, {want}"]
        if isinstance(got, float) and got == want:  # the right value, of the wrong type
            return [f"terms {terms} on {_shown(tool)}: you gave the float {got!r}; the score is a whole number of "
                    f"points: return the int {want} (add ints, or wrap the total in int())"]
        return [f"terms {terms} on {_shown(tool)}: you gave {got!r}; Claude Code's score is {want} "
                f"({_explain(terms, tool)})"]

    return run_check("tool_search_score", chosen, problems, agree="agree with Claude Code's keyword score")


# -- pictures ------------------------------------------------------------------------------------
def fitted(picture: Picture, px_per_char: float = 8.4, margin: int = 24) -> Picture:
    """The same picture, widened when its bold 13 px title would not fit."""
    need = int(len(picture.title) * px_per_char) + margin
    match = re.search(r'<svg[^>]*\bwidth="(\d+)"', picture.svg)
    if match is None or need <= int(match.group(1)):
        return picture
    old = match.group(1)
    svg = picture.svg.replace(f'width="{old}"', f'width="{need}"', 2)  # the <svg> and its white background
    return Picture(svg, picture.title)
