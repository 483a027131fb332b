"""Running one hook and reading its answer, as Claude Code does.

A command hook is a shell command string, run by a shell (``bash -c``, else ``sh -c``)
with the event as JSON on stdin. Exit 0: stdout may hold a JSON answer (plain text is a
log line); exit 2: a blocking error, stderr is the reason; anything else: a non-blocking
error. A Python hook receives the same dict and returns None or the same JSON-shaped dict
(or raises ``HookBlock``). An answer that breaks Claude Code's schema is ignored and
reported.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import signal
from typing import Any, Literal

from ._hook_types import CommandHook, Hook, HookBlock, HookResult, PythonHook

__all__ = ["run_command", "run_python"]


def _shell() -> list[str]:
    """bash when installed, else sh. Claude Code spawns the command with node's
    ``shell: true`` (``/bin/sh -c``), which is bash on macOS; running bash everywhere keeps
    hooks written with bash syntax (``[[ ... ]]``) working on Linux too."""
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


async def run_command(hook: CommandHook, payload: dict[str, Any], cwd: str, env: dict[str, str], event: str) -> HookResult:
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


async def run_python(hook: PythonHook, payload: dict[str, Any], event: str) -> HookResult:
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
