"""Reading a settings.json ``hooks`` entry, and judging a command hook before it runs.

Loading never fails because of a hook's program: a program that cannot be found is a
load warning (``probe_command``; exit 127 at run time). What breaks Claude Code's schema
raises ``PermissionConfigError``; what only cannot act here (a hook type not run here, an
option we do not honour, an ``if`` that cannot be read) is a load problem.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

from ..shell import line_facts
from ._errors import PermissionConfigError
from ._hook_types import DEFAULT_HOOK_TIMEOUT, CommandHook, Hook, HookMatcher, matcher_problem
from ._problems import HookWarning, LoadProblem
from ._rules import PermissionRule, make_rule

__all__ = ["STRICT_LOAD_ERRORS", "group_from_config", "probe_command"]

_OTHER_HOOK_TYPES = frozenset({"prompt", "agent", "http", "mcp_tool"})  # valid in Claude Code, not run here
_UNSUPPORTED_OPTIONS = {
    "async": "runs in the background in Claude Code; here the call waits for it",
    "asyncRewake": "runs in the background in Claude Code; here the call waits for it",
    "once": "runs once per session in Claude Code; here it runs every time it matches",
}
# Load problems that strict hooks refuse: a configured tool hook that could never act.
STRICT_LOAD_ERRORS = frozenset({"unknown_event", "bad_matcher", "unsupported_hook_type", "bad_condition"})


def group_from_config(
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
    problem = matcher_problem(matcher)
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
    parts = line_facts(expanded, base).parts  # the program it runs, assignments and wrappers peeled
    if not parts or len(parts) != 1 or parts[0].words is None:
        return None
    words = list(parts[0].words)
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
