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
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import os
import re
import shlex
import shutil
import signal
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Union

from .._session_log import TranscriptWriter, read_transcript, transcript_file_for
from .._tool._decision import Decision, DecisionReason
from ._base import (
    HookEvent,
    HookNotice,
    PermissionDeniedOutcome,
    PermissionRequestOutcome,
    PostToolUseOutcome,
    PreToolUseOutcome,
)
from ._errors import PermissionConfigError
from ._matching import rule_matches_example, shell_rule_may_run
from ._problems import HookWarning, LoadProblem, issue_warnings
from ._rules import EDIT_RULE_TOOLS, READ_RULE_TOOLS, SHELL_RULE_TOOLS, PermissionRule, make_rule

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
]

DEFAULT_HOOK_TIMEOUT = 600.0  # seconds, as in Claude Code
# The events a tool scheduler fires.
HOOK_EVENTS: tuple[str, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied")
# Every event name Claude Code 2.1 accepts in a settings file.
CLAUDE_CODE_HOOK_EVENTS: frozenset[str] = frozenset(
    {*HOOK_EVENTS, "Notification", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "StopFailure",
     "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "Setup", "TeammateIdle", "TaskCreated",
     "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
     "InstructionsLoaded", "CwdChanged", "FileChanged"}
)
OTHER_CLAUDE_EVENTS = CLAUDE_CODE_HOOK_EVENTS - set(HOOK_EVENTS)
_OTHER_HOOK_TYPES = frozenset({"prompt", "agent", "http", "mcp_tool"})  # valid in Claude Code, not run here
_UNSUPPORTED_OPTIONS = {
    "async": "runs in the background in Claude Code; here the call waits for it",
    "asyncRewake": "runs in the background in Claude Code; here the call waits for it",
    "once": "runs once per session in Claude Code; here it runs every time it matches",
}
# Load problems that strict hooks refuse: a configured tool hook that could never act.
_STRICT_LOAD_ERRORS = frozenset({"unknown_event", "bad_matcher", "unsupported_hook_type", "bad_condition"})


class HookBlock(Exception):
    """Raise from a Python hook to block the call (like exit code 2); the text goes to the model."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None
    source: str | None = None  # the settings file it came from
    condition: PermissionRule | None = None  # Claude Code's "if": a rule the call must match

    @property
    def label(self) -> str:
        return self.name or self.command


@dataclass(frozen=True, slots=True)
class PythonHook:
    fn: Callable[[dict[str, Any]], Any]
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None
    source: str | None = None
    condition: PermissionRule | None = None

    @property
    def label(self) -> str:
        return self.name or str(getattr(self.fn, "__qualname__", None) or repr(self.fn))


Hook = Union[CommandHook, PythonHook]


@dataclass(frozen=True)
class HookMatcher:
    """Which tools a group of hooks fires for, read as Claude Code reads it.

    ``*`` or empty: every tool. Only letters, digits, ``_`` and ``|``: an exact name or a
    ``|``-list. Anything else is a regex *searched* in the tool name (not anchored), so
    ``(Edit|Write)`` also fires for ``NotebookEdit``."""

    matcher: str
    hooks: tuple[Hook, ...]

    def __post_init__(self) -> None:
        problem = _matcher_problem(self.matcher)
        if problem:
            raise PermissionConfigError(problem, item=self.matcher)

    def matches(self, tool_name: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        if _is_simple(self.matcher):
            return tool_name in self.matcher.split("|")
        return re.search(self.matcher, tool_name) is not None


def _is_simple(matcher: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_|]*", matcher) is not None


def _matcher_problem(matcher: str) -> str | None:
    if matcher in ("", "*") or _is_simple(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as err:
        return f"the hook matcher is not a valid regex ({err})"
    return None


@dataclass
class HookResult:
    """What one hook said about one event."""

    hook: Hook
    blocking_error: str | None = None  # exit 2, decision "block", or HookBlock
    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None
    permission_request: dict[str, Any] | None = None  # PermissionRequest: hookSpecificOutput.decision
    retry: bool = False  # PermissionDenied
    system_message: str | None = None
    error: str | None = None  # a non-blocking error (blocks only under strict hooks)
    error_kind: str | None = None

    @property
    def label(self) -> str:
        return self.hook.label


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
        self._transcripts = _RunTranscripts()
        for event, matchers in (hooks or {}).items():
            for matcher in matchers:
                self._add_matcher(event, matcher)

    # -- building --------------------------------------------------------------------------
    def add(self, event: str, hook: Hook | Callable[[dict[str, Any]], Any], matcher: str = "*", *, check: bool = True) -> None:
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

    def extend_from_config(self, config: Any, *, source: str, check: bool = True) -> list[LoadProblem]:
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
                matcher = _group_from_config(group, str(event), source, self.project_dir, check and fired, sink)
                if matcher is not None and fired:
                    self._add_matcher(event, matcher, source=source)
        if self.strict:
            refused = [p for p in problems if p.kind in _STRICT_LOAD_ERRORS]
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
                    if hook.condition is None or _condition_holds(hook.condition, event):
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
            return await _run_command(hook, payload, cwd, self._env(event), event.event)
        # Each Python hook gets its own copy: one that edits payload["tool_input"] in place
        # must not change what runs (only an updatedInput it returns is a change, and is checked).
        return await _run_python(hook, copy.deepcopy(payload), event.event)

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
        outcome.notices = [n for r in results for n in _notices("PermissionDenied", r, strict=False)]
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


# -- config ------------------------------------------------------------------------------------
def _group_from_config(
    group: Any, event: str, source: str, project_dir: str | None, check: bool, problems: list[LoadProblem]
) -> HookMatcher | None:
    """One ``{matcher, hooks}`` entry; None when nothing in it can ever run here."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        raise PermissionConfigError("each entry needs a 'hooks' list (and optionally a 'matcher')", source=source, item=event)
    matcher = group.get("matcher") or ""
    if not isinstance(matcher, str):
        raise PermissionConfigError("a matcher must be a string", source=source, item=str(matcher))
    hooks: list[Hook] = []
    for spec in group["hooks"]:
        hook = _hook_from_config(spec, event, source, project_dir, check, problems)
        if hook is not None:
            hooks.append(hook)
    problem = _matcher_problem(matcher)
    if problem:
        problems.append(LoadProblem(HookWarning, "bad_matcher", f"{problem}; as in Claude Code, these hooks never fire", source, matcher))
        return None
    return HookMatcher(matcher, tuple(hooks)) if hooks else None


def _hook_from_config(
    spec: Any, event: str, source: str, project_dir: str | None, check: bool, problems: list[LoadProblem]
) -> Hook | None:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise PermissionConfigError('each hook needs a "type" ("command", "prompt", "agent", "http" or "mcp_tool")',
                                    source=source, item=json.dumps(spec))
    kind = spec["type"]
    if kind in _OTHER_HOOK_TYPES:
        problems.append(LoadProblem(HookWarning, "unsupported_hook_type", f"{kind!r} hooks are not run by this scheduler; "
                                    "this one never runs", source, str(spec.get("prompt") or spec.get("url") or kind)))
        return None
    if kind != "command" or not isinstance(spec.get("command"), str) or not spec["command"].strip():
        raise PermissionConfigError('a command hook needs {"type": "command", "command": "..."}', source=source, item=json.dumps(spec))
    command = spec["command"]
    timeout = spec.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise PermissionConfigError("a hook timeout must be a positive number of seconds", source=source, item=command)
    if spec.get("shell") not in (None, "bash"):
        problems.append(LoadProblem(HookWarning, "unsupported_hook_type", f"shell {spec['shell']!r} is not supported here "
                                    "(hooks run with bash); this hook never runs", source, command))
        return None
    for option, why in _UNSUPPORTED_OPTIONS.items():
        if spec.get(option):
            problems.append(LoadProblem(HookWarning, "unsupported_option", f"{option!r} {why}", source, command))
    condition = None
    if spec.get("if") is not None:
        condition = _condition_from_config(spec["if"], source, project_dir, command, problems)
    if check:
        problem = probe_command(command, project_dir)
        if problem:
            problems.append(LoadProblem(HookWarning, "missing_program", problem, source, command))
    return CommandHook(command, float(timeout), source=source, condition=condition)


def _condition_from_config(text: Any, source: str, project_dir: str | None, command: str, problems: list[LoadProblem]) -> PermissionRule | None:
    try:
        return make_rule(str(text), "ask", source=source, root=project_dir, origin=source)
    except PermissionConfigError as err:
        problems.append(LoadProblem(HookWarning, "bad_condition", f"the 'if' condition {text!r} cannot be read ({err}); "
                                    "the hook runs for every call its matcher selects", source, command))
        return None


def _condition_holds(rule: PermissionRule, event: HookEvent) -> bool:
    """Claude Code's ``if``: the call must match the rule; when that cannot be told, the hook runs."""
    if not rule.covers_tool(event.tool_name, getattr(event.tool, "aliases", ())):
        return False
    if rule.value.content is None:
        return True
    data = event.tool_input
    tool = rule.value.tool
    if tool in SHELL_RULE_TOOLS:
        # As Claude Code: any subcommand's argv (quotes removed) matching fires the hook,
        # and so does a command that cannot be parsed. We also look through runners
        # (command, env, xargs, sh -c...) and count a match the shell's computed words
        # may make: stricter than Claude Code, whose conditions see argv as written.
        command = data.get("command")
        if not isinstance(command, str):
            return True
        parts = _subcommands(command)
        return parts is None or any(rule_matches_example(rule, part) for part in parts) or _may_run(rule, command)
    if tool in READ_RULE_TOOLS or tool in EDIT_RULE_TOOLS:
        path = next((data[k] for k in ("file_path", "notebook_path", "path") if isinstance(data.get(k), str)), None)
        return path is None or rule_matches_example(rule, event.ctx.resolve_path(path))
    if tool == "WebFetch" and isinstance(data.get("url"), str):
        return rule_matches_example(rule, data["url"])
    return True


def _may_run(rule: PermissionRule, command: str) -> bool:
    try:
        return shell_rule_may_run(rule, command)
    except Exception:  # noqa: BLE001 - cannot tell: the hook runs
        return True


def _subcommands(command: str) -> list[str] | None:
    try:
        from ..shell import subcommand_strings

        return subcommand_strings(command)
    except Exception:  # noqa: BLE001 - cannot parse: the hook runs
        return None


_SHELL_SYNTAX = re.compile(r"[;&|<>(){}`\n]|\$\(|\[\[")
_INTERPRETERS = frozenset({"python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "deno", "bun"})


def probe_command(command: str, project_dir: str | None) -> str | None:
    """Why a simple hook command will fail to start, judged before any call (None: no
    reason found). Only a plain ``program args...`` command is judged; anything with
    shell syntax (``CMD=$(jq ...); if ...``) is left to the shell. Never an error."""
    base = project_dir or os.getcwd()
    env = {**os.environ, "CLAUDE_PROJECT_DIR": base}
    expanded = re.sub(r"\$\{?(CLAUDE_PROJECT_DIR|HOME)\}?", lambda m: env.get(m.group(1), m.group(0)), command)
    if _SHELL_SYNTAX.search(expanded) or "$" in expanded:
        return None
    try:
        words = shlex.split(expanded)
    except ValueError:
        return None
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]
    if not words or words[0] in ("if", "for", "while", "case", "[", "test", "!", "exec", "eval", "source", "."):
        return None
    program = os.path.expanduser(words[0])
    after = "it will exit 127 when it runs, a non-blocking error that lets the call go ahead (as in Claude Code)"
    if "/" in program:
        path = os.path.join(base, program)
        if not os.path.exists(path):
            return f"the program {words[0]} does not exist: {after}"
        if not os.access(path, os.X_OK):
            return f"the program {words[0]} is not executable: it will exit 126 when it runs, a non-blocking error"
    elif shutil.which(program) is None:
        return f"the program {program!r} is not on PATH: {after}"
    if os.path.basename(program) in _INTERPRETERS and len(words) > 1 and not words[1].startswith("-"):
        script = os.path.expanduser(words[1])
        if re.search(r"\.(py|sh|js|mjs|ts|rb|pl)$", script) and not os.path.exists(os.path.join(base, script)):
            return f"the script {words[1]} does not exist: the hook will fail (a non-blocking error) when it runs"
    return None


# -- running one hook ----------------------------------------------------------------------------
def _shell() -> list[str]:
    """bash when installed, else sh. Claude Code spawns the command with node's
    ``shell: true`` (``/bin/sh -c``), which is bash on macOS; running bash everywhere keeps
    hooks written with bash syntax (``[[ ... ]]``) working on Linux too."""
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


async def _run_command(hook: CommandHook, payload: dict[str, Any], cwd: str, env: dict[str, str], event: str) -> HookResult:
    data = json.dumps(payload, default=str).encode() + b"\n"
    try:
        proc = await asyncio.create_subprocess_exec(
            *_shell(), hook.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
        )
    except OSError as err:
        return HookResult(hook, error=f"could not be started ({err})", error_kind="start_failed")
    try:
        out, errors = await asyncio.wait_for(proc.communicate(data), hook.timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as stop:
        _kill(proc)
        await proc.wait()
        if isinstance(stop, asyncio.CancelledError):
            raise
        return HookResult(hook, error=f"did not finish within {hook.timeout:g} s and was stopped", error_kind="timeout")
    stderr = errors.decode("utf-8", "replace").strip()
    code = proc.returncode
    if code == 2:
        return HookResult(hook, blocking_error=stderr or "(the hook wrote nothing to stderr)")
    if code == 127:
        return HookResult(hook, error=f"exited 127: a program it runs was not found ({stderr or 'command not found'})",
                          error_kind="missing_program")
    if code == 126:
        return HookResult(hook, error=f"exited 126: a program it runs is not executable ({stderr or 'permission denied'})",
                          error_kind="not_executable")
    if code != 0:
        return HookResult(hook, error=f"exited with status {code}" + (f": {stderr}" if stderr else ""), error_kind="exit_status")
    try:
        text = out.decode("utf-8").strip()
    except UnicodeDecodeError:
        return HookResult(hook, error="printed output that is not UTF-8 text", error_kind="invalid_output")
    if not text.startswith("{"):
        return HookResult(hook)  # plain text is a log line, as in Claude Code
    try:
        answer = json.loads(text)
    except json.JSONDecodeError as bad:
        # Claude Code reads unparseable output as plain text and carries on; we say so.
        return HookResult(hook, error=f"printed malformed JSON ({bad.msg} at line {bad.lineno} column {bad.colno}); "
                          "its answer was ignored", error_kind="invalid_output")
    return _from_answer(hook, answer, event)


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the hook's own process group, started by us
    except (ProcessLookupError, PermissionError):
        pass


async def _run_python(hook: PythonHook, payload: dict[str, Any], event: str) -> HookResult:
    try:
        if inspect.iscoroutinefunction(hook.fn):
            answer = await asyncio.wait_for(hook.fn(payload), hook.timeout)
        else:
            answer = await asyncio.wait_for(asyncio.to_thread(hook.fn, payload), hook.timeout)
            if inspect.isawaitable(answer):
                answer = await asyncio.wait_for(answer, hook.timeout)
    except HookBlock as block:
        return HookResult(hook, blocking_error=str(block) or "(blocked without a reason)")
    except asyncio.TimeoutError:
        return HookResult(hook, error=f"did not finish within {hook.timeout:g} s", error_kind="timeout")
    except Exception as err:  # noqa: BLE001 - a broken hook is a hook error, named; strict hooks block on it
        return HookResult(hook, error=f"raised {type(err).__name__}: {err}", error_kind="exception")
    if answer is None:
        return HookResult(hook)
    return _from_answer(hook, answer, event)


_LEGACY: dict[str, Literal["allow", "deny"]] = {"approve": "allow", "block": "deny"}
_SPECIFIC_FIELDS: dict[str, list[tuple[str, type | tuple[type, ...]]]] = {
    "PreToolUse": [("permissionDecisionReason", str), ("additionalContext", str), ("updatedInput", dict)],
    "PostToolUse": [("additionalContext", str)],
    "PostToolUseFailure": [("additionalContext", str)],
    "PermissionRequest": [("decision", dict)],
    "PermissionDenied": [("retry", bool)],
}


def _from_answer(hook: Hook, answer: Any, event: str) -> HookResult:
    """Read Claude Code's JSON answer. An answer that breaks its schema is ignored, as
    Claude Code ignores it, and reported (a non-blocking error; strict hooks block)."""

    def bad(why: str) -> HookResult:
        return HookResult(hook, error=f"answered with invalid JSON output: {why}; the answer was ignored", error_kind="invalid_output")

    if not isinstance(answer, dict):
        return bad("expected a JSON object")
    specific = answer.get("hookSpecificOutput", {})
    if not isinstance(specific, dict):
        return bad("hookSpecificOutput must be an object")
    named = specific.get("hookEventName")
    # Claude Code's schema requires hookEventName and ignores an answer without it; we accept
    # a missing one (Python hooks rarely write it), but an answer for another event is ignored.
    if named is not None and named != event:
        return bad(f"hookSpecificOutput is for {named!r}, but this is a {event} hook")
    checks: list[tuple[str, Any, type | tuple[type, ...]]] = [
        ("continue", answer.get("continue", True), bool),
        ("suppressOutput", answer.get("suppressOutput", False), bool),
        ("stopReason", answer.get("stopReason", ""), str),
        ("reason", answer.get("reason", ""), str),
        ("systemMessage", answer.get("systemMessage", ""), str),
    ]
    checks += [(name, specific[name], kind) for name, kind in _SPECIFIC_FIELDS.get(event, []) if name in specific]
    for name, value, kind in checks:
        if not isinstance(value, kind):
            return bad(f"{name} has the wrong type")
    legacy = answer.get("decision")
    if legacy is not None and legacy not in _LEGACY:
        return bad(f"decision must be 'approve' or 'block', not {legacy!r}")
    result = HookResult(hook, system_message=answer.get("systemMessage") or None)
    if answer.get("continue", True) is False:
        result.prevent_continuation = True
        result.stop_reason = answer.get("stopReason") or None
    result.reason = answer.get("reason") or None
    if legacy == "block":
        result.blocking_error = result.reason or "Blocked by hook"
    result.decision = _LEGACY[legacy] if legacy else None
    if event == "PreToolUse":
        explicit = specific.get("permissionDecision")
        if explicit is not None and explicit not in ("allow", "deny", "ask"):
            return bad(f"permissionDecision must be allow, deny or ask, not {explicit!r}")
        if explicit is not None:
            result.decision = explicit
            result.blocking_error = None
            result.reason = specific.get("permissionDecisionReason") or result.reason
        result.updated_input = specific.get("updatedInput")
        result.additional_context = specific.get("additionalContext") or None
    elif event in ("PostToolUse", "PostToolUseFailure"):
        result.additional_context = specific.get("additionalContext") or None
        result.updated_output = specific.get("updatedMCPToolOutput")
    elif event == "PermissionRequest" and "decision" in specific:
        problem = _check_request_decision(specific["decision"])
        if problem:
            return bad(problem)
        result.permission_request = specific["decision"]
    elif event == "PermissionDenied":
        result.retry = bool(specific.get("retry"))
    return result


def _check_request_decision(decision: dict[str, Any]) -> str | None:
    if decision.get("behavior") not in ("allow", "deny"):
        return f"decision.behavior must be 'allow' or 'deny', not {decision.get('behavior')!r}"
    for name, kind in (("updatedInput", dict), ("updatedPermissions", list), ("message", str), ("interrupt", bool)):
        if name in decision and not isinstance(decision[name], kind):
            return f"decision.{name} has the wrong type"
    return None


# -- combining -------------------------------------------------------------------------------------
_RANK = {"deny": 3, "ask": 2, "allow": 1}


def _notices(event: str, r: HookResult, *, strict: bool) -> list[HookNotice]:
    found = []
    if r.error:
        found.append(HookNotice(event, r.label, r.error_kind or "error", r.error, r.hook.source, blocked=strict))
    if r.system_message:
        found.append(HookNotice(event, r.label, "system_message", r.system_message, r.hook.source))
    return found


def _strict_text(event: str, tool_name: str, failed: list[HookResult]) -> str:
    names = "; ".join(f"{event} hook {r.label!r} {r.error}" for r in failed)
    return f"{names}. Hooks are strict, so the {tool_name} call was not run."


def combine_pre(tool_name: str, results: list[HookResult], *, strict: bool = False) -> PreToolUseOutcome:
    """deny > ask > allow; context and stop requests add up; a hook error is a notice
    (the call goes on, as in Claude Code) unless hooks are strict."""
    outcome = PreToolUseOutcome()
    best: Decision | None = None
    for r in results:
        outcome.notices.extend(_notices("PreToolUse", r, strict=strict))
        if r.error:
            continue
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        decision = _hook_decision(tool_name, r)
        if decision is None:
            if r.updated_input is not None:
                outcome.updated_input, outcome.updated_by = r.updated_input, r.label
            continue
        if best is None or _RANK[decision.behavior] >= _RANK[best.behavior]:
            best = decision
    failed = [r for r in results if r.error]
    if strict and failed:
        outcome.stop = _strict_text("PreToolUse", tool_name, failed)
    outcome.decision = best
    return outcome


def _hook_decision(tool_name: str, r: HookResult) -> Decision | None:
    reason = DecisionReason("hook", r.reason or r.blocking_error or "", source=f"PreToolUse:{tool_name} {r.label}")
    if r.blocking_error is not None:
        return Decision.deny(f"A PreToolUse hook ({r.label}) blocked {tool_name}: {r.blocking_error}", reason)
    if r.decision is None:
        return None
    verb = {"allow": "allowed", "deny": "blocked", "ask": "asked for approval of"}[r.decision]
    message = r.reason or f"A PreToolUse hook ({r.label}) {verb} this {tool_name} call."
    if r.decision == "deny" and r.reason:
        message = f"A PreToolUse hook ({r.label}) blocked {tool_name}: {r.reason}"
    return Decision(r.decision, message=message, updated_input=r.updated_input, reason=reason)


def combine_post(event: str, results: list[HookResult], *, strict: bool = False) -> PostToolUseOutcome:
    outcome = PostToolUseOutcome()
    errors: list[str] = []
    for r in results:
        outcome.notices.extend(_notices(event, r, strict=strict))
        if r.error:
            if strict:
                errors.append(f"{event} hook {r.label!r} {r.error} (hooks are strict)")
            continue
        if r.blocking_error is not None:
            errors.append(f"{event} hook {r.label!r}: {r.blocking_error}")
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        if r.updated_output is not None:
            outcome.updated_output = r.updated_output
    outcome.blocking_error = "\n".join(errors) or None
    return outcome


def combine_permission_request(tool_name: str, results: list[HookResult], *, strict: bool = False) -> PermissionRequestOutcome:
    """A deny from any hook beats an allow. Exit 2 counts as a deny (Claude Code has no
    use for it here; refusing is the safe reading). Under strict hooks a failed hook denies."""
    outcome = PermissionRequestOutcome()
    deny: Decision | None = None
    allow: Decision | None = None
    for r in results:
        outcome.notices.extend(_notices("PermissionRequest", r, strict=strict))
        where = DecisionReason("hook", r.error or r.blocking_error or "", source=f"PermissionRequest:{tool_name} {r.label}")
        if r.error:
            if strict:
                deny = deny or Decision.deny(_strict_text("PermissionRequest", tool_name, [r]), where)
            continue
        if r.blocking_error is not None or r.decision == "deny":
            text = r.blocking_error or r.reason or "no reason given"
            deny = deny or Decision.deny(f"A PermissionRequest hook ({r.label}) denied this {tool_name} call: {text}", where)
            continue
        answer = r.permission_request
        if answer is None:
            continue
        outcome.updated_permissions.extend(answer.get("updatedPermissions") or [])
        if answer["behavior"] == "deny":
            message = answer.get("message") or f"A PermissionRequest hook ({r.label}) denied this {tool_name} call."
            deny = deny or Decision.deny(message, replace(where, detail=answer.get("message") or "denied"),
                                         abort_turn=bool(answer.get("interrupt")))
        else:
            allow = Decision.allow(answer.get("updatedInput"), replace(where, detail=f"allowed by {r.label}"))
    outcome.decision = deny or allow
    return outcome


# -- the transcript a bare scheduler run hands to hooks ----------------------------------------------
class _RunTranscripts:
    """Hooks always get a real ``transcript_path``. An agent loop writes the session's file
    (``ctx.transcript_path``); for a bare scheduler run, a file under the session folder
    is written here, only when a hook fires, holding what is known: the conversation in
    ``ctx.messages`` and an assistant entry for each tool_use that reached a hook."""

    def __init__(self) -> None:
        self._logs: dict[Path, tuple[TranscriptWriter, set[str]]] = {}

    def path_for(self, event: HookEvent) -> str | None:
        ctx = event.ctx
        if ctx.transcript_path is not None:
            return str(ctx.transcript_path)
        path = transcript_file_for(ctx.session_dir, ctx.session_id)
        try:
            writer, known = self._logs.get(path) or self._open(path, event)
            if event.tool_use_id and event.tool_use_id not in known:
                writer.append_assistant([{"type": "tool_use", "id": event.tool_use_id, "name": event.tool_name,
                                          "input": event.tool_input}])
                known.add(event.tool_use_id)
        except (OSError, TypeError, ValueError):
            return str(path) if path.exists() else None
        return str(path)

    def _open(self, path: Path, event: HookEvent) -> tuple[TranscriptWriter, set[str]]:
        writer = TranscriptWriter(path, event.ctx.session_id, event.ctx.cwd)
        if path.exists() and path.stat().st_size:
            known = {b["id"] for b in read_transcript(path).tool_uses if isinstance(b.get("id"), str)}
        else:
            writer.append_messages(event.ctx.messages)
            known = set(_tool_use_ids(event.ctx.messages))
        self._logs[path] = (writer, known)
        return writer, known


def _tool_use_ids(messages: Iterable[Any]) -> Iterable[str]:
    for message in messages:
        data = message.to_dict() if hasattr(message, "to_dict") else message
        content = data.get("content") if isinstance(data, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                yield block["id"]
