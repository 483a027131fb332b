"""The tool pool: lookup by name and alias, gates, hidden and deferred tools, duplicates."""

import pytest

import nbtoolsched as nts
from nbtoolsched._registry import DuplicateToolError

from tests.spies import Bare


class Old(nts.Tool):
    name = "TaskStop"
    aliases = ("KillShell",)


class Gated(nts.Tool):
    name = "Gated"
    gate = "experimental"


class Broken(nts.Tool):
    name = "Broken"

    def is_enabled(self) -> bool:
        raise RuntimeError("cannot tell")


class Deferred(nts.Tool):
    name = "mcp__git__git_log"
    is_mcp = True
    search_hint = "show the commit log"


def test_registry_lookup_aliases_gates_and_hidden_tools() -> None:
    reg = nts.ToolRegistry([Old, Gated(), Broken(), Bare()])
    assert reg.get("KillShell") is reg.get("TaskStop")
    assert reg.get("Gated") is None and reg.get("Broken") is None  # gated off; cannot say if enabled
    reg.gates["experimental"] = True
    assert reg.get("Gated") is not None
    reg.hidden = lambda tool: tool.name == "TaskStop"
    assert reg.get("TaskStop") is None
    assert [t.name for t in reg.active()] == ["Bare", "Gated"]
    with pytest.raises(DuplicateToolError):
        reg.register(Bare())


def test_deprecated_alias_reaches_the_full_pool() -> None:
    reg = nts.ToolRegistry([Old], simple=True)  # simple mode leaves TaskStop out of the active pool
    assert reg.active() == []
    assert reg.get("TaskStop") is None
    assert reg.get("KillShell") is not None  # an old transcript's name still answers


def test_deferred_tools_are_summarised_until_discovered() -> None:
    reg = nts.ToolRegistry([Bare(), Deferred()])
    assert [t["name"] for t in reg.api_tools()] == ["Bare"]
    assert reg.deferred_summaries() == ["mcp__git__git_log: show the commit log"]
    assert "ToolSearch" in reg.deferred_prompt()
    assert [t["name"] for t in reg.api_tools({"mcp__git__git_log"})] == ["Bare", "mcp__git__git_log"]
