"""The permission step of a speculative run: the sandbox policy.

Every call of the forked loop passes here (the pipeline always asks the gate, so a
hook's "allow" cannot skip it). File writes are redirected into the overlay (only in
acceptEdits or bypassPermissions mode, as in Claude Code; otherwise a write is the edit
boundary), reads of written files are redirected to the overlay copy, reads of untouched
files get the resolved real path; read-only shell commands and the read tools may run.
Anything else is a boundary: the call is denied, the speculation's abort signal fires,
and the boundary records which tool and what it wanted.

Which tools are file, read or shell tools is decided by name, as in Claude Code: only
the built-ins are known to touch nothing but the path they are given. A user's tool
that declares itself a reader or an editor (``permission_kind``) could still write
anywhere, so it is "any other tool" here, whatever it declares.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any, Callable, TypeVar, cast

from pydantic import BaseModel

from ..permissions._base import PermissionGate, PermissionRequest
from ..permissions._checks import read_only_in
from .._tool._abort import AbortSignal
from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool, ToolOutput, Validation
from .._tool._context import ToolContext
from ..sandbox._failures import sandbox_failure
from ..shell import line_facts
from ._boundary import SPECULATION_BOUNDARY, Boundary, BoundaryKind, Budget
from ._overlay import Overlay, PathOutsideCwd
from ._safefs import UnsafePath
from ._texts import (
    ALREADY_STOPPED,
    stopped_budget,
    stopped_edit,
    stopped_network,
    stopped_outside,
    stopped_permission,
    stopped_shell,
    stopped_tool,
    stopped_unsandboxed,
)

__all__ = ["SpeculationGate", "WRITE_TOOLS", "READ_TOOLS", "PATH_KEYS", "is_write_tool", "is_read_tool", "is_shell_tool"]

P = TypeVar("P")  # a call's parsed input
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "ToolSearch", "LSP", "TaskGet", "TaskList"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
SEARCH_TOOLS = frozenset({"Glob", "Grep", "LS"})  # they walk folders (in a kernel overlay: inside it)
# The input keys that hold a call's path, in the order we look them up. Claude Code's
# speculation reads notebook_path, then path, then file_path; no built-in tool sends two
# of them, so the order only matters for a tool of one's own that does (chapter 08).
PATH_KEYS = ("notebook_path", "file_path", "path")
DETAIL_LIMIT = 200
# The session modes in which Claude Code lets a speculation edit (in the overlay). It also
# lets plan mode edit when bypassPermissions is available; we have no such notion, so a
# plan-mode speculation stops at the edit boundary (stricter).
EDIT_MODES = frozenset({"acceptEdits", "bypassPermissions"})


def is_write_tool(tool: Tool) -> bool:
    return tool.name in WRITE_TOOLS


def is_read_tool(tool: Tool) -> bool:
    return tool.name in READ_TOOLS


def is_shell_tool(tool: Tool) -> bool:
    return tool.name in SHELL_TOOLS




def _path_field(data: Any) -> tuple[str, str] | None:
    """The path argument (key, value) of an input dict or model, if it has one."""
    for key in PATH_KEYS:
        value = data.get(key) if isinstance(data, dict) else getattr(data, key, None)
        if isinstance(value, str) and value:
            return key, value
    return None


def _acted_path(tool: Tool, parsed: Any) -> str | None:
    """The path the tool itself says the call acts on; "/" (outside) when it cannot say."""
    try:
        path = tool.get_path(parsed)
    except Exception:
        return os.sep
    return path if isinstance(path, str) and path else None


def _detail(data: dict[str, Any]) -> str:
    for key in ("url", "file_path", "path", "command", "notebook_path", "pattern"):  # Claude Code's order first
        value = data.get(key)
        if isinstance(value, str):
            return value[:DETAIL_LIMIT]
    return ""


class _NobodyToAsk(Exception):
    """Raised by the speculation's approver: a speculative call never waits for a person."""


class _Refuser:
    """The approver a speculative call gets: remembers being asked, then refuses.

    The session's gate may turn the refusal into a deny of its own, so whether a person
    was needed is read from here, not from the decision.
    """

    def __init__(self) -> None:
        self.asked = False

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.asked = True
        raise _NobodyToAsk("a speculative run cannot ask the user")


def _session_mode(gate: PermissionGate | None) -> str | None:
    mode = getattr(gate, "mode", None)
    return mode if isinstance(mode, str) else None


class SpeculationGate:
    """A PermissionGate that confines one speculation to its overlay.

    ``inner`` is the session's own gate: consulted (never allowed to ask a person) so
    deny rules still hold. As in Claude Code, a write is an ``edit`` boundary unless the
    session's mode is acceptEdits or bypassPermissions (or the gate has no mode and
    allows the write without asking); ``allow_edits=False`` makes every write one.
    """

    def __init__(
        self,
        overlay: Overlay,
        abort: AbortSignal,
        *,
        inner: PermissionGate | None = None,
        allow_edits: bool = True,
        on_boundary: Callable[[Boundary], None] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.overlay: Any = overlay  # an Overlay, or a KernelView (the same surface)
        self.budget = budget
        self.abort = abort
        self.inner = inner
        self.allow_edits = allow_edits
        self.on_boundary = on_boundary
        self.boundary: Boundary | None = None

    def hides(self, tool: Tool) -> bool:
        return bool(self.inner.hides(tool)) if self.inner is not None else False

    async def decide(self, request: PermissionRequest) -> Decision:
        hook = request.hook_decision
        if hook is not None and hook.behavior == "deny":
            return hook
        if self.boundary is not None or self.abort.aborted:
            return Decision.deny(ALREADY_STOPPED, _reason("already stopped"))
        over = self.budget.exceeded(self.overlay) if self.budget is not None else None
        if over is not None:
            return self.stop("budget", request.tool.name, over, stopped_budget(over))
        tool = request.tool
        if is_write_tool(tool):
            return await self._write(request)
        if is_shell_tool(tool):
            return await self._shell(request)
        if is_read_tool(tool) and read_only_in(tool, request.parsed, request.ctx.cwd):
            return await self._read(request)
        # Anything else (a web fetch, a question to the user, an MCP call) reaches outside
        # the overlay, even when read-only: the speculation stops before it.
        return self.stop("denied_tool", tool.name, _detail(request.input), stopped_tool(tool.name))

    # -- the policy, one kind of call at a time ----------------------------------------
    async def _write(self, request: PermissionRequest) -> Decision:
        name = request.tool.name
        found = _path_field(request.input)
        mode = _session_mode(self.inner)
        by_mode = mode is not None and mode not in EDIT_MODES
        if by_mode or not self.allow_edits:
            shown = found[1] if found else _detail(request.input)
            return self.stop("edit", name, shown, stopped_edit(shown or "a file", mode if by_mode else None))
        if found is None:  # Claude Code: a write tool without a path is just another tool
            return self.stop("denied_tool", name, _detail(request.input), stopped_tool(name))
        key, path = found
        try:
            rel = self.overlay.resolve(path)
        except PathOutsideCwd as err:
            return self.stop("outside_cwd", name, path, stopped_outside(path, err.reason))
        verdict = await self._consult(request, None, for_write=True, path=path)
        if not verdict.allowed:
            return verdict
        resolved = await self._judge_resolved(request, key, rel, for_write=True, path=path)
        if resolved is not None:
            return resolved
        first = not self.overlay.is_written(rel)
        try:
            target = self.overlay.prepare_write(rel)
        except UnsafePath as err:
            return self.stop("unsafe_path", name, path, stopped_outside(path, err.reason))
        if first:
            _carry_read_state(request.ctx, self.overlay, rel, path, target)
        return Decision.allow({**request.input, key: target}, _reason(f"write redirected to the overlay copy of {rel}"))

    async def _read(self, request: PermissionRequest) -> Decision:
        name = request.tool.name
        stopped = self._acts_outside(request.tool, request.parsed)
        if stopped is not None:
            return stopped
        found = _path_field(request.input)
        if found is None:
            return await self._consult(request, None, for_write=False)  # Glob or Grep over cwd
        key, path = found
        try:
            rel = self.overlay.resolve(path, allow_root=True)
        except PathOutsideCwd as err:
            return self.stop("outside_cwd", name, path, stopped_outside(path, err.reason))
        if self.kernel and name in SEARCH_TOOLS:
            # They search inside the mounted overlay, where the real path is the merged
            # folder: given the resolved real path, not an upper-folder one.
            target = self.overlay.real_path(rel) if rel != "." else self.overlay.cwd
        else:
            target = self.overlay.read_target(rel) if rel != "." else self.overlay.cwd
        # The rewritten path has its symlinks resolved, so whatever the tool adds to it
        # (a Glob pattern's `..`) climbs from the real folder, not from the one judged
        # above (`up/up/c` with `up -> .` and `../../../x/*` lists two levels above cwd):
        # judge the input that will run as well.
        # (A file already written in this run is read from its overlay copy, which is inside
        # the run's own tree by construction: nothing is added to that path.)
        if self.kernel or not target.startswith(self.overlay.tree + os.sep):
            parsed = request.parsed
            moved = parsed.model_copy(update={key: target}) if hasattr(parsed, "model_copy") else {**parsed, key: target}
            stopped = self._acts_outside(request.tool, moved)
            if stopped is not None:
                return stopped
        resolved = await self._judge_resolved(request, key, rel, for_write=False, path=path)
        if resolved is not None:
            return resolved
        return await self._consult(request, {**request.input, key: target}, for_write=False)

    async def _judge_resolved(self, request: PermissionRequest, key: str, rel: str, *, for_write: bool,
                              path: str) -> Decision | None:
        """In a kernel overlay a link the speculation made can lead a path somewhere the
        real tree does not say (``ln -s secret.env s.txt``): the session's rules judge the
        path it resolves to as well. None when that path is the one already judged, or allowed."""
        if not self.kernel:
            return None
        resolved = self.overlay.real_path(rel)
        if os.path.normpath(request.ctx.resolve_path(path)) == resolved:
            return None
        parsed = request.parsed
        moved_parsed = parsed.model_copy(update={key: resolved}) if hasattr(parsed, "model_copy") else {**parsed, key: resolved}
        moved = dataclasses.replace(request, input={**request.input, key: resolved}, parsed=moved_parsed)
        verdict = await self._consult(moved, None, for_write=for_write, path=path)
        return None if verdict.allowed else verdict

    def _acts_outside(self, tool: Tool, parsed: Any) -> Decision | None:
        """The boundary when the path the tool says it acts on (a Glob pattern can move
        it off ``path``) is outside cwd; None when it is inside or the tool names none."""
        acted = _acted_path(tool, parsed)
        if acted is None:
            return None
        try:
            self.overlay.resolve(acted, allow_root=True)
        except PathOutsideCwd as err:
            return self.stop("outside_cwd", tool.name, acted, stopped_outside(acted, err.reason))
        return None

    @property
    def kernel(self) -> bool:
        """Does this run work in a kernel overlay (Bash inside it), not by rewriting paths?"""
        return getattr(self.overlay, "kind", "paths") == "kernel"

    async def _shell(self, request: PermissionRequest) -> Decision:
        command = request.input.get("command")
        text = command if isinstance(command, str) else ""
        if self.kernel:
            return await self._shell_in_overlay(request, text)
        if not text.strip() or not read_only_in(request.tool, request.parsed, request.ctx.cwd):
            return self.stop("bash", request.tool.name, text[:DETAIL_LIMIT], stopped_shell(text[:DETAIL_LIMIT]))
        problem = line_facts(text, self.overlay.cwd).reaches_outside(self.overlay.cwd)
        if problem:  # the session may let it read there; a speculation reads inside cwd only
            return self.stop("outside_cwd", request.tool.name, text[:DETAIL_LIMIT], stopped_outside(f"the command `{text[:DETAIL_LIMIT]}`", problem))
        return await self._consult(request, None, for_write=False)

    async def _shell_in_overlay(self, request: PermissionRequest, text: str) -> Decision:
        """In a kernel overlay any command may run (the writing sandbox, inside the overlay,
        no network): what stops the run is what needs a person, the network, a run outside
        the sandbox, or a deny rule."""
        name = request.tool.name
        shown = text[:DETAIL_LIMIT]
        if not text.strip():
            return self.stop("bash", name, shown, stopped_shell(shown))
        if request.input.get("dangerouslyDisableSandbox") is True:
            return self.stop("bash", name, shown, stopped_unsandboxed(shown))
        line = line_facts(text, self.overlay.cwd)
        wants = line.network
        if wants is not None:
            return self.stop("network", name, shown, stopped_network(wants[:DETAIL_LIMIT]))
        # A read-only command reads inside cwd only, as in the path-rewriting overlay (what its
        # words show; a program that opens files by itself reads what the sandbox lets it).
        problem = line.reaches_outside(self.overlay.cwd) if read_only_in(request.tool, request.parsed, request.ctx.cwd) else None
        if problem:
            return self.stop("outside_cwd", name, shown, stopped_outside(f"the command `{shown}`", problem))
        return await self._consult(request, None, for_write=False, ask_ok=True)

    async def _consult(
        self, request: PermissionRequest, updated: dict[str, Any] | None, *, for_write: bool, path: str = "",
        ask_ok: bool = False,
    ) -> Decision:
        """Ask the session's gate; a deny, a failure, or a need to ask a person is a boundary.

        A write that needs a person is the ``edit`` boundary (the user approves it in the
        normal turn that follows); anything else is a ``permission`` boundary.
        """
        allowed = Decision.allow(updated, _reason("allowed while speculating"))
        if self.inner is None:
            return allowed
        name = request.tool.name
        refuser = _Refuser()
        decision: Decision | None = None
        failure: Exception | None = None
        try:
            decision = await self.inner.decide(dataclasses.replace(request, approver=refuser))
        except Exception as err:  # noqa: BLE001 - fail closed: a broken check stops the run
            failure = err
        needs_person = refuser.asked or isinstance(failure, _NobodyToAsk) or (decision is not None and decision.behavior == "ask")
        if needs_person and ask_ok:
            return allowed  # the kernel overlay holds it: the user decides at accept, seeing every change
        if needs_person:
            if for_write:
                return self.stop("edit", name, path, stopped_edit(path))
            return self.stop("permission", name, _detail(request.input), stopped_permission(name, "it needs the user's approval"))
        if decision is None:
            why = f"the permission check failed ({failure})"
        elif decision.behavior == "allow" and decision.updated_input not in (None, request.input):
            # A PermissionRequest hook (or a check) wants another input run: this policy
            # judged only the one it was given, so the speculation stops (fail closed).
            why = "the session's permission step changed its input"
        elif decision.behavior == "allow":
            return allowed
        else:
            why = decision.message or "the session's permissions do not allow it"
        return self.stop("permission", name, _detail(request.input), stopped_permission(name, why))

    def stop(self, kind: BoundaryKind, tool: str | None, detail: str, message: str) -> Decision:
        """Record the boundary (the first one wins), stop the run, deny the call."""
        self.record(kind, tool, detail)
        return Decision.deny(message, _reason(f"boundary: {kind}"))

    # -- validation sees the overlay too --------------------------------------------------
    def view(self, tool: Tool) -> Tool:
        """A copy of a tool for the forked run, fitted to the overlay.

        File tools: their ``validate_input`` looks where the call will go (validation runs
        before the permission step, so a Read of a file the speculation created, or a
        second Edit of one it changed, would otherwise be checked against the real tree),
        and in a kernel overlay the paths they print are shown as the real ones. Shell
        tools in a kernel overlay: a command the sandbox stopped (a write outside the
        working directory, the network) ends the run at a boundary after its result."""
        if is_shell_tool(tool):  # the overlay is chosen when the run starts: asked at each call
            clone = copy.copy(tool)
            shell_call = tool.call

            async def call_in_overlay(input: Any, ctx: ToolContext) -> Any:
                out = await shell_call(input, ctx)
                if self.kernel:
                    self._after_shell(tool.name, input, out)
                return out

            clone.call = call_in_overlay  # type: ignore[method-assign]
            return clone
        if not (is_write_tool(tool) or is_read_tool(tool)):
            return tool
        clone = copy.copy(tool)
        original = tool.validate_input
        file_call = tool.call

        async def validate_input(input: Any, ctx: ToolContext) -> Validation:
            seen = self.preview(input)
            if seen is None:  # an escaping path: the permission step stops the run on it
                return Validation.OK
            verdict = await original(seen, ctx)
            if not verdict.ok and self.kernel and verdict.message:  # the model never sees the overlay's own paths
                return dataclasses.replace(verdict, message=self.overlay.to_real(verdict.message))
            return verdict

        async def call_in_view(input: Any, ctx: ToolContext) -> Any:
            out = await file_call(input, ctx)
            if self.kernel and isinstance(out, ToolOutput) and isinstance(out.content, str):
                out.content = self.overlay.to_real(out.content)
            return out

        clone.validate_input = validate_input  # type: ignore[method-assign]
        clone.call = call_in_view  # type: ignore[method-assign]
        return clone

    def _after_shell(self, name: str, input: Any, out: Any) -> None:
        """The boundary a finished command in the kernel overlay reached, if any."""
        over = self.budget.exceeded(self.overlay) if self.budget is not None else None
        if over is not None:  # the last command of a run must not slip past the budget
            self.record("budget", name, over)
            return
        data = getattr(out, "data", None)
        if getattr(data, "sandbox", None) is None or not getattr(out, "is_error", False):
            return
        command = str(getattr(input, "command", ""))[:DETAIL_LIMIT]
        found = sandbox_failure(str(getattr(data, "stdout", "")), str(getattr(data, "stderr", "")))
        if found == "network":
            self.record("network", name, command)
        elif found == "write":
            self.record("outside_cwd", name, command)

    def record(self, kind: BoundaryKind, tool: str | None, detail: str) -> None:
        """Stop the run at a boundary a call reached while it ran (its result stands)."""
        if self.boundary is None:
            self.boundary = Boundary(kind, tool, detail[:DETAIL_LIMIT])
            if self.on_boundary is not None:
                self.on_boundary(self.boundary)
        self.abort.abort(SPECULATION_BOUNDARY)

    def preview(self, parsed: P) -> P | None:
        """``parsed`` (a tool's input model) with its path pointing where a read of it
        would go now (no side effects).

        None when the path escapes cwd: only the permission step decides about those.
        """
        found = _path_field(parsed)
        if found is None or not isinstance(parsed, BaseModel):
            return parsed
        key, path = found
        try:
            rel = self.overlay.resolve(path, allow_root=True)
        except PathOutsideCwd:
            return None
        target = self.overlay.cwd if rel == "." else self.overlay.read_target(rel)
        return cast(P, parsed.model_copy(update={key: target}))


def _carry_read_state(ctx: ToolContext, overlay: Overlay, rel: str, path: str, target: str) -> None:
    """If the real file was read (and is unchanged), the overlay copy counts as read."""
    if not os.path.isfile(target):
        return
    for seen in {ctx.resolve_path(path), overlay.real_path(rel)}:
        state = ctx.file_state.get(seen)
        if state is not None and not ctx.file_state.changed_since_read(seen):
            ctx.file_state.record(target, partial=state.partial)
            return


def _reason(detail: str) -> DecisionReason:
    return DecisionReason("policy", f"speculation: {detail}")
