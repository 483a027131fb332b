"""One agent session as a task: a model factory, a policy, its own working directory.

A task is plain data plus callables that pickle (module-level functions, or
``functools.partial`` of one such as ``partial(ScriptedModel, script)``), so the same
task runs in this process, in a worker process or on a Ray node. The session builds
everything it uses where it runs: the model, the registry, the permissions for its own
working directory, the scheduler; a person's approvals are answered by the policy's
``prompt_answer``. What comes back is a summary that pickles too: the conversation, the
calls and how each ended, the transcript's path and the trace as JSON lines.
"""

from __future__ import annotations

import os
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

__all__ = ["AgentTask", "AgentSummary", "run_agent_task"]


@dataclass(frozen=True)
class AgentTask:
    """What one agent session needs. ``setup(workdir)`` fills the working directory first
    (a checkout, fixture files); without ``workdir`` the session gets a fresh temporary one."""

    model: Callable[[], Model]
    prompt: Prompt
    policy: Policy = field(default_factory=Policy)
    workdir: str | None = None
    setup: Callable[[Path], object] | None = None
    name: str | None = None
    system: str | None = None
    max_turns: int = 50

    @property
    def label(self) -> str:
        return self.name or (self.workdir and Path(self.workdir).name) or "agent session"


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

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(status for _, status in self.calls))


async def run_agent_task(task: AgentTask) -> AgentSummary:
    workdir = Path(task.workdir) if task.workdir else Path(tempfile.mkdtemp(prefix="nbtoolsched-session-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if task.setup is not None:
        task.setup(workdir)
    model = task.model()
    perms = task.policy.permissions(workdir)
    person = PolicyApprover(task.policy.prompt_answer)
    sched = Scheduler(default_registry(), permissions=perms, approver=person,
                      max_concurrency=task.policy.max_concurrency, cwd=workdir)
    agent = Agent(model, sched, system=task.system, max_turns=task.max_turns)
    result = await agent.run(task.prompt)
    states = result.trace.states()
    path = agent.transcript.path if agent.transcript is not None else None
    return AgentSummary(
        task.label, result.stop_reason, result.turns, tuple((s.tool_name, s.status) for s in states), person.count,
        result.final_text, result.messages, os.fspath(workdir), os.fspath(path) if path else None, result.trace.to_jsonl(),
    )
