"""The tool pool: which tools exist, which the model may see, and finding one by name.

Three sets, from wide to narrow: the full pool (everything registered), the active
pool (enabled, gated in, not blanket-denied), and what the model is sent (active
tools, with deferred ones reduced to a one-line summary until ToolSearch loads them).
"""

from __future__ import annotations

from ._errors import ConfigurationError

from typing import Any, Callable, Iterable, Iterator

from ._tool._decorator import FunctionTool
from ._tool._base import Tool

__all__ = ["ToolRegistry", "DuplicateToolError"]

SIMPLE_MODE_TOOLS = frozenset({"Bash", "Read", "Edit"})


class DuplicateToolError(ConfigurationError):
    pass


class ToolRegistry:
    def __init__(
        self,
        tools: Iterable[Tool | type[Tool] | Callable[..., object]] = (),
        *,
        gates: dict[str, bool] | None = None,
        simple: bool = False,
        simple_tools: Iterable[str] = SIMPLE_MODE_TOOLS,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self._by_alias: dict[str, Tool] = {}
        self.gates: dict[str, bool] = dict(gates or {})
        self.simple = simple
        self.simple_tools = frozenset(simple_tools)
        # Blanket-denied tools vanish from a scheduler's view (see ``view``).
        self.hidden: Callable[[Tool], bool] = _never
        for item in tools:
            self.register(item)

    def view(self, *, hidden: Callable[[Tool], bool]) -> "ToolRegistry":
        """The same pool seen through ``hidden`` (a permission system's blanket denials).

        The view shares the tools, gates and settings: a tool registered on either shows
        in both. Only what is hidden differs, so one registry can serve schedulers with
        different permissions without either changing it.
        """
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.hidden = hidden
        return view

    # -- building the pool ---------------------------------------------------------
    def register(self, item: Tool | type[Tool] | Callable[..., object], *, replace: bool = False) -> Tool:
        """Add a Tool instance, a Tool subclass, or a plain function (wrapped by @tool)."""
        tool = _as_tool(item)
        if not tool.name:
            raise ValueError(f"{tool!r} has no name")
        if tool.name in self._tools and not replace:
            raise DuplicateToolError(f"a tool named {tool.name!r} is already registered (pass replace=True to swap it)")
        if tool.name in self._tools:
            self.unregister(tool.name)
        self._tools[tool.name] = tool
        for alias in tool.aliases:
            self._by_alias.setdefault(alias, tool)
        return tool

    def unregister(self, name: str) -> None:
        tool = self._tools.pop(name, None)
        if tool is None:
            raise KeyError(f"no tool named {name!r}")
        for alias, owner in list(self._by_alias.items()):
            if owner is tool:
                del self._by_alias[alias]

    # -- the pools -------------------------------------------------------------------
    @property
    def full_pool(self) -> list[Tool]:
        return list(self._tools.values())

    def is_active(self, tool: Tool) -> bool:
        if tool.gate is not None and not self.gates.get(tool.gate, False):
            return False
        if self.simple and tool.name not in self.simple_tools and not tool.is_mcp:
            return False
        try:
            enabled = tool.is_enabled()
        except Exception:
            enabled = False  # a tool that cannot say is not offered
        return enabled and not self.hidden(tool)

    def active(self) -> list[Tool]:
        """Built-ins sorted by name, then MCP tools sorted by name (as Claude Code sends them)."""
        tools = [t for t in self._tools.values() if self.is_active(t)]
        return sorted(tools, key=lambda t: (t.is_mcp, t.name))

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.active())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    # -- lookup -------------------------------------------------------------------------
    def get(self, name: str) -> Tool | None:
        """By name or alias among active tools; a deprecated alias may reach the full pool.

        An old transcript may call a tool by a name it used to have: if some tool in the
        full pool lists that name among its aliases, it answers, even when not active.
        """
        tool = self._tools.get(name)
        if tool is not None and self.is_active(tool):
            return tool
        tool = self._by_alias.get(name)
        if tool is not None and self.is_active(tool):
            return tool
        if tool is not None and name in tool.aliases and not self.hidden(tool):
            return tool
        return None

    def __getitem__(self, name: str) -> Tool:
        tool = self.get(name)
        if tool is None:
            raise KeyError(f"no such tool available: {name}")
        return tool

    # -- what the model sees ----------------------------------------------------------
    def is_deferred(self, tool: Tool) -> bool:
        if tool.always_load:
            return False
        return tool.should_defer or tool.is_mcp

    def api_tools(self, discovered: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Tool schemas in the Anthropic ``tools`` format: loaded tools plus discovered deferred ones."""
        found = set(discovered)
        return [t.to_api() for t in self.active() if not self.is_deferred(t) or t.name in found]

    def deferred_summaries(self, discovered: Iterable[str] = ()) -> list[str]:
        """One line per deferred tool not yet loaded: the model learns it exists, not its schema."""
        found = set(discovered)
        return [t.summary_line() for t in self.active() if self.is_deferred(t) and t.name not in found]

    def deferred_prompt(self, discovered: Iterable[str] = ()) -> str:
        lines = self.deferred_summaries(discovered)
        if not lines:
            return ""
        header = "These tools exist but their schemas are not loaded; call ToolSearch to load one before using it:"
        return "\n".join([header, *(f"- {line}" for line in lines)])


def _never(tool: Tool) -> bool:
    return False


def _as_tool(item: Tool | type[Tool] | Callable[..., object]) -> Tool:
    if isinstance(item, Tool):
        return item
    if isinstance(item, type) and issubclass(item, Tool):
        return item()
    if callable(item):
        return FunctionTool(item)
    raise TypeError(f"cannot register {item!r} as a tool")
