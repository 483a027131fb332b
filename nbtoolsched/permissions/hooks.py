"""PreToolUse / PostToolUse / PostToolUseFailure hooks: Python callables and command
hooks that speak Claude Code's protocol, so existing hook scripts work unchanged.

A command hook gets the event as JSON on stdin. Exit 0 is success (stdout may hold a
JSON answer), exit 2 blocks with stderr as the reason, any other exit is a
non-blocking error. A hook that cannot be run, times out, or answers with malformed
JSON fails closed: the call does not run, and the message names the hook.
A Python hook receives the same dict and returns None or the same JSON-shaped dict (or
raises ``HookBlock``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import shlex
import shutil
import signal
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Union

from ..tool import Decision, DecisionReason
from .base import HookEvent, PostToolUseOutcome, PreToolUseOutcome
from .errors import PermissionConfigError

__all__ = [
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
HookEventName = Literal["PreToolUse", "PostToolUse", "PostToolUseFailure"]
HOOK_EVENTS: tuple[str, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
# Claude Code events this scheduler does not fire: accepted in settings, never run.
OTHER_CLAUDE_EVENTS = frozenset(
    {"Notification", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "SubagentStop", "SubagentStart",
     "PreCompact", "PermissionRequest", "PermissionDenied"}
)
_SHELL_WORDS = frozenset({"exit", "if", "for", "while", "case", "[", "[[", "{", "(", "!", "cd", "export", "source", ".", "set", "true", "false", "echo", "printf", "read", "eval", "exec", "test", ":"})
_INTERPRETERS = frozenset({"python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "deno", "bun"})


class HookBlock(Exception):
    """Raise from a Python hook to block the call (like exit code 2); the text goes to the model."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.command


@dataclass(frozen=True, slots=True)
class PythonHook:
    fn: Callable[[dict[str, Any]], Any]
    timeout: float = DEFAULT_HOOK_TIMEOUT
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or getattr(self.fn, "__qualname__", repr(self.fn))


Hook = Union[CommandHook, PythonHook]


@dataclass(frozen=True)
class HookMatcher:
    """Which tools a group of hooks fires for: exact, ``A|B``, a regex, or ``*``/empty (all)."""

    matcher: str
    hooks: tuple[Hook, ...]

    def __post_init__(self) -> None:
        if self.matcher not in ("", "*") and not _is_simple(self.matcher):
            try:
                re.compile(self.matcher)
            except re.error as err:
                raise PermissionConfigError(f"the hook matcher is not a valid regex ({err})", item=self.matcher) from None

    def matches(self, tool_name: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        if _is_simple(self.matcher):
            return tool_name in self.matcher.split("|")
        return re.fullmatch(self.matcher, tool_name) is not None


def _is_simple(matcher: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_|-]*", matcher) is not None


@dataclass
class HookResult:
    """What one hook said about one event."""

    hook: str
    blocking_error: str | None = None  # exit 2, decision "block", or HookBlock
    decision: str | None = None  # allow | deny | ask
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None
    failure: str | None = None  # could not run, timed out, answered garbage: fail closed
    notice: str | None = None  # a non-blocking error


class Hooks:
    """The HookRunner the pipeline calls; runs every matching hook of an event in parallel."""

    def __init__(
        self,
        hooks: dict[str, Iterable[HookMatcher]] | None = None,
        *,
        project_dir: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.matchers: dict[str, list[HookMatcher]] = {event: [] for event in HOOK_EVENTS}
        self.project_dir = str(project_dir) if project_dir is not None else None
        self.env = dict(env or {})
        self.ignored_events: list[str] = []
        for event, matchers in (hooks or {}).items():
            for matcher in matchers:
                self._add_matcher(event, matcher)

    # -- building --------------------------------------------------------------------------
    def add(self, event: str, hook: Hook | Callable[[dict[str, Any]], Any], matcher: str = "*", *, check: bool = True) -> None:
        """Add one hook: a CommandHook, a PythonHook, or a plain (async) function."""
        if not isinstance(hook, (CommandHook, PythonHook)):
            hook = PythonHook(hook)
        self._add_matcher(event, HookMatcher(matcher, (hook,)), check=check)

    def _add_matcher(self, event: str, matcher: HookMatcher, *, check: bool = True, source: str = "python") -> None:
        if event not in HOOK_EVENTS:
            raise PermissionConfigError(f"unknown hook event; supported: {', '.join(HOOK_EVENTS)}", source=source, item=event)
        for hook in matcher.hooks:
            if not hook.timeout or hook.timeout <= 0:
                raise PermissionConfigError("a hook timeout must be a positive number of seconds", source=source, item=hook.label)
            if check and isinstance(hook, CommandHook):
                problem = command_problem(hook.command, self.project_dir)
                if problem:
                    raise PermissionConfigError(problem, source=source, item=hook.label)
        self.matchers[event].append(matcher)

    def extend_from_config(self, config: Any, *, source: str, check: bool = True) -> None:
        """Read a settings.json ``hooks`` section; raises PermissionConfigError naming the file.

        ``check=False`` skips only the probe for whether each command exists."""
        if not isinstance(config, dict):
            raise PermissionConfigError("'hooks' must be an object of event name -> matcher list", source=source)
        for event, groups in config.items():
            if event in OTHER_CLAUDE_EVENTS:
                self.ignored_events.append(f"{event} ({source})")
                continue
            if event not in HOOK_EVENTS:
                raise PermissionConfigError("unknown hook event", source=source, item=event)
            if not isinstance(groups, list):
                raise PermissionConfigError("a hook event needs a list of {matcher, hooks}", source=source, item=event)
            for group in groups:
                self._add_matcher(event, _group_from_config(group, event, source), check=check, source=source)

    def __bool__(self) -> bool:
        return any(self.matchers.values())

    # -- running ----------------------------------------------------------------------------
    async def run(self, event: HookEvent) -> list[HookResult]:
        hooks: dict[Any, Hook] = {}
        for matcher in self.matchers.get(event.event, []):
            if matcher.matches(event.tool_name):
                for hook in matcher.hooks:
                    hooks.setdefault(hook.command if isinstance(hook, CommandHook) else hook, hook)  # same command: once
        if not hooks:
            return []
        payload = _payload(event)
        return list(await asyncio.gather(*(self._run_one(h, payload, event) for h in hooks.values())))

    async def _run_one(self, hook: Hook, payload: dict[str, Any], event: HookEvent) -> HookResult:
        if isinstance(hook, CommandHook):
            return await _run_command(hook, payload, event.ctx.cwd, self._env())
        return await _run_python(hook, payload)

    def _env(self) -> dict[str, str]:
        env = {**os.environ, **self.env}
        if self.project_dir:
            env["CLAUDE_PROJECT_DIR"] = self.project_dir
        return env

    async def pre_tool_use(self, event: HookEvent) -> PreToolUseOutcome:
        return combine_pre(event.tool_name, await self.run(event))

    async def post_tool_use(self, event: HookEvent) -> PostToolUseOutcome:
        return combine_post("PostToolUse", await self.run(event))

    async def post_tool_use_failure(self, event: HookEvent) -> PostToolUseOutcome:
        return combine_post("PostToolUseFailure", await self.run(event))


class NoHooks:
    """A HookRunner with no hooks at all."""

    async def pre_tool_use(self, event: HookEvent) -> PreToolUseOutcome:
        return PreToolUseOutcome()

    async def post_tool_use(self, event: HookEvent) -> PostToolUseOutcome:
        return PostToolUseOutcome()

    async def post_tool_use_failure(self, event: HookEvent) -> PostToolUseOutcome:
        return PostToolUseOutcome()


# -- config ------------------------------------------------------------------------------------
def _group_from_config(group: Any, event: str, source: str) -> HookMatcher:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        raise PermissionConfigError("each entry needs a 'hooks' list (and optionally a 'matcher')", source=source, item=event)
    matcher = group.get("matcher", "") or ""
    if not isinstance(matcher, str):
        raise PermissionConfigError("a matcher must be a string", source=source, item=str(matcher))
    hooks: list[Hook] = []
    for spec in group["hooks"]:
        if not isinstance(spec, dict) or spec.get("type") != "command" or not isinstance(spec.get("command"), str):
            raise PermissionConfigError(
                "only {\"type\": \"command\", \"command\": ...} hooks are supported", source=source, item=json.dumps(spec)
            )
        timeout = spec.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise PermissionConfigError("a hook timeout must be a number of seconds", source=source, item=spec["command"])
        hooks.append(CommandHook(spec["command"], float(timeout)))
    try:
        return HookMatcher(matcher, tuple(hooks))
    except PermissionConfigError as err:
        raise PermissionConfigError(str(err), source=source) from None


def command_problem(command: str, project_dir: str | None) -> str | None:
    """Why this hook command cannot run, judged before any call (None if it looks runnable)."""
    env = dict(os.environ)
    if project_dir:
        env["CLAUDE_PROJECT_DIR"] = project_dir
    expanded = re.sub(r"\$\{?CLAUDE_PROJECT_DIR\}?", lambda m: env.get("CLAUDE_PROJECT_DIR", m.group(0)), command)
    try:
        words = shlex.split(os.path.expandvars(expanded))
    except ValueError as err:
        return f"the hook command cannot be parsed ({err})"
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]
    if not words:
        return "the hook command is empty"
    program = words[0]
    base = project_dir or os.getcwd()
    if "/" in program:
        path = os.path.join(base, os.path.expanduser(program))
        if not os.path.exists(path):
            return f"the hook command {program} does not exist"
        if not os.access(path, os.X_OK):
            return f"the hook command {program} is not executable"
    elif program not in _SHELL_WORDS and shutil.which(program) is None:
        return f"the hook command {program!r} was not found on PATH"
    if os.path.basename(program) in _INTERPRETERS and len(words) > 1 and not words[1].startswith("-"):
        script = words[1]
        if ("/" in script or re.search(r"\.(py|sh|js|rb|pl|ts)$", script)) and not os.path.exists(os.path.join(base, os.path.expanduser(script))):
            return f"the hook script {script} does not exist"
    return None


# -- running one hook ----------------------------------------------------------------------------
def _payload(event: HookEvent) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": event.ctx.session_id,
        "transcript_path": None,
        "cwd": event.ctx.cwd,
        "hook_event_name": event.event,
        "tool_name": event.tool_name,
        "tool_input": event.tool_input,
        "tool_use_id": event.tool_use_id,
    }
    mode = getattr(event.ctx.permission_context, "mode", None)
    if isinstance(mode, str):
        payload["permission_mode"] = mode
    if event.event == "PostToolUse":
        payload["tool_response"] = event.tool_response
    if event.event == "PostToolUseFailure":
        payload["error"] = event.error
        payload["is_interrupt"] = event.is_interrupt
    return payload


async def _run_command(hook: CommandHook, payload: dict[str, Any], cwd: str, env: dict[str, str]) -> HookResult:
    data = json.dumps(payload, default=str).encode()
    try:
        proc = await asyncio.create_subprocess_shell(
            hook.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True,
        )
    except OSError as err:
        return HookResult(hook.label, failure=f"could not be started ({err})")
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), hook.timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as stop:
        _kill(proc)
        await proc.wait()
        if isinstance(stop, asyncio.CancelledError):
            raise
        return HookResult(hook.label, failure=f"timed out after {hook.timeout:g} s")
    stderr = err.decode("utf-8", "replace").strip()
    code = proc.returncode
    if code == 2:
        return HookResult(hook.label, blocking_error=stderr or "(the hook wrote nothing to stderr)")
    if code in (126, 127):
        return HookResult(hook.label, failure=f"could not be run (exit {code}: {stderr or 'command not found'})")
    if code != 0:
        return HookResult(hook.label, notice=f"exited with status {code}" + (f": {stderr}" if stderr else ""))
    try:
        text = out.decode("utf-8").strip()
    except UnicodeDecodeError:
        return HookResult(hook.label, failure="printed output that is not UTF-8 text")
    if not text.startswith(("{", "[")):
        return HookResult(hook.label)  # plain text is a log line, as in Claude Code
    try:
        answer = json.loads(text)
    except json.JSONDecodeError as err:
        return HookResult(hook.label, failure=f"printed malformed JSON ({err.msg} at line {err.lineno} column {err.colno})")
    return _from_answer(hook.label, answer)


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the hook's own process group, started by us
    except (ProcessLookupError, PermissionError):
        pass


async def _run_python(hook: PythonHook, payload: dict[str, Any]) -> HookResult:
    try:
        if inspect.iscoroutinefunction(hook.fn):
            answer = await asyncio.wait_for(hook.fn(payload), hook.timeout)
        else:
            answer = await asyncio.wait_for(asyncio.to_thread(hook.fn, payload), hook.timeout)
            if inspect.isawaitable(answer):
                answer = await asyncio.wait_for(answer, hook.timeout)  # type: ignore[arg-type]
    except HookBlock as block:
        return HookResult(hook.label, blocking_error=str(block) or "(blocked without a reason)")
    except asyncio.TimeoutError:
        return HookResult(hook.label, failure=f"timed out after {hook.timeout:g} s")
    except Exception as err:  # noqa: BLE001 - a broken hook fails closed, with its error named
        return HookResult(hook.label, failure=f"raised {type(err).__name__}: {err}")
    if answer is None:
        return HookResult(hook.label)
    return _from_answer(hook.label, answer)


_DECISIONS = {"approve": "allow", "block": "deny"}


def _from_answer(label: str, answer: Any) -> HookResult:
    """Read Claude Code's JSON answer; anything malformed is a failure, never ignored."""

    def bad(why: str) -> HookResult:
        return HookResult(label, failure=f"answered with invalid JSON output: {why}")

    if not isinstance(answer, dict):
        return bad("expected a JSON object")
    result = HookResult(label)
    specific = answer.get("hookSpecificOutput", {})
    if not isinstance(specific, dict):
        return bad("hookSpecificOutput must be an object")
    checks: list[tuple[Any, type | tuple[type, ...], str]] = [
        (answer.get("continue", True), bool, "continue must be true or false"),
        (answer.get("stopReason", ""), str, "stopReason must be a string"),
        (answer.get("reason", ""), str, "reason must be a string"),
        (specific.get("permissionDecisionReason", ""), str, "permissionDecisionReason must be a string"),
        (specific.get("additionalContext", ""), str, "additionalContext must be a string"),
        (specific.get("updatedInput", {}), dict, "updatedInput must be an object"),
    ]
    for value, kind, why in checks:
        if not isinstance(value, kind):
            return bad(why)
    legacy = answer.get("decision")
    if legacy is not None and legacy not in _DECISIONS:
        return bad(f"decision must be 'approve' or 'block', not {legacy!r}")
    explicit = specific.get("permissionDecision")
    if explicit is not None and explicit not in ("allow", "deny", "ask"):
        return bad(f"permissionDecision must be allow, deny or ask, not {explicit!r}")
    reason = specific.get("permissionDecisionReason") or answer.get("reason") or None
    if legacy == "block" and explicit is None:
        result.blocking_error = reason or "(blocked without a reason)"
    result.decision = explicit or (_DECISIONS[legacy] if legacy else None)
    result.reason = reason
    result.updated_input = specific.get("updatedInput")
    result.additional_context = specific.get("additionalContext") or None
    result.updated_output = specific.get("updatedMCPToolOutput")
    if answer.get("continue", True) is False:
        result.prevent_continuation = True
        result.stop_reason = answer.get("stopReason") or None
    return result


# -- combining -------------------------------------------------------------------------------------
_RANK = {"deny": 3, "ask": 2, "allow": 1}


def combine_pre(tool_name: str, results: list[HookResult]) -> PreToolUseOutcome:
    """deny > ask > allow; a failed hook stops the call; context and stop requests add up."""
    outcome = PreToolUseOutcome()
    best: Decision | None = None
    failures: list[str] = []
    for r in results:
        if r.failure:
            failures.append(f"PreToolUse hook {r.hook!r} failed: it {r.failure}")
            continue
        if r.notice:
            outcome.notices.append(f"PreToolUse hook {r.hook!r} {r.notice}")
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        decision = _hook_decision(tool_name, r)
        if decision is None:
            if r.updated_input is not None:
                outcome.updated_input, outcome.updated_by = r.updated_input, r.hook
            continue
        if best is None or _RANK[decision.behavior] >= _RANK[best.behavior]:
            best = decision
    if failures:
        outcome.stop = "; ".join(failures) + f". The {tool_name} call was not run."
    outcome.decision = best
    return outcome


def _hook_decision(tool_name: str, r: HookResult) -> Decision | None:
    reason = DecisionReason("hook", r.reason or r.blocking_error or "", source=f"PreToolUse:{tool_name} {r.hook}")
    if r.blocking_error is not None:
        return Decision.deny(f"A PreToolUse hook ({r.hook}) blocked {tool_name}: {r.blocking_error}", reason)
    if r.decision is None:
        return None
    verb = {"allow": "allowed", "deny": "blocked", "ask": "asked for approval of"}[r.decision]
    message = r.reason or f"A PreToolUse hook ({r.hook}) {verb} this {tool_name} call."
    if r.decision == "deny" and r.reason:
        message = f"A PreToolUse hook ({r.hook}) blocked {tool_name}: {r.reason}"
    return Decision(r.decision, message=message, updated_input=r.updated_input, reason=reason)  # type: ignore[arg-type]


def combine_post(event: str, results: list[HookResult]) -> PostToolUseOutcome:
    outcome = PostToolUseOutcome()
    errors: list[str] = []
    for r in results:
        if r.failure:
            errors.append(f"{event} hook {r.hook!r} failed: it {r.failure}")
        elif r.blocking_error is not None:
            errors.append(f"{event} hook {r.hook!r}: {r.blocking_error}")
        if r.notice:
            outcome.notices.append(f"{event} hook {r.hook!r} {r.notice}")
        if r.additional_context:
            outcome.additional_context.append(r.additional_context)
        if r.prevent_continuation:
            outcome.prevent_continuation = True
            outcome.stop_reason = outcome.stop_reason or r.stop_reason
        if r.updated_output is not None:
            outcome.updated_output = r.updated_output
    outcome.blocking_error = "\n".join(errors) or None
    return outcome
