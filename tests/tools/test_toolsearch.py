"""ToolSearch: select, keyword scoring, +required terms, and deferred schemas sent only once discovered."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import nbtoolsched as nts
from nbtoolsched.execution._prepare import discovered_tools
from nbtoolsched._messages import TextBlock, ToolReferenceBlock
from nbtoolsched._registry import ToolRegistry
from nbtoolsched._tool._base import Tool
from nbtoolsched.tools._bash import BashTool
from nbtoolsched.tools._toolsearch import ToolSearchTool, name_parts, search_tools


class _Input(BaseModel):
    text: str = ""


def make_tool(name: str, description: str, *, hint: str = "", mcp: bool = False, defer: bool = True) -> Tool:
    attrs = {"name": name, "description": description, "search_hint": hint, "input_model": _Input,
             "is_mcp": mcp, "should_defer": defer}
    return type(name.replace("__", "_") + "Tool", (Tool,), attrs)()


def deferred_tools() -> list[Tool]:
    return [
        make_tool("NotebookEdit", "Replace, insert or delete a cell in a Jupyter notebook.", hint="edit jupyter notebook cells"),
        make_tool("WebSearch", "Search the web and return result snippets.", hint="search the internet"),
        make_tool("TodoWrite", "Keep a structured task list for the session.", hint="plan tasks todo list"),
        make_tool("mcp__slack__send_message", "Send a message to a Slack channel.", mcp=True),
        make_tool("mcp__slack__list_channels", "List the channels of a Slack workspace.", mcp=True),
        make_tool("mcp__github__create_issue", "Open an issue in a GitHub repository.", mcp=True),
    ]


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([BashTool(), ToolSearchTool(), *deferred_tools()])


async def search(registry: ToolRegistry, query: str, max_results: int = 5, tmp_path: Any = None) -> nts.ToolResultBlock:
    sched = nts.Scheduler(registry, cwd=tmp_path)
    block = {"type": "tool_use", "id": "ts", "name": "ToolSearch", "input": {"query": query, "max_results": max_results}}
    [result] = await sched.run([block])
    return result


def names(result: nts.ToolResultBlock) -> list[str]:
    assert isinstance(result.content, list)
    return [b.tool_name for b in result.content if isinstance(b, ToolReferenceBlock)]


def test_name_parts() -> None:
    assert name_parts("NotebookEdit") == ["notebook", "edit"]
    assert name_parts("mcp__slack__send_message") == ["slack", "send", "message"]
    assert name_parts("HTTPServerTool") == ["http", "server", "tool"]
    assert name_parts("read_file2") == ["read", "file", "2"]


async def test_select_loads_exact_tools_in_order_without_duplicates(registry: ToolRegistry) -> None:
    result = await search(registry, "select:TodoWrite, NotebookEdit,TodoWrite,NoSuchTool")
    assert not result.is_error
    assert names(result) == ["TodoWrite", "NotebookEdit"]


async def test_select_of_a_loaded_tool_is_harmless(registry: ToolRegistry) -> None:
    assert names(await search(registry, "SELECT:Bash")) == ["Bash"]


async def test_keyword_search_ranks_name_matches_first(registry: ToolRegistry) -> None:
    assert names(await search(registry, "notebook jupyter"))[0] == "NotebookEdit"
    # a tie keeps the registry's order (built-ins, then MCP tools, by name)
    assert names(await search(registry, "slack"))[:2] == ["mcp__slack__list_channels", "mcp__slack__send_message"]


async def test_required_terms_filter(registry: ToolRegistry) -> None:
    found = names(await search(registry, "+slack send"))
    assert found[0] == "mcp__slack__send_message"
    assert set(found) <= {"mcp__slack__send_message", "mcp__slack__list_channels"}
    assert names(await search(registry, "+github message")) == ["mcp__github__create_issue"]


async def test_mcp_prefix_and_exact_name(registry: ToolRegistry) -> None:
    assert names(await search(registry, "mcp__slack")) == ["mcp__slack__list_channels", "mcp__slack__send_message"]
    assert names(await search(registry, "websearch")) == ["WebSearch"]


async def test_max_results_caps_the_answer(registry: ToolRegistry) -> None:
    assert len(names(await search(registry, "slack github notebook web todo", max_results=2))) == 2


async def test_no_match_gives_a_text_block(registry: ToolRegistry) -> None:
    result = await search(registry, "kubernetes")
    assert not result.is_error
    assert isinstance(result.content, list) and isinstance(result.content[0], TextBlock)
    assert "No deferred tool matched" in result.text


async def test_empty_query_is_refused(registry: ToolRegistry) -> None:
    result = await search(registry, "   ")
    assert result.is_error and "query is empty" in result.text


async def test_only_discovered_deferred_tools_are_sent_with_schemas(registry: ToolRegistry) -> None:
    before = {t["name"] for t in registry.api_tools(discovered_tools([]))}
    assert before == {"Bash", "ToolSearch"}
    result = await search(registry, "select:NotebookEdit,mcp__slack__send_message")
    messages = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "ts", "name": "ToolSearch", "input": {}}]},
        {"role": "user", "content": [result.to_dict()]},
    ]
    sent = {t["name"]: t for t in registry.api_tools(discovered_tools(messages))}
    assert set(sent) == {"Bash", "ToolSearch", "NotebookEdit", "mcp__slack__send_message"}
    assert "properties" in sent["NotebookEdit"]["input_schema"]
    summaries = registry.deferred_summaries(discovered_tools(messages))
    assert not any(line.startswith("NotebookEdit") for line in summaries)


def test_toolsearch_itself_is_never_deferred(registry: ToolRegistry) -> None:
    assert not registry.is_deferred(registry["ToolSearch"])


_WORDS = st.sampled_from(["slack", "send", "notebook", "+slack", "+web", "edit", "list", "mcp", "task", "zzz", "+x"])


@settings(max_examples=200)
@given(st.lists(_WORDS, min_size=1, max_size=4), st.integers(min_value=1, max_value=6))
def test_search_answers_are_bounded_distinct_deferred_and_honour_required_terms(words: list[str], limit: int) -> None:
    tools = deferred_tools()
    found = search_tools(" ".join(words), tools, tools, limit)
    assert len(found) <= limit and len(found) == len(set(found))
    by_name = {t.name: t for t in tools}
    assert set(found) <= set(by_name)
    required = [w[1:] for w in words if w.startswith("+") and len(w) > 1]
    for name in found:
        text = " ".join([*name_parts(name), by_name[name].prompt().lower(), by_name[name].search_hint.lower()])
        assert all(term in text for term in required)


async def test_default_registry_defers_webfetch_until_toolsearch_loads_it(tmp_path: Any) -> None:
    from nbtoolsched.tools import default_registry

    registry = default_registry(tmp_path)
    assert {"Bash", "WebFetch", "ToolSearch", "Sleep"} <= {t.name for t in registry.active()}
    assert "WebFetch" not in {t["name"] for t in registry.api_tools()}
    result = await search(registry, "fetch url", tmp_path=tmp_path)
    assert names(result)[0] == "WebFetch"
    with pytest.raises(TypeError, match="include_mcp"):
        default_registry(include_mcp=42)
