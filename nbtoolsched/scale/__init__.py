"""Many sessions at once, here or on Ray, and permission-policy simulation over transcripts.

Where users outgrow one machine it is the number of sessions that grows: "what would
these settings have done to our last 10,000 Claude Code sessions?", an evaluation over
hundreds of tasks, RL rollouts. This layer runs them with the scheduler's own semantics
in every session::

    from nbtoolsched.scale import Policy, replay, compare_policies, run_sessions, AgentTask

    report = replay("~/.claude/projects", Policy.from_settings(".claude/settings.json"))
    report                      # tables and charts in Jupyter; print(report) elsewhere
    compare_policies(paths, current, Policy.from_settings("proposed.json", name="proposed"))
    run_sessions([AgentTask(model_factory, "fix the bug", policy, workdir=...)], engine="ray")

    for result in iter_sessions(tasks, run_dir="runs/nightly", timeout=60):
        ...                     # as they finish; results.jsonl written as they come

The default engine is local (asyncio for agent sessions, worker processes for replays);
``engine="ray"`` or ``RayEngine(address=...)`` runs the same tasks on Ray, an optional
extra (``pip install "nbtoolsched[ray]"``), and joins the cluster ``RAY_ADDRESS`` names.
Nothing here imports Ray until asked. Results are plain dataclasses
(``SessionReplay.calls`` holds one decision per call, ``ScaleRun.results`` one result
per session, ``ScaleRun.summary`` the run summed up); reports hold tables and SVG charts.
"""

from .._exports import publish
from ._agents import AgentSummary, AgentTask
from ._engines import RayEngine, ReplayTask, ScaleRun, SessionResult, arun_sessions, iter_sessions, run_sessions
from ._policy import Policy
from ._replay import SessionReplay, replay_session
from ._report import PolicyComparison, PolicyReport
from ._results import RunSummary
from ._simulate import compare_policies, replay
from ._synthetic import write_synthetic_transcripts

__all__ = [
    "AgentSummary",
    "AgentTask",
    "Policy",
    "PolicyComparison",
    "PolicyReport",
    "RayEngine",
    "ReplayTask",
    "RunSummary",
    "ScaleRun",
    "SessionReplay",
    "SessionResult",
    "arun_sessions",
    "compare_policies",
    "iter_sessions",
    "replay",
    "replay_session",
    "run_sessions",
    "write_synthetic_transcripts",
]

publish(__name__, __all__, globals())
