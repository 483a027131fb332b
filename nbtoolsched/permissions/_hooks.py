"""Hooks as Claude Code runs them: command hooks from settings files, and Python callables.

A command hook is a shell command string, run by a shell (``bash -c``, else ``sh -c``)
in the session's cwd with ``CLAUDE_PROJECT_DIR`` set and the event as JSON on stdin.
Its exit code means what it means in Claude Code:

* 0: success; stdout may hold a JSON answer (plain text is a log line);
* 2: a blocking error, stderr is the reason (PreToolUse: the call is denied);
* anything else (1, 126, 127 for a program that is not installed...): a non-blocking
  error. The call goes ahead and the problem is reported to the person.

Claude Code also lets a call go ahead when a hook times out or prints an invalid answer;
so do we by default, reporting a ``HookNotice``. That is fail-open, so ``strict=True``
(``Permissions.from_settings(..., strict_hooks=True)``) turns every such problem into a
block: the call is not run and the message names the hook. Exit 2 always blocks.

Loading never fails because of a hook's program: a program that cannot be found is a
load warning (and exit 127 at run time). Every one of Claude Code's 27 event names is
accepted; the five that belong to tool scheduling fire (PreToolUse, PostToolUse,
PostToolUseFailure, PermissionRequest, PermissionDenied), the others are reported as
never fired. A Python hook receives the same dict and returns None or the same
JSON-shaped dict (or raises ``HookBlock``).

``Hooks`` holds them and runs an event's hooks; the pieces, one job each: what a hook is
(``_hook_types``), reading settings (``_hook_config``), when an ``if`` holds
(``_hook_conditions``), running one (``_hook_run``), combining their answers
(``_hook_outcomes``), and the transcript a bare run hands them (``_hook_transcripts``).
"""

from __future__ import annotations

import asyncio
import copy
import os
from typing import Any, Callable, Iterable

from ._base import (
    HookEvent,
    PermissionDeniedOutcome,
    PermissionRequestOutcome,
    PostToolUseOutcome,
    PreToolUseOutcome,
)
from ._errors import PermissionConfigError
from ._hook_conditions import condition_holds
from ._hook_config import STRICT_LOAD_ERRORS, group_from_config, probe_command
from ._hook_outcomes import combine_permission_request, combine_post, combine_pre, notices_of
from ._hook_run import run_command, run_python
from ._hook_transcripts import RunTranscripts
from ._hook_types import (
    CLAUDE_CODE_HOOK_EVENTS,
    DEFAULT_HOOK_TIMEOUT,
    HOOK_EVENTS,
    OTHER_CLAUDE_EVENTS,
    CommandHook,
    Hook,
    HookBlock,
    HookFunction,
    HookMatcher,
    HookResult,
    PythonHook,
)
from ._problems import HookWarning, LoadProblem, issue_warnings

__all__ = [
    "CLAUDE_CODE_HOOK_EVENTS",
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "CommandHook",
    "PythonHook",
    "HookBlock",
    "HookMatcher",
    "HookResult",
    "Hooks",
    "NoHooks",
    "probe_command",
]


class Hooks:
    """The HookRunner the pipeline and the gate call; runs every matching hook of an event in parallel."""

    def __init__(
        self,
        hooks: dict[str, Iterable[HookMatcher]] | None = None,
        *,
        project_dir: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        self.matchers: dict[str, list[HookMatcher]] = {event: [] for event in HOOK_EVENTS}
        self.project_dir = str(project_dir) if project_dir is not None else None
        self.env = dict(env or {})
        self.strict = strict
        self.ignored_events: list[str] = []  # "Event (file)" for events that never fire here
        self.load_warnings: list[LoadProblem] = []
        self._transcripts = RunTranscripts()
        for event, matchers in (hooks or {}).items():
            for matcher in matchers:
                self._add_matcher(event, matcher)

    # -- building --------------------------------------------------------------------------
    def add(self, event: str, hook: Hook | HookFunction, matcher: str = "*", *, check: bool = True) -> None:
        """Add one hook: a CommandHook, a PythonHook, or a plain (async) function.

        ``check`` warns (``HookWarning``) when a command's program cannot be found; it
        never refuses the hook, which would exit 127 at run time."""
        if not isinstance(hook, (CommandHook, PythonHook)):
            hook = PythonHook(hook)
        self._add_matcher(event, HookMatcher(matcher, (hook,)))
        if check and isinstance(hook, CommandHook):
            problem = probe_command(hook.command, self.project_dir)
            if problem:
                found = LoadProblem(HookWarning, "missing_program", problem, hook.source or "python", hook.label)
                self.load_warnings.append(found)
                issue_warnings([found])

    def _add_matcher(self, event: str, matcher: HookMatcher, *, source: str = "python") -> None:
        if event not in HOOK_EVENTS:
            why = "is a Claude Code event this scheduler never fires" if event in OTHER_CLAUDE_EVENTS else "is not a hook event"
            raise PermissionConfigError(f"{event!r} {why}; supported: {', '.join(HOOK_EVENTS)}", source=source, item=event)
        for hook in matcher.hooks:
            if isinstance(hook.timeout, bool) or not hook.timeout or hook.timeout <= 0:
                raise PermissionConfigError("a hook timeout must be a positive number of seconds", source=source, item=hook.label)
        self.matchers[event].append(matcher)

    def extend_from_config(self, config: object, *, source: str, check: bool = True) -> list[LoadProblem]:
        """Read a settings.json ``hooks`` section; returns (and keeps) its load problems.

        A section that breaks Claude Code's schema raises PermissionConfigError naming the
        file (Claude Code would skip the whole file, rules included; refusing to load is
        the fail-closed answer). Everything else loads: a missing program, an event that
        never fires here, an unknown event name (Claude Code rejects the whole file for
        it; we keep the rest and never run those hooks), a matcher that is not a valid
        regex (it never matches, as in Claude Code) or a hook type not run here are
        warnings. With ``strict`` the last four raise instead. ``check=False`` skips
        looking for each command's program."""
        if not isinstance(config, dict):
            raise PermissionConfigError("'hooks' must be an object of event name -> matcher list", source=source)
        problems: list[LoadProblem] = []
        for event, groups in config.items():
            if not isinstance(groups, list):
                raise PermissionConfigError("a hook event needs a list of {matcher, hooks}", source=source, item=str(event))
            if event not in HOOK_EVENTS:
                if event in OTHER_CLAUDE_EVENTS:
                    self.ignored_events.append(f"{event} ({source})")
                    problems.append(LoadProblem(HookWarning, "event_not_fired", "a Claude Code event that is not applicable to a "
                                                "tool scheduler: its hooks are accepted and never fired", source, event))
                else:
                    problems.append(LoadProblem(HookWarning, "unknown_event", "not a Claude Code hook event (Claude Code "
                                                "would reject this whole file); its hooks never run", source, event))
            fired = event in HOOK_EVENTS
            for group in groups:
                # Hooks of an event that never fires are checked against the schema only.
                sink = problems if fired else []
                matcher = group_from_config(group, str(event), source, self.project_dir, check and fired, sink)
                if matcher is not None and fired:
                    self._add_matcher(event, matcher, source=source)
        if self.strict:
            refused = [p for p in problems if p.kind in STRICT_LOAD_ERRORS]
            if refused:
                raise PermissionConfigError(
                    "strict hooks refuse hook settings that cannot act as written: " + "; ".join(str(p) for p in refused), source=source
                )
        self.load_warnings.extend(problems)
        return problems

    def __bool__(self) -> bool:
        return any(self.matchers.values())

    # -- running ----------------------------------------------------------------------------
    def matching(self, event: HookEvent) -> list[Hook]:
        """The hooks an event fires, each command once even if several matchers select it."""
        hooks: dict[Any, Hook] = {}
        for matcher in self.matchers.get(event.event, []):
            if matcher.matches(event.tool_name):
                for hook in matcher.hooks:
                    if hook.condition is None or condition_holds(hook.condition, event):
                        hooks.setdefault(hook.command if isinstance(hook, CommandHook) else hook, hook)
        return list(hooks.values())

    async def run(self, event: HookEvent) -> list[HookResult]:
        hooks = self.matching(event)
        if not hooks:
            return []
        payload = self._payload(event)
        return list(await asyncio.gather(*(self._run_one(h, payload, event) for h in hooks)))

    async def _run_one(self, hook: Hook, payload: dict[str, Any], event: HookEvent) -> HookResult:
        if isinstance(hook, CommandHook):
            cwd = event.ctx.cwd if os.path.isdir(event.ctx.cwd) else (self.project_dir or os.getcwd())
            return await run_command(hook, payload, cwd, self._env(event), event.event)
        # Each Python hook gets its own copy: one that edits payload["tool_input"] in place
        # must not change what runs (only an updatedInput it returns is a change, and is checked).
        return await run_python(hook, copy.deepcopy(payload), event.event)

    def _env(self, event: HookEvent) -> dict[str, str]:
        return {**os.environ, **self.env, "CLAUDE_PROJECT_DIR": self.project_dir or event.ctx.cwd}

    def _payload(self, event: HookEvent) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session_id": event.ctx.session_id,
            "transcript_path": self._transcripts.path_for(event),
            "cwd": event.ctx.cwd,
        }
        mode = getattr(event.ctx.permission_context, "mode", None)
        if isinstance(mode, str):
            payload["permission_mode"] = mode
        payload.update(hook_event_name=event.event, tool_name=event.tool_name, tool_input=event.tool_input,
                       tool_use_id=event.tool_use_id)
        if event.event == "PostToolUse":
            payload["tool_response"] = event.tool_response
        elif event.event == "PostToolUseFailure":
            payload["error"] = event.error
            payload["is_interrupt"] = event.is_interrupt
        elif event.event == "PermissionRequest":
            payload["permission_suggestions"] = list(event.permission_suggestions or [])
        elif event.event == "PermissionDenied":
            payload["reason"] = event.reason or ""
        return payload

    async def pre_tool_use(self, event: HookEvent) -> PreToolUseOutcome:
        return combine_pre(event.tool_name, await self.run(event), strict=self.strict)

    async def post_tool_use(self, event: HookEvent) -> PostToolUseOutcome:
        return combine_post("PostToolUse", await self.run(event), strict=self.strict)

    async def post_tool_use_failure(self, event: HookEvent) -> PostToolUseOutcome:
        return combine_post("PostToolUseFailure", await self.run(event), strict=self.strict)

    async def permission_request(self, event: HookEvent) -> PermissionRequestOutcome:
        return combine_permission_request(event.tool_name, await self.run(event), strict=self.strict)

    async def permission_denied(self, event: HookEvent) -> PermissionDeniedOutcome:
        results = await self.run(event)
        outcome = PermissionDeniedOutcome(retry=any(r.retry for r in results))
        outcome.notices = [n for r in results for n in notices_of("PermissionDenied", r, strict=False)]
        return outcome


class NoHooks:
    """A HookRunner with no hooks at all."""

    async def pre_tool_use(self, event: HookEvent) -> PreToolUseOutcome:
        return PreToolUseOutcome()

    async def post_tool_use(self, event: HookEvent) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def post_tool_use_failure(self, event: HookEvent) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def permission_request(self, event: HookEvent) -> PermissionRequestOutcome:
        return PermissionRequestOutcome()

    async def permission_denied(self, event: HookEvent) -> PermissionDeniedOutcome:
        return PermissionDeniedOutcome()
