"""ToolSearch: load the schemas of deferred tools, by exact name or by keywords.

Deferred tools are announced by name only. A ToolSearch result is a list of
``tool_reference`` blocks; once one is in the conversation, the registry sends that
tool's full schema (``registry.api_tools(discovered_tools(messages))``).

Scoring mirrors Claude Code: name parts weigh most (MCP names a little more), then
the search hint, then the description; ``+term`` must match somewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from .._messages import TextBlock, ToolReferenceBlock
from .._tool._base import ReadOnlyTool, Tool, ToolOutput, Validation
from .._tool._context import ToolContext

__all__ = ["ToolSearchTool", "ToolSearchInput", "search_tools", "select_tools", "name_parts"]

_SELECT = re.compile(r"^select:(.+)$", re.IGNORECASE | re.DOTALL)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class ToolSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        description='"select:Name,Other" loads those tools; otherwise keywords, with "+word" for words that must match'
    )
    max_results: int = Field(default=5, ge=1, le=100, description="How many tools a keyword search returns at most")


class ToolSearchTool(ReadOnlyTool[ToolSearchInput]):
    name = "ToolSearch"
    description = (
        "Loads the full schema of deferred tools so they can be called. Deferred tools are listed by name "
        "only; until loaded they have no parameter schema and cannot be called.\n"
        "Query forms:\n"
        '- "select:Read,NotebookEdit" loads these exact tools\n'
        '- "notebook jupyter" keyword search, best max_results matches\n'
        '- "+git commit" requires "git" to match, ranks by the other words\n'
        "Each match comes back as a tool reference; its schema is available from the next turn on."
    )
    search_hint = "find load deferred tool schemas"
    input_model = ToolSearchInput
    always_load = True  # the way to load the others can never itself be deferred

    async def validate_input(self, input: ToolSearchInput, ctx: ToolContext) -> Validation:
        if not input.query.strip():
            return Validation.fail('query is empty: pass keywords, or "select:" followed by tool names.')
        if ctx.registry is None:
            return Validation.fail("ToolSearch needs a tool registry in its context and has none.")
        return Validation.OK

    async def call(self, input: ToolSearchInput, ctx: ToolContext) -> ToolOutput:
        registry = ctx.registry
        if registry is None:  # validate_input refuses such a context; a direct call gets the same answer
            return ToolOutput("ToolSearch needs a tool registry in its context and has none.", is_error=True)
        everything = registry.active()
        deferred = [t for t in everything if registry.is_deferred(t)]
        selected = _SELECT.match(input.query.strip())
        if selected:
            matches = select_tools(selected.group(1).split(","), deferred, everything)
        else:
            matches = search_tools(input.query, deferred, everything, input.max_results)
        data = {"matches": matches, "query": input.query, "total_deferred_tools": len(deferred)}
        return ToolOutput(data, content=_content(matches, input.query, len(deferred)))


def _content(matches: list[str], query: str, total: int) -> list[Any]:
    if matches:
        return [ToolReferenceBlock(tool_name=name) for name in matches]
    if total == 0:
        return [TextBlock("There are no deferred tools to load: every available tool is already loaded.")]
    return [TextBlock(
        f"No deferred tool matched {query!r} (searched {total}). Try other keywords, fewer required (+) "
        'words, or "select:" with an exact tool name.'
    )]


# -- select -------------------------------------------------------------------------------


def _find(name: str, tools: Iterable[Tool]) -> Tool | None:
    for tool in tools:
        if tool.name == name or name in tool.aliases:
            return tool
    return None


def select_tools(names: Iterable[str], deferred: list[Tool], everything: list[Tool]) -> list[str]:
    """Exact names (or aliases), deferred ones first; unknown names are skipped, duplicates dropped."""
    found: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        tool = _find(name, deferred) or _find(name, everything)
        if tool is not None and tool.name not in found:
            found.append(tool.name)
    return found


# -- keyword search ----------------------------------------------------------------------------


def name_parts(name: str) -> list[str]:
    """``mcp__github__create_issue`` -> [github, create, issue]; ``NotebookEdit`` -> [notebook, edit]."""
    if name.startswith("mcp__"):
        return [p for p in re.split(r"__|_", name[5:].lower()) if p]
    parts: list[str] = []
    for chunk in re.split(r"[_\-\s]+", name):
        parts.extend(m.lower() for m in _CAMEL.findall(chunk))
    return parts


@dataclass(slots=True)
class _Entry:
    tool: Tool
    parts: list[str]
    spaced: str
    hint: str
    description: str

    @classmethod
    def of(cls, tool: Tool) -> "_Entry":
        parts = name_parts(tool.name)
        try:
            description = tool.prompt().lower()
        except Exception:
            description = ""
        return cls(tool, parts, " ".join(parts), (tool.search_hint or "").lower(), description)

    def mentions(self, term: str) -> bool:
        return (
            any(term == p or term in p for p in self.parts)
            or _word(term, self.description)
            or _word(term, self.hint)
        )

    def score(self, term: str) -> int:
        mcp = self.tool.is_mcp
        points = 0
        if term in self.parts:
            points += 12 if mcp else 10
        elif any(term in p for p in self.parts):
            points += 6 if mcp else 5
        if points == 0 and term in self.spaced:
            points += 3
        if _word(term, self.hint):
            points += 4
        if _word(term, self.description):
            points += 2
        return points


def _word(term: str, text: str) -> bool:
    return bool(text) and re.search(rf"\b{re.escape(term)}\b", text) is not None


def search_tools(query: str, deferred: list[Tool], everything: list[Tool], max_results: int = 5) -> list[str]:
    """Tool names for a keyword query, best first (ties keep the deferred list's order)."""
    q = query.strip().lower()
    if not q:
        return []
    for pool in (deferred, everything):
        exact = next((t.name for t in pool if t.name.lower() == q), None)
        if exact is not None:
            return [exact]
    if q.startswith("mcp__") and len(q) > 5:
        prefixed = [t.name for t in deferred if t.name.lower().startswith(q)][:max_results]
        if prefixed:
            return prefixed
    words = q.split()
    required = [w[1:] for w in words if w.startswith("+") and len(w) > 1]
    optional = [w for w in words if not w.startswith("+")]
    terms = required + optional if required else words
    entries = [_Entry.of(t) for t in deferred]
    if required:
        entries = [e for e in entries if all(e.mentions(term) for term in required)]
    scored = [(sum(e.score(term) for term in terms), e.tool.name) for e in entries]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])  # stable: ties keep order
    return [name for _, name in ranked[:max_results]]
