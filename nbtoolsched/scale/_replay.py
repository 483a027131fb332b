"""Replaying one transcript under a policy: every call re-decided, re-partitioned and re-timed.

Nothing the session ran is run again (unless ``checkout`` asks for the read-only calls).
For each recorded call, as the scheduler's pipeline would:

1. the real built-in tool is looked up in the real registry and the input validated;
   one of Claude Code's own tools the registry does not have (TodoWrite, Agent, Skill,
   the task and plan-mode tools, and older names such as Task, KillShell or LS) is a
   stand-in with Claude Code's facts (``_claude_tools.CLAUDE_TOOLS``: concurrency safety,
   read-only, whether it asks); any other tool is decided by the permission rules alone
   (``Permissions.tool_for``) and partitioned as not concurrency-safe (fail closed), and
   so is a call whose input is not an object (reported as malformed);
2. the policy's PreToolUse hooks run, then the real permission engine decides
   (``Permissions.evaluate``; an ask goes through ``Permissions.decide`` with a
   simulated person, so dontAsk, auto mode, PermissionRequest hooks and "always
   allow" act as they would). The outcome is ``allow`` (nobody asked), ``prompt`` (a
   person would have been asked) or ``deny``, with the rule, mode or check that
   settled it;
3. each answer's calls are partitioned (``partition_prepared``, the scheduler's own).

Time is estimated from the transcript's own timestamps. A call's duration is the time
from when it could start in the recorded session (its tool_use entry, or the last
result of the batches before it, since Claude Code's executor runs them first) to its
tool_result entry: an upper bound, since results are written in order. The session's
``serial_s`` is every call run alone, one after another; ``simulated_s`` runs the
policy's batches (a parallel batch takes its longest calls, at most ``max_concurrency``
at a time; a denied call takes no time; each prompt adds ``prompt_seconds``);
``observed_s`` is what the recorded session spent from each answer's first tool_use to
its last tool_result.
"""

from __future__ import annotations

import heapq
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..execution._prepare import PreparedCall, ToolsByName, prepare_call
from ..permissions._base import HookEvent, PermissionRequest
from ..permissions._engine import Permissions
from .._registry import ToolRegistry
from .._session_log import read_transcript
from .._sync import run_sync
from ..scheduling._partition import partition_prepared
from ..scheduling._scheduler import Scheduler
from .._tool._base import Tool
from .._tool._context import ToolContext
from .._tool._decision import Decision, DecisionReason
from ..tools import default_registry
from ._calls import RecordedCall, RecordedSession, recorded_session, result_text
from ._claude_tools import claude_tool
from ._policy import Policy, PolicyApprover

__all__ = ["CallDecision", "RerunSummary", "SessionReplay", "replay_session", "areplay_session"]

Outcome = Literal["allow", "prompt", "deny"]
Status = Literal["ok", "partial", "empty", "unreadable"]


@dataclass(frozen=True, slots=True)
class CallDecision:
    """What the policy does with one recorded call."""

    tool_use_id: str
    tool: str
    outcome: Outcome
    decided_by: str  # the rule (and its file), or the mode or check that settled it
    batch: int  # 1-based, across the session
    parallel: bool  # its batch runs more than one call at once
    duration: float | None  # estimated from the transcript (None: no result or timestamp)
    known_tool: bool = True
    read_only: bool = False
    sidechain: bool = False
    summary: str = ""  # the call in a few words, for tables


@dataclass(frozen=True, slots=True)
class RerunSummary:
    """The read-only calls run again against a checkout of the session's repository."""

    calls: int = 0
    same: int = 0  # the result text matches the recorded one
    different: int = 0
    errors: int = 0  # ran, and failed (a file that is not in the checkout...)
    seconds: float = field(default=0.0, compare=False)  # measured: wall time of the re-run batches
    details: tuple[tuple[str, str], ...] = ()  # (tool_use_id, same | different | error)


@dataclass
class SessionReplay:
    """One transcript replayed under one policy."""

    path: str
    policy: str
    status: Status
    session_id: str | None = None
    cwd: str | None = None
    problems: list[str] = field(default_factory=list)
    calls: list[CallDecision] = field(default_factory=list)
    turns: int = 0
    batches: int = 0
    parallel_batches: int = 0
    observed_s: float = 0.0
    serial_s: float = 0.0
    simulated_s: float = 0.0
    rerun: RerunSummary | None = None

    @property
    def saved_s(self) -> float:
        """Time the policy's batches save against running every call alone."""
        return self.serial_s - self.simulated_s

    def count(self, outcome: Outcome) -> int:
        return sum(1 for c in self.calls if c.outcome == outcome)


_REGISTRY: ToolRegistry | None = None


def _registry() -> ToolRegistry:
    """One registry per process: tools are stateless between calls, and building one costs."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = default_registry()
    return _REGISTRY


class _ReplayTools(ToolsByName):
    """The tool each name stands for in a replay: the registry's, else Claude Code's own
    (``CLAUDE_TOOLS``: TodoWrite, Agent, the task tools...), else None."""

    def __missing__(self, name: str) -> Tool | None:
        found = self[name] = self.registry.get(name) or claude_tool(name)
        return found


def replay_session(
    path: str | os.PathLike[str],
    policy: Policy | None = None,
    *,
    include_sidechains: bool = False,
    checkout: str | os.PathLike[str] | None = None,
) -> SessionReplay:
    """Replay one transcript file (sync: runs its own event loop, beside a running one if
    there is one, as in a notebook; ``areplay_session`` is the async form)."""
    return run_sync(areplay_session(path, policy, include_sidechains=include_sidechains, checkout=checkout), reenter=False)


async def areplay_session(
    path: str | os.PathLike[str],
    policy: Policy | None = None,
    *,
    include_sidechains: bool = False,
    checkout: str | os.PathLike[str] | None = None,
) -> SessionReplay:
    policy = policy or Policy(name="default")
    try:
        transcript = read_transcript(path)
    except OSError as err:
        return SessionReplay(str(path), policy.name, "unreadable", problems=[f"the file cannot be read: {err.strerror or err}"])
    recorded = recorded_session(transcript, include_sidechains=include_sidechains)
    out = SessionReplay(str(path), policy.name, "ok", recorded.session_id, recorded.cwd, list(recorded.problems))
    if not recorded.calls:
        out.status = "empty"
        if not transcript.entries:
            out.problems.append("no entries at all: an empty file, or nothing but unreadable lines")
        else:
            out.problems.append("no tool calls to replay")
        return out
    cwd = recorded.cwd or os.getcwd()
    if recorded.cwd is None:
        out.problems.append("no entry names the session's cwd; paths are judged against the current directory")
    hook_dir = os.fspath(checkout) if checkout is not None else (cwd if os.path.isdir(cwd) else os.getcwd())
    perms = policy.permissions(cwd, hook_dir=hook_dir)
    if perms.hooks is not None and hook_dir != cwd:
        out.problems.append(f"the session's directory {cwd} is not here: its command hooks ran in {hook_dir}")
    registry = _registry()
    ctx = ToolContext(cwd, permission_context=perms, session_id=recorded.session_id or None, transcript_path=str(path),
                      registry=registry)
    person = PolicyApprover(policy.prompt_answer)
    unknown: dict[str, int] = {}
    invalid: dict[str, int] = {}
    malformed: dict[tuple[str, str], int] = {}
    tools = _ReplayTools(registry)
    batch_base = 0
    for number, turn in enumerate(recorded.turns):
        prepared = [prepare_call(i, {"type": "tool_use", "id": c.tool_use_id, "name": c.name, "input": c.input}, registry, tools=tools)
                    for i, c in enumerate(turn)]
        batches = partition_prepared(prepared)
        batch_of = {id(call): b for b in batches for call in b.calls}
        durations = _durations(turn, [batch_of[id(p)].number for p in prepared])
        out.observed_s += _observed(turn)
        for call, prep, duration in zip(turn, prepared, durations):
            batch = batch_of[id(prep)]
            found = prep.tool if prep.tool is not None else tools[call.name]
            known = found is not None
            if not isinstance(call.input, dict):  # a tool the file names, with an input that is no object
                key = (call.name, type(call.input).__name__)
                malformed[key] = malformed.get(key, 0) + 1
            elif not known:
                unknown[call.name] = unknown.get(call.name, 0) + 1
            elif prep.error is not None:
                invalid[call.name] = invalid.get(call.name, 0) + 1
            tool = found if found is not None else perms.tool_for(call.name)
            data = call.input if isinstance(call.input, dict) else {}
            outcome, reason = await _decide(perms, tool, prep, data, ctx, person, policy.run_hooks)
            out.calls.append(CallDecision(
                call.tool_use_id, call.name, outcome, _label(reason), batch_base + batch.number, len(batch.calls) > 1,
                duration, known, _read_only(prep, cwd), call.sidechain, _summary(call.name, data),
            ))
            if duration is not None:
                out.serial_s += duration
        turn_decisions = out.calls[-len(turn):]
        out.simulated_s += _simulated(batches, turn_decisions, policy)
        out.parallel_batches += sum(1 for b in batches if len(b.calls) > 1)
        batch_base += len(batches)
    out.turns = len(recorded.turns)
    out.batches = batch_base
    if unknown:
        names = ", ".join(f"{n} x{k}" for n, k in sorted(unknown.items()))
        out.problems.append(f"calls to tools this registry does not have ({names}): decided by the permission rules alone, "
                            "partitioned as not concurrency-safe")
    if invalid:
        names = ", ".join(f"{n} x{k}" for n, k in sorted(invalid.items()))
        out.problems.append(f"calls whose input the tool's schema refuses ({names}): decided on the raw input, "
                            "partitioned as not concurrency-safe")
    if malformed:
        names = ", ".join(f"{n} x{k} (a {kind})" for (n, kind), k in sorted(malformed.items()))
        out.problems.append(f"calls whose input is not an object ({names}): malformed, so Claude Code refuses them before "
                            "any permission check; decided as an empty input, partitioned as not concurrency-safe")
    if out.problems:
        out.status = "partial"
    if checkout is not None:
        out.rerun = await _rerun(recorded, out.calls, cwd, Path(checkout))
    return out


async def _decide(
    perms: Permissions, tool: Tool, prep: PreparedCall, data: dict[str, Any], ctx: ToolContext, person: PolicyApprover, run_hooks: bool
) -> tuple[Outcome, DecisionReason | None]:
    """The pipeline's permission step for one call, with a simulated person."""
    call_ctx = ctx.for_call(prep.tool_use_id, ctx.abort)
    observable = dict(data)
    if prep.tool is not None and prep.parsed is not None:
        prep.tool.backfill_observable_input(observable, call_ctx)
    hook_decision: Decision | None = None
    hooks = perms.hooks if run_hooks else None
    if hooks is not None:
        pre = await hooks.pre_tool_use(HookEvent("PreToolUse", tool, tool.name, observable, prep.tool_use_id, call_ctx))
        if pre.stop is not None:
            return "deny", DecisionReason("hook", "a hook failed under strict hooks")
        hook_decision = pre.decision
    explanation = await perms.evaluate(tool, observable, prep.parsed, call_ctx, hook_decision)
    if explanation.behavior in ("allow", "deny"):
        return explanation.behavior, explanation.decision.reason  # type: ignore[return-value]
    person.asked = False
    request = PermissionRequest(tool, observable, prep.parsed if prep.parsed is not None else observable, call_ctx,
                                prep.tool_use_id, hook_decision, person, None, hooks)
    final = await perms.decide(request)
    if person.asked:
        return "prompt", explanation.decision.reason
    return ("allow" if final.behavior == "allow" else "deny"), final.reason


def _label(reason: DecisionReason | None) -> str:
    if reason is None:
        return "default"
    if reason.rule:
        return f"{reason.rule} ({reason.source})" if reason.source else reason.rule
    if not reason.detail:
        return reason.kind
    detail = reason.detail if len(reason.detail) <= 80 else reason.detail[:77] + "..."  # a compound command lists every part
    return f"{reason.kind}: {detail}"


def _read_only(prep: PreparedCall, cwd: str) -> bool:
    if prep.tool is None or prep.parsed is None:
        return False
    try:
        return bool(prep.tool.is_read_only_in(prep.parsed, cwd))
    except Exception:  # noqa: BLE001 - cannot tell: not read-only
        return False


def _summary(name: str, data: dict[str, Any]) -> str:
    for key in ("command", "file_path", "pattern", "path", "url", "notebook_path", "query", "skill", "description"):
        value = data.get(key)
        if isinstance(value, str):
            text = " ".join(value.split())
            return f"{name}: {text[:60]}{'...' if len(text) > 60 else ''}"
    return name


def _durations(turn: list[RecordedCall], batch_numbers: list[int]) -> list[float | None]:
    """Each call's time in the recorded session: from when it could start to its result."""
    out: list[float | None] = []
    for i, call in enumerate(turn):
        if call.used_at is None or call.result_at is None:
            out.append(None)
            continue
        earlier = [c.result_at for c, b in zip(turn[:i], batch_numbers[:i]) if b < batch_numbers[i] and c.result_at is not None]
        start = max([call.used_at, *earlier])
        out.append(max(0.0, call.result_at - start))
    return out


def _observed(turn: list[RecordedCall]) -> float:
    starts = [c.used_at for c in turn if c.used_at is not None and c.result_at is not None]
    ends = [c.result_at for c in turn if c.used_at is not None and c.result_at is not None]
    return max(0.0, max(ends) - min(starts)) if starts else 0.0


def _simulated(batches: list[Any], decisions: list[CallDecision], policy: Policy) -> float:
    by_id = {d.tool_use_id: d for d in decisions}
    total = 0.0
    for batch in batches:
        times = []
        for call in batch.calls:
            decision = by_id[call.tool_use_id]
            if decision.outcome == "deny":
                continue
            cost = (decision.duration or 0.0) + (policy.prompt_seconds if decision.outcome == "prompt" else 0.0)
            times.append(cost)
        total += _makespan(times, policy.max_concurrency)
    return total


def _makespan(times: list[float], cap: int) -> float:
    """How long calls take started in order, at most ``cap`` at a time (as the engine starts them)."""
    if not times:
        return 0.0
    slots = [0.0] * min(cap, len(times))
    heapq.heapify(slots)
    for t in times:
        heapq.heappush(slots, heapq.heappop(slots) + t)
    return max(slots)


# -- re-running the read-only calls ----------------------------------------------------------------
_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)
_LINE_NUMBER = re.compile(r"^(\s*\d+)(→|\t)", re.M)


def _normalized(text: str) -> str:
    """A result's text, with what differs between Claude Code and us but says the same removed."""
    return _LINE_NUMBER.sub(r"\1\t", _REMINDER.sub("\n", text)).strip()


def _rebased(value: Any, old: str, new: str) -> Any:
    """The session's cwd in every string of an input replaced by the checkout's path."""
    if isinstance(value, str):
        return re.sub(re.escape(old.rstrip("/")) + r"(?=/|\b|$)", new.rstrip("/"), value)
    if isinstance(value, dict):
        return {k: _rebased(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebased(v, old, new) for v in value]
    return value


async def _rerun(recorded: RecordedSession, decisions: list[CallDecision], cwd: str, checkout: Path) -> RerunSummary:
    """Run the read-only, not denied calls again in ``checkout``, answer by answer, and compare."""
    if not checkout.is_dir():
        return RerunSummary(details=(("", f"error: the checkout {checkout} is not a directory"),))
    verdict = {d.tool_use_id: d for d in decisions}
    registry = default_registry()
    sched = Scheduler(registry, cwd=checkout, record_trace=False)
    details: list[tuple[str, str]] = []
    same = different = errors = 0
    started = time.perf_counter()
    for turn in recorded.turns:
        # Only tools the registry runs: a Claude Code tool known by its row alone (LS, TaskOutput) has nothing to run.
        chosen = [c for c in turn if verdict[c.tool_use_id].read_only and verdict[c.tool_use_id].outcome != "deny" and c.name in registry]
        if not chosen:
            continue
        blocks = [{"type": "tool_use", "id": c.tool_use_id, "name": c.name, "input": _rebased(c.input, cwd, str(checkout))}
                  for c in chosen]
        result = await sched.run_outcomes(blocks)
        for call, outcome in zip(chosen, result.outcomes):
            text = _normalized(result_text(outcome.result.content)).replace(str(checkout.resolve()), cwd).replace(str(checkout), cwd)
            if outcome.is_error and not call.is_error:
                errors += 1
                details.append((call.tool_use_id, "error"))
            elif text == _normalized(result_text(call.result)):
                same += 1
                details.append((call.tool_use_id, "same"))
            else:
                different += 1
                details.append((call.tool_use_id, "different"))
    return RerunSummary(len(details), same, different, errors, time.perf_counter() - started, tuple(details))
