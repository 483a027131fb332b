"""The built-in part of a tool's own permission check, chosen by the kind of tool: the
shell check for a shell tool, the path check for a file tool, the host check for a web
tool, and a tool's own content rules for the rest."""

from __future__ import annotations

from .._tool._decision import Decision
from ._checks import CallFacts, file_check, generic_check, tool_kind, web_check
from ._shell_check import shell_check

__all__ = ["builtin_check"]


def builtin_check(facts: CallFacts) -> Decision:
    kind = tool_kind(facts.tool)
    if kind == "shell":
        return shell_check(facts)
    if kind == "file":
        return file_check(facts)
    if kind == "web":
        return web_check(facts)
    return generic_check(facts)
