"""One agent session as a task: a model factory, a policy, its own working directory.

A task is plain data plus callables that pickle (module-level functions, or
``functools.partial`` of one such as ``partial(ScriptedModel, script)``; on Ray, which
uses cloudpickle, a lambda or a function of the script too), so the same task runs in
this process, in a worker process or on a Ray node. The session builds everything it
uses where it runs: the model, the registry, the permissions for its own working
directory, the scheduler; a person's approvals are answered by the policy's
``prompt_answer``. What comes back is a summary that pickles too: the conversation, the
calls and how each ended, the transcript's path and the trace as JSON lines, and with
``artifacts=True`` the transcript itself and the files the session changed (they live
on the node that ran it, which may not be this machine).

A task without ``workdir`` runs in a fresh temporary folder, removed when it ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..agent._loop import Agent, Prompt
from ..models._protocol import Model
from ..scheduling._scheduler import Scheduler
from ..tools import default_registry
from ._policy import Policy, PolicyApprover

__all__ = ["AgentTask", "AgentSummary", "SessionArtifacts", "run_agent_task"]

MAX_ARTIFACT_BYTES = 16 * 1024 * 1024  # a changed file larger than this is named in ``skipped``, not brought back


@dataclass(frozen=True)
class AgentTask:
    """What one agent session needs. ``setup(workdir)`` fills the working directory first
    (a checkout, fixture files); without ``workdir`` the session gets a fresh temporary one,
    removed when the session ends. ``artifacts=True`` brings back the transcript and the
    files the session created, changed or deleted in its working directory."""

    model: Callable[[], Model]
    prompt: Prompt
    policy: Policy = field(default_factory=Policy)
    workdir: str | None = None
    setup: Callable[[Path], object] | None = None
    name: str | None = None
    system: str | None = None
    max_turns: int = 50
    artifacts: bool = False

    @property
    def label(self) -> str:
        return self.name or (self.workdir and Path(self.workdir).name) or "agent session"


@dataclass
class SessionArtifacts:
    """What an agent session left: its transcript (JSONL text) and the files of its working
    directory it created or changed (path relative to it, contents), and those it deleted.
    With a run directory they are written under ``artifacts/`` and ``folder`` says where."""

    transcript: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # changed, but larger than MAX_ARTIFACT_BYTES
    folder: str | None = None


@dataclass
class AgentSummary:
    """How one agent session went. Equal summaries mean the same calls ended the same way."""

    name: str
    stop_reason: str
    turns: int
    calls: tuple[tuple[str, str], ...]  # (tool, status) for every call, in order
    prompts: int  # calls a person would have been asked about
    final_text: str
    messages: list[dict[str, Any]] = field(compare=False, default_factory=list)
    workdir: str = field(compare=False, default="")
    transcript_path: str | None = field(compare=False, default=None)
    trace_jsonl: str = field(compare=False, default="")
    artifacts: SessionArtifacts | None = field(compare=False, default=None)

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(status for _, status in self.calls))


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root``: (size, mtime in ns), by path relative to it."""
    found: dict[str, tuple[int, int]] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return found


def _artifacts(root: Path, before: dict[str, tuple[int, int]], transcript: str | None) -> SessionArtifacts:
    after = _snapshot(root)
    files: dict[str, bytes] = {}
    skipped: list[str] = []
    for name, stamp in sorted(after.items()):
        if before.get(name) == stamp:
            continue
        if stamp[0] > MAX_ARTIFACT_BYTES:
            skipped.append(name)
            continue
        try:
            files[name] = (root / name).read_bytes()
        except OSError:
            skipped.append(name)
    text = None
    if transcript is not None:
        try:
            text = Path(transcript).read_text(encoding="utf-8")
        except OSError:
            text = None
    return SessionArtifacts(text, files, tuple(sorted(set(before) - set(after))), tuple(skipped))


async def run_agent_task(task: AgentTask) -> AgentSummary:
    temporary = task.workdir is None
    workdir = Path(task.workdir) if task.workdir is not None else Path(tempfile.mkdtemp(prefix="nbtoolsched-session-"))
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        if task.setup is not None:
            task.setup(workdir)
        before = _snapshot(workdir) if task.artifacts else {}
        model = task.model()
        perms = task.policy.permissions(workdir)
        person = PolicyApprover(task.policy.prompt_answer)
        sched = Scheduler(default_registry(), permissions=perms, approver=person,
                          max_concurrency=task.policy.max_concurrency, cwd=workdir)
        agent = Agent(model, sched, system=task.system, max_turns=task.max_turns)
        result = await agent.run(task.prompt)
        states = result.trace.states()
        path = agent.transcript.path if agent.transcript is not None else None
        transcript = os.fspath(path) if path else None
        found = _artifacts(workdir, before, transcript) if task.artifacts else None
        return AgentSummary(
            task.label, result.stop_reason, result.turns, tuple((s.tool_name, s.status) for s in states), person.count,
            result.final_text, result.messages, os.fspath(workdir), transcript, result.trace.to_jsonl(), found,
        )
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
