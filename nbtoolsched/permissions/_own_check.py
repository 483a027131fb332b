"""The tool's own check: its ``check_permissions`` and the built-in checks for its kind.

This is the gate's one way into ``_checks``: the facts a call is judged by (``_facts``),
where a Bash command will run and what that changes for its checks (``_place``: the
sandbox, its masks, autoAllowBashIfSandboxed), and the combination of the tool's answer
with the built-in one (``_own_check``).

``OwnCheck`` is the lowest layer of ``Permissions`` (``_engine``): it reads the rules and
settings the gate holds, and is built on by the rule order (``_judge``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from .._tool._abort import AbortError
from .._tool._decision import PASSTHROUGH, Decision, DecisionReason
from .._tool._base import Tool, overrides
from .._tool._context import ToolContext
from ._builtin import builtin_check
from ._checks import CallFacts, is_immune_ask, read_only_in, shell_field, tool_kind
from ._modes import Mode
from ._rules import RuleSet
from ..sandbox._mounts import masks_coverage
from ..shell import lexical_paths

if TYPE_CHECKING:
    from ..sandbox._settings import SandboxSettings

__all__ = ["OwnCheck"]


class OwnCheck:
    """The tool's own check, with what the gate's settings say about where it runs."""

    # What the gate holds (set by Permissions.__init__).
    rules: RuleSet
    additional_dirs: list[str]
    home: str
    split_command: Callable[[str], list[str] | None]
    _mode: Mode

    if TYPE_CHECKING:
        @property
        def sandbox(self) -> SandboxSettings: ...

        @property
        def working_dirs(self) -> list[str]: ...

    async def _place(self, facts: CallFacts) -> None:
        """Where a Bash command will run, and what that changes for its checks: under a
        sandbox whose masks cover every Read deny rule, the kernel enforces those reads;
        with autoAllowBashIfSandboxed, a sandboxed command needs no prompt."""
        command = facts.input.get("command")
        if not isinstance(command, str):
            return
        settings = self.sandbox
        replaying = lexical_paths.active  # a replay: not this machine's sandbox (shell._lexical)
        if not replaying:
            await settings.probe()  # the first probe starts a process: not on the loop
        read_only = read_only_in(facts.tool, facts.parsed, facts.cwd)
        facts.placement = settings.placement(read_only=read_only, excluded=settings.excludes(facts.shell_line(), tuple(self.working_dirs)),
                                             disable_requested=facts.input.get("dangerouslyDisableSandbox") is True)
        if facts.placement.sandbox is None:
            return
        facts.auto_allow = settings.auto_allows
        # git's objects hold copies of protected files that no mask covers: such a line is
        # still judged by the Read rules.
        facts.masked_reads = facts.masked_everywhere = not facts.shell_line().shows_history
        if facts.masked_reads and settings.deny_read and replaying:
            facts.masked_reads = facts.masked_everywhere = False  # what the masks would cover cannot be listed
        elif facts.masked_reads and settings.deny_read:
            policy = settings.policy(facts.placement.sandbox, writable=tuple(self.working_dirs), tmp_dir=None)
            facts.masked_reads, facts.masked_everywhere = await asyncio.to_thread(masks_coverage, policy, facts.cwd)

    def _facts(self, tool: Tool, input: dict[str, Any], parsed: Any, ctx: ToolContext, mode: str | None = None) -> CallFacts:
        return CallFacts(tool, input, parsed, ctx.cwd, mode or self._mode, self.rules, self.additional_dirs, self.home, self.split_command)

    async def _own_check(self, facts: CallFacts, ctx: ToolContext) -> Decision:
        """The tool's check_permissions and the built-in checks for its kind, combined."""
        if tool_kind(facts.tool) == "shell" and facts.tool.name == "Bash":
            await self._place(facts)
        try:
            own = await facts.tool.check_permissions(facts.parsed, ctx) if overrides(facts.tool, "check_permissions") else PASSTHROUGH
        except (AbortError, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - as in Claude Code: a failing check says nothing
            own = Decision.passthrough()
        builtin = await _off_loop_if_long(builtin_check, facts)
        for candidate in (own, builtin):
            if candidate.behavior == "deny":
                return candidate
        for candidate in (builtin, own):
            if is_immune_ask(candidate):
                return candidate
        for candidate in (own, builtin):
            if candidate.behavior == "ask":
                return candidate
        if builtin.behavior == "allow":
            return builtin if own.updated_input is None else replace(builtin, updated_input=own.updated_input)
        if own.behavior == "allow":
            return own if own.reason else replace(own, reason=DecisionReason("tool", f"{facts.tool.name}'s own check allows it"))
        return builtin if builtin.message or builtin.suggestions else own


_LONG_INPUT = 2048  # characters of a shell command past which its checks run in a worker thread


async def _off_loop_if_long(check: Callable[[CallFacts], Decision], facts: CallFacts) -> Decision:
    """Checks of a long command line parse and walk it: in a worker thread, so the event
    loop (other calls' progress, a notebook's widgets) never waits for them."""
    field_name = shell_field(facts.tool)
    command = facts.input.get(field_name) if field_name else None
    if isinstance(command, str) and len(command) > _LONG_INPUT:
        return await asyncio.to_thread(check, facts)
    return check(facts)


