"""Replaying one transcript under a policy: every call re-decided, re-partitioned and re-timed.

Nothing the session ran is run again (unless ``checkout`` asks for the read-only calls).
For each recorded call, as the scheduler's pipeline would:

1. the real built-in tool is looked up in the real registry and the input validated;
   one of Claude Code's own tools the registry does not have (TodoWrite, Agent, Skill,
   the task and plan-mode tools, and older names such as Task, KillShell or LS) is a
   stand-in with Claude Code's facts (``_claude_tools.CLAUDE_TOOLS``: concurrency safety,
   read-only, whether it asks); any other tool is decided by the permission rules alone
   (``Permissions.tool_for``) and partitioned as not concurrency-safe (fail closed), and
   so is a call whose input is not an object (reported as malformed, not as unknown);
2. the policy's PreToolUse hooks run, then the real permission engine decides
   (``Permissions.decide_with_cause``, with a simulated person, so dontAsk, auto mode,
   PermissionRequest hooks and "always allow" act as they would). The outcome is
   ``allow`` (nobody asked), ``prompt`` (a person would have been asked) or ``deny``,
   with the rule, mode or check that settled it;
3. each answer's calls are partitioned (``partition_prepared``, the scheduler's own).

A replay is a function of the transcript and the policy. Paths are judged as written
(``shell.lexical_paths``): made absolute against the session's recorded cwd, never
resolved through this machine's file system (a folder that is a symlink here, a hard
link, a git repository at the same path, whether bubblewrap is installed change
nothing). A session whose file names no cwd is judged against ``UNKNOWN_CWD``, a folder
that stands for it. Only ``checkout=`` brings a real tree in: decisions are then judged
on that checkout (the session's cwd mapped onto it) and its read-only calls re-run there.
Command hooks run real programs: in the session's cwd when that folder exists here,
else in an empty temporary folder (the problems say so).

Time, and what the transcript can and cannot show (``timing`` of each call):

* ``measured``: the tool's own measure (``toolUseResult`` durationMs, totalDurationMs,
  durationSeconds: no prompt is in it), or the span from when the call could start in
  the recorded session (its answer complete, i.e. the answer's last tool_use entry, and
  the batches before it done, i.e. their last result) to its tool_result, for a call
  nobody was asked about;
* ``estimated``: a call a person was, or may have been, asked about in the recorded
  session (``person``): its span holds the person's wait, which is not tool time. Its
  duration is the smallest of its span, its timeout (Bash: the input's ``timeout``, else
  two minutes) and the median measured duration of the same tool in the session (of
  every measured call when the tool has none). A call the person rejected or stopped ran
  for no known time: the median, capped by the timeout (``unknown`` when nothing in the
  session was measured). A question to the person (AskUserQuestion, ExitPlanMode) takes
  no tool time at all: its whole span is the person's;
* ``unknown``: no tool_result or no timestamp; left out of every sum.

``person`` is what the file says about a person for the call: ``asked`` (an edit the
person changed, a question to the person), ``stopped`` (rejected at the prompt or
interrupted: Claude Code writes the same result), ``maybe`` (Claude Code, in the mode the
file records, default when it records none, and with no rules, would have asked; the
file does not keep the session's rules, so it may have run unasked) or ``none``.

Under the policy a call runs when it is allowed, or asked and approved (``runs``). The
session's ``serial_s`` is the calls that run, each alone, one after another;
``simulated_s`` runs the policy's batches (a batch takes its longest calls, at most
``max_concurrency`` at a time); ``saved_s`` (their difference) is what running in
parallel saves, and comes only from batches in which two or more calls run. The time of
calls the policy keeps from running is ``denied_s``, never a saving; ``prompt_s`` is
``prompt_seconds`` per prompt, the people's time, kept apart from tool time. ``observed_s``
is what the recorded session spent from each answer's first tool_use to its last
tool_result, people's waits included.
"""

from __future__ import annotations

import atexit
import heapq
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

from ..execution._prepare import PreparedCall, ToolsByName, prepare_call
from ..permissions._base import HookEvent, PermissionRequest
from ..permissions._engine import Permissions
from ..permissions._suggestions import edit_path_rule
from .._registry import ToolRegistry
from .._session_log import read_transcript
from .._sync import run_sync
from ..scheduling._partition import partition_prepared
from ..scheduling._scheduler import Scheduler
from ..shell import lexical_paths
from .._tool._base import Tool
from .._tool._context import ToolContext
from .._tool._decision import Decision, DecisionReason
from ..tools import default_registry
from ..tools._bash import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
from ._calls import RecordedCall, RecordedSession, recorded_session, result_text
from ._claude_tools import ClaudeCodeTool, claude_tool
from ._policy import Policy, PolicyApprover

__all__ = ["CallDecision", "RerunSummary", "SessionReplay", "replay_session", "areplay_session", "cpu_ms_per_session",
           "UNKNOWN_CWD"]

Outcome = Literal["allow", "prompt", "deny"]
Status = Literal["ok", "partial", "empty", "unreadable"]
Timing = Literal["measured", "estimated", "unknown"]
Person = Literal["none", "maybe", "asked", "stopped"]

# The folder a session whose file names no cwd is judged against: it stands for the
# session's own, which nothing on any machine is (so no path is inside it by accident).
UNKNOWN_CWD = "/unknown-session-cwd"


@dataclass(frozen=True, slots=True)
class CallDecision:
    """What the policy does with one recorded call, and how long it takes."""

    tool_use_id: str
    tool: str
    outcome: Outcome
    decided_by: str  # the rule (and its file), or the mode or check that settled it
    batch: int  # 1-based, across the session
    parallel: bool  # it runs, and so does at least one other call of its batch (they run together)
    duration: float | None  # tool time in seconds, no person's wait in it (None: unknown)
    known_tool: bool = True
    read_only: bool = False
    sidechain: bool = False
    summary: str = ""  # the call in a few words, for tables
    runs: bool = True  # under the policy: allowed, or asked and approved
    timing: Timing = "measured"  # how ``duration`` was found (see the module doc)
    timing_note: str = ""  # in words, for an estimate
    recorded_s: float | None = None  # its span in the file: tool time, and a person's wait if one was asked
    person: Person = "none"  # what the file says about a person for this call


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
    parallel_batches: int = 0  # batches in which two or more calls run
    observed_s: float = 0.0  # the recorded answers' spans, people's waits included
    serial_s: float = 0.0  # tool time of the calls that run, each alone
    simulated_s: float = 0.0  # the same calls in this policy's batches
    estimated_s: float = 0.0  # the part of serial_s that is estimated, not measured
    denied_s: float = 0.0  # tool time of the calls that do not run (never a saving)
    prompt_s: float = 0.0  # prompt_seconds per prompt: the people's time
    rerun: RerunSummary | None = None

    @property
    def saved_s(self) -> float:
        """Time saved by running calls in parallel: from batches in which two or more run."""
        return self.serial_s - self.simulated_s

    @property
    def total_s(self) -> float:
        """Tool time in this policy's batches plus the people's time it prices."""
        return self.simulated_s + self.prompt_s

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


_TOOLS: _ReplayTools | None = None


def _tools() -> _ReplayTools:
    global _TOOLS
    if _TOOLS is None or _TOOLS.registry is not _registry():
        _TOOLS = _ReplayTools(_registry())
    return _TOOLS


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
    cwd = _session_cwd(recorded.cwd, out.problems)
    if checkout is None:
        with lexical_paths():
            await _replay_calls(out, recorded, policy, str(path), cwd, None)
    else:
        tree = Path(checkout)
        await _replay_calls(out, recorded, policy, str(path), cwd, tree)
        out.rerun = await _rerun(recorded, out.calls, cwd, tree)
    if out.problems:
        out.status = "partial"
    return out


def _session_cwd(recorded: str | None, problems: list[str]) -> str:
    """The folder the session's paths are judged against: its own, as written."""
    if recorded is None:
        problems.append(f"no entry names the session's cwd; paths are judged against {UNKNOWN_CWD}, a folder that stands for it")
        return UNKNOWN_CWD
    if not recorded.startswith("/"):
        problems.append(f"the session's cwd {recorded!r} is not an absolute POSIX path; paths are judged against {UNKNOWN_CWD}")
        return UNKNOWN_CWD
    return os.path.normpath(recorded)


@dataclass(slots=True)
class _Judged:
    """One call while a session is replayed: decided, not yet timed."""

    call: RecordedCall
    tool: Tool
    outcome: Outcome
    decided_by: str
    batch: int
    known: bool
    read_only: bool
    summary: str
    runs: bool
    person: Person
    span: float | None = None


async def _replay_calls(out: SessionReplay, recorded: RecordedSession, policy: Policy, path: str, cwd: str,
                        checkout: Path | None) -> None:
    """Decide, partition and time every call of ``recorded`` into ``out``."""
    judge_cwd = os.path.realpath(checkout) if checkout is not None else cwd  # a checkout: its real tree
    hook_dir = _hook_dir(policy, cwd, checkout, out.problems)
    perms = policy.session_permissions(judge_cwd, hook_dir=hook_dir)
    registry = _registry()
    ctx = ToolContext(judge_cwd, permission_context=perms, session_id=recorded.session_id or None, transcript_path=path,
                      registry=registry)
    ctx.cwd = judge_cwd  # as written: ToolContext resolves its folder through this machine's file system
    person = PolicyApprover(policy.prompt_answer)
    plan_rules, plan_calls = _plan_files(recorded, perms, judge_cwd)
    baseline = _Baseline(policy, judge_cwd, ctx)
    unknown: dict[str, int] = {}
    invalid: dict[str, int] = {}
    malformed: dict[tuple[str, str], int] = {}
    tools = _tools()
    judged: list[_Judged] = []
    batch_base = 0
    for turn in recorded.turns:
        prepared = [prepare_call(i, {"type": "tool_use", "id": c.tool_use_id, "name": c.name,
                                     "input": _rebased(c.input, cwd, judge_cwd) if checkout is not None else c.input},
                                 registry, tools=tools)
                    for i, c in enumerate(turn)]
        batches = partition_prepared(prepared)
        batch_of = {id(call): b.number for b in batches for call in b.calls}
        numbers = [batch_of[id(p)] for p in prepared]
        spans = _durations(turn, numbers)
        out.observed_s += _observed(turn)
        for call, prep, number, span in zip(turn, prepared, numbers, spans):
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
            data = prep.input if isinstance(call.input, dict) else {}
            outcome, reason, asks, observable = await _decide(perms, tool, prep, data, ctx, person, policy.run_hooks)
            runs = outcome == "allow" or (outcome == "prompt" and policy.prompt_answer != "deny")
            who: Person = "none" if call.tool_use_id in plan_calls else await _person(call, tool, prep, observable, asks, baseline)
            label = _PLAN_FILE if reason is not None and reason.rule in plan_rules else _label(reason)
            judged.append(_Judged(call, tool, outcome, label, batch_base + number, known, _read_only(prep, judge_cwd),
                                  _summary(call.name, call.input if isinstance(call.input, dict) else {}), runs, who, span))
        batch_base += len(batches)
    out.turns = len(recorded.turns)
    out.batches = batch_base
    _time(out, judged, policy)
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


_PLAN_FILE = "tool: Claude Code's plan file for this session, which it may always write"
_EDITS = ("Write", "Edit", "MultiEdit")


def _plan_files(recorded: RecordedSession, perms: Permissions, cwd: str) -> tuple[set[str], set[str]]:
    """Claude Code lets a session write its own plan file unasked (reference §4.5, write
    step 2: internal editable paths). The file is ``<Claude's folder>/plans/<slug>.md``,
    the slug one the transcript records; which folder that was is not recorded, so a
    path ending in ``.claude/plans/<slug>.md`` is taken for it. Each becomes a session
    allow rule (which holds even under .claude/, as Claude Code's session rules do), and
    its decisions say why. Returns the rules, and the ids of the calls that write it
    (which nobody was asked about in the recorded session either)."""
    rules: set[str] = set()
    calls: set[str] = set()
    if not recorded.slugs:
        return rules, calls
    names = {f"{slug}.md" for slug in recorded.slugs}
    for call in recorded.calls:
        path = call.input.get("file_path") if isinstance(call.input, dict) and call.name in _EDITS else None
        if not isinstance(path, str) or not path.startswith("/"):
            continue
        folder, name = os.path.split(os.path.normpath(path))
        if name in names and folder.endswith(os.path.join(os.sep + ".claude", "plans")):
            rule = edit_path_rule(os.path.normpath(path), cwd, cwd)
            if rule is not None:
                rules.add(perms.add_session_rule(rule).text)
                calls.add(call.tool_use_id)
    return rules, calls


def _hook_dir(policy: Policy, cwd: str, checkout: Path | None, problems: list[str]) -> str | None:
    """Where the policy's command hooks run (None: it has none to run)."""
    if not policy.run_hooks or not any("hooks" in s.data for s in policy.settings):
        return None
    if checkout is not None:
        return os.path.realpath(checkout)
    if os.path.isdir(cwd):
        return cwd
    neutral = _neutral_dir()
    problems.append(f"the session's folder {cwd} is not on this machine: its command hooks ran in an empty temporary folder")
    return neutral


_NEUTRAL: str | None = None


def _neutral_dir() -> str:
    """An empty folder for hooks of sessions whose folder is not here (one per process)."""
    global _NEUTRAL
    if _NEUTRAL is None or not os.path.isdir(_NEUTRAL):
        _NEUTRAL = tempfile.mkdtemp(prefix="nbtoolsched-replay-hooks-")
        atexit.register(shutil.rmtree, _NEUTRAL, True)
    return _NEUTRAL


async def _decide(
    perms: Permissions, tool: Tool, prep: PreparedCall, data: dict[str, Any], ctx: ToolContext, person: PolicyApprover, run_hooks: bool
) -> tuple[Outcome, DecisionReason | None, bool, dict[str, Any]]:
    """The pipeline's permission step for one call, with a simulated person: the outcome,
    what settled it, whether the rules asked, and the input as hooks and rules saw it."""
    call_ctx = ctx.for_call(prep.tool_use_id, ctx.abort)
    observable = dict(data)
    if prep.tool is not None and prep.parsed is not None:
        prep.tool.backfill_observable_input(observable, call_ctx)
    hook_decision: Decision | None = None
    hooks = perms.hooks if run_hooks else None
    if hooks is not None:
        pre = await hooks.pre_tool_use(HookEvent("PreToolUse", tool, tool.name, observable, prep.tool_use_id, call_ctx))
        if pre.stop is not None:
            return "deny", DecisionReason("hook", "a hook failed under strict hooks"), False, observable
        hook_decision = pre.decision
    person.asked = False
    request = PermissionRequest(tool, observable, prep.parsed if prep.parsed is not None else observable, call_ctx,
                                prep.tool_use_id, hook_decision, person, None, hooks)
    rules, final = await perms.decide_with_cause(request)
    asks = rules.behavior == "ask"
    if person.asked:
        return "prompt", rules.reason, asks, observable
    return ("allow" if final.behavior == "allow" else "deny"), final.reason, asks, observable


# -- what the recorded session says about a person ----------------------------------------------
def _asks_person(tool: Tool) -> bool:
    try:
        return bool(tool.requires_user_interaction())
    except Exception:  # noqa: BLE001 - cannot tell: it may
        return True


class _Baseline:
    """Would Claude Code have asked for a call in the session's recorded mode, with no rules?

    The file keeps the mode (``permissionMode``, when Claude Code wrote it) but not the
    session's rules, so this is the most a replay can say: an ask here means the call's
    span may hold a person's wait. Decided by the real engine without rules or hooks, in
    the mode the file records (plan mode as default: Claude Code asks there as in default
    mode, reference §4.2; dontAsk and auto mode ask nobody but for a question to the
    person). Such a judgement depends on nothing but the call and its folder, so it is
    remembered per process; under a policy that is itself rule-free in the same mode the
    policy's own judgement is the answer."""

    def __init__(self, policy: Policy, cwd: str, ctx: ToolContext) -> None:
        self.cwd = cwd
        self.ctx = ctx
        self._contexts: dict[str, ToolContext] = {}
        # A policy with no rules, hooks or saved answers judges as this baseline does.
        plain = not policy.settings and not (policy.allow or policy.deny or policy.ask) and policy.prompt_answer != "allow_always"
        self.same_as_policy = (policy.mode or "default") if plain else None

    async def asks(self, mode: str | None, tool: Tool, prep: PreparedCall, observable: dict[str, Any], policy_asks: bool) -> bool:
        mode = mode if mode in _MODES else "default"
        if mode in ("dontAsk", "auto"):
            return False
        if mode == "plan":
            mode = "default"
        if mode == self.same_as_policy:
            return policy_asks
        if isinstance(tool, ClaudeCodeTool) and tool.row.asks == "never":
            return False  # allowed unless a rule objects, and the baseline has none
        key = (mode, self.cwd, tool.name, _key(observable))
        known = _BASELINE.get(key)
        if known is None:
            perms = _baseline_permissions(mode, self.cwd)
            ctx = self._contexts.get(mode)
            if ctx is None:
                ctx = self._contexts[mode] = self.ctx.replace(permission_context=perms)
            explained = await perms.evaluate(tool, observable, prep.parsed if prep.parsed is not None else observable,
                                             ctx.for_call(prep.tool_use_id, ctx.abort), explain=False)
            known = _BASELINE[key] = explained.behavior == "ask"
            while len(_BASELINE) > _MAX_BASELINE:
                _BASELINE.popitem(last=False)
        return known


_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
_BASELINE: "OrderedDict[tuple[str, str, str, str], bool]" = OrderedDict()
_MAX_BASELINE = 50_000
_BASELINE_PERMS: dict[tuple[str, str, bool], Permissions] = {}


def _baseline_permissions(mode: str, cwd: str) -> Permissions:
    key = (mode, cwd, lexical_paths.active)
    perms = _BASELINE_PERMS.get(key)
    if perms is None:
        if len(_BASELINE_PERMS) > 256:
            _BASELINE_PERMS.clear()
        perms = _BASELINE_PERMS[key] = Permissions(mode, cwd=cwd)
    return perms


def _key(data: dict[str, Any]) -> str:
    try:
        return json.dumps(data, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(data)


async def _person(call: RecordedCall, tool: Tool, prep: PreparedCall, observable: dict[str, Any], policy_asks: bool,
                  baseline: _Baseline) -> Person:
    if call.stopped:
        return "stopped"
    if call.edited or _asks_person(tool):
        return "asked"
    if await baseline.asks(call.mode, tool, prep, observable, policy_asks):
        return "maybe"
    return "none"


# -- time -------------------------------------------------------------------------------------
def _durations(turn: list[RecordedCall], batch_numbers: list[int]) -> list[float | None]:
    """Each call's span in the recorded session: from when it could start to its result.

    A call starts once its answer is complete (the answer's last tool_use entry) and the
    batches before it are done (their last result): the model writing the answer's later
    blocks is not tool time. Claude Code runs an answer's tools after it is complete
    unless its streaming executor is on, and writes their results after it either way
    (the real transcripts here show both); with the streaming executor a long call that
    started early is undercounted by the time the model took to write the blocks after it."""
    written = [c.used_at for c in turn if c.used_at is not None]
    complete = max(written) if written else None
    out: list[float | None] = []
    for i, call in enumerate(turn):
        if call.used_at is None or call.result_at is None or complete is None:
            out.append(None)
            continue
        earlier = [c.result_at for c, b in zip(turn[:i], batch_numbers[:i]) if b < batch_numbers[i] and c.result_at is not None]
        start = max([complete, *earlier])
        out.append(max(0.0, call.result_at - start))
    return out


def _observed(turn: list[RecordedCall]) -> float:
    starts = [c.used_at for c in turn if c.used_at is not None and c.result_at is not None]
    ends = [c.result_at for c in turn if c.used_at is not None and c.result_at is not None]
    return max(0.0, max(ends) - min(starts)) if starts else 0.0


def _timeout(call: RecordedCall, tool: Tool) -> float | None:
    """The most a call may run, when its input (or its tool) says: Bash's ``timeout``."""
    if tool.permission_kind != "shell" or not isinstance(call.input, dict):
        return None
    value = call.input.get("timeout")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return min(float(value), MAX_TIMEOUT_MS) / 1000
    return DEFAULT_TIMEOUT_MS / 1000


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _timed(judged: list[_Judged]) -> list[tuple[float | None, Timing, str]]:
    """(duration, timing, note) of every call (module doc: what is measured, what estimated)."""
    first: list[tuple[float | None, Timing, str] | None] = []
    pool: dict[str, list[float]] = {}
    every: list[float] = []
    for j in judged:
        known: tuple[float | None, Timing, str] | None
        if j.call.self_timed is not None:
            known = (j.call.self_timed, "measured", "measured by the tool itself (toolUseResult)")
        elif j.span is None:
            known = (None, "unknown", "no tool_result, or no timestamp")
        elif j.person == "none":
            known = (j.span, "measured", "")
        else:
            known = None
        first.append(known)
        if known is not None and known[0] is not None:
            pool.setdefault(j.tool.name, []).append(known[0])
            every.append(known[0])
    out: list[tuple[float | None, Timing, str]] = []
    for j, known in zip(judged, first):
        if known is not None:
            out.append(known)
            continue
        cap = _timeout(j.call, j.tool)
        own = _median(pool.get(j.tool.name, []))
        typical = own if own is not None else _median(every)
        whose = f"{j.tool.name} calls" if own is not None else "calls"
        if _asks_person(j.tool):  # answered, rejected or stopped: only the person's time
            out.append((0.0, "estimated", "a question to the person: the wait is theirs, the tool takes no time"))
        elif j.person == "stopped":
            if typical is None:
                out.append((None, "unknown", "rejected or stopped by the person, and nothing in the session was measured"))
            else:
                value = min(typical, cap) if cap is not None else typical
                out.append((value, "estimated", f"rejected or stopped by the person: the median of the session's measured {whose}"
                            + (" (capped by its timeout)" if value != typical else "")))
        else:
            assert j.span is not None
            options = [(j.span, "its span"), *([(cap, "its timeout")] if cap is not None else []),
                       *([(typical, f"the median of the session's measured {whose}")] if typical is not None else [])]
            value, which = min(options, key=lambda o: o[0])
            why = "a person was asked" if j.person == "asked" else "a person may have been asked"
            out.append((value, "estimated", f"{why} in the session, so its span holds their wait: {which}"))
    return out


def _time(out: SessionReplay, judged: list[_Judged], policy: Policy) -> None:
    """Durations, the calls that run together, and the session's time sums."""
    timed = _timed(judged)
    running: dict[int, list[float]] = {}
    for j, (duration, _, _) in zip(judged, timed):
        if j.runs:
            running.setdefault(j.batch, []).append(duration or 0.0)
    together = {b for b, times in running.items() if len(times) > 1}
    for j, (duration, timing, note) in zip(judged, timed):
        out.calls.append(CallDecision(
            j.call.tool_use_id, j.call.name, j.outcome, j.decided_by, j.batch, j.runs and j.batch in together, duration,
            j.known, j.read_only, j.call.sidechain, j.summary, j.runs, timing, note, j.span, j.person,
        ))
        if duration is None:
            continue
        if j.runs:
            out.serial_s += duration
            if timing == "estimated":
                out.estimated_s += duration
        else:
            out.denied_s += duration
    out.simulated_s = sum(_makespan(times, policy.max_concurrency) for times in running.values())
    out.parallel_batches = len(together)
    out.prompt_s = policy.prompt_seconds * sum(1 for j in judged if j.outcome == "prompt")


def _makespan(times: list[float], cap: int) -> float:
    """How long calls take started in order, at most ``cap`` at a time (as the engine starts them)."""
    if not times:
        return 0.0
    if len(times) == 1:
        return times[0]
    slots = [0.0] * min(cap, len(times))
    heapq.heapify(slots)
    for t in times:
        heapq.heappush(slots, heapq.heappop(slots) + t)
    return max(slots)


# -- labels -----------------------------------------------------------------------------------
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


# -- what a replay costs ----------------------------------------------------------------------------
def cpu_ms_per_session(
    paths: Iterable[str | os.PathLike[str]], policy: Policy | None = None, *, repeat: int = 1, include_sidechains: bool = False
) -> float:
    """CPU milliseconds this process spends replaying one session, on average (``time.process_time``,
    so neither other processes nor a hook's own programs count; one event loop, no pool).

    Every path is replayed ``repeat`` times; the first path once more before, uncounted
    (imports, the registry). The caches that span sessions are emptied before each
    round, so a round pays for what a worker meeting these sessions for the first time
    pays. ``benchmarks/bench_scale.py`` reports it for real and synthetic transcripts."""
    files = [os.fspath(p) for p in paths]
    if not files:
        raise ValueError("cpu_ms_per_session needs at least one transcript")
    chosen = policy or Policy(name="default")

    async def rounds() -> float:
        await areplay_session(files[0], chosen, include_sidechains=include_sidechains)
        spent = 0.0
        for _ in range(repeat):
            _BASELINE.clear()
            lexical_paths.forget()
            started = time.process_time()
            for path in files:
                await areplay_session(path, chosen, include_sidechains=include_sidechains)
            spent += time.process_time() - started
        return spent

    seconds = run_sync(rounds(), reenter=False)  # a loop of its own, in a notebook cell too
    return 1000 * seconds / (len(files) * repeat)



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
