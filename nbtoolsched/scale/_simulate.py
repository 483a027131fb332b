"""``replay`` and ``compare_policies``: transcripts in, a report out, on any engine.

Paths may be files, directories (every ``*.jsonl`` below them, as in
``~/.claude/projects``) or glob patterns. Each file is one session, replayed as one task
of ``run_sessions``; a file that cannot be read or replayed still appears in the report,
with its reason.
"""

from __future__ import annotations

import glob
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from ._engines import RayEngine, ReplayTask, ScaleRun, run_sessions
from ._policy import Policy, as_policy
from ._replay import SessionReplay
from ._report import PolicyComparison, PolicyReport

__all__ = ["transcript_files", "replay", "compare_policies"]

PathSpec = str | os.PathLike[str]


def transcript_files(paths: PathSpec | Iterable[PathSpec]) -> list[str]:
    """The transcript files ``paths`` name: files as given, ``*.jsonl`` under directories, globs expanded."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    found: list[str] = []
    for item in items:
        text = os.path.expanduser(os.fspath(item))
        path = Path(text)
        if path.is_dir():
            found.extend(sorted(str(p) for p in path.rglob("*.jsonl")))
        elif any(ch in text for ch in "*?[") and not path.exists():
            found.extend(sorted(glob.glob(text, recursive=True)))
        else:
            found.append(text)  # a missing file is reported by its replay, not dropped here
    return list(dict.fromkeys(found))


def _report(policy: Policy, run: ScaleRun, results: list[Any]) -> PolicyReport:
    replays: list[SessionReplay] = [r.value for r in results if r.ok]
    failures = [(r.name, r.error or r.status) for r in results if not r.ok]
    return PolicyReport(policy.name, replays, failures, description=policy.describe(), seconds=run.seconds, engine=run.engine)


def replay(
    paths: PathSpec | Iterable[PathSpec],
    policy: Policy | PathSpec | Iterable[PathSpec] | None = None,
    *,
    engine: str | RayEngine = "local",
    workers: int | None = None,
    progress: bool = True,
    include_sidechains: bool = False,
    checkout: PathSpec | None = None,
    cancel: threading.Event | None = None,
) -> PolicyReport:
    """Replay every transcript under ``policy`` (a Policy, or settings files) and sum it up."""
    chosen = as_policy(policy)
    files = transcript_files(paths)
    tasks = [ReplayTask(f, chosen, include_sidechains, os.fspath(checkout) if checkout else None) for f in files]
    run = run_sessions(tasks, engine=engine, workers=workers, progress=progress, cancel=cancel, description=f"replay {chosen.name}")
    return _report(chosen, run, run.results)


def compare_policies(
    paths: PathSpec | Iterable[PathSpec],
    current: Policy | PathSpec | Iterable[PathSpec] | None,
    proposed: Policy | PathSpec | Iterable[PathSpec] | None,
    *,
    engine: str | RayEngine = "local",
    workers: int | None = None,
    progress: bool = True,
    include_sidechains: bool = False,
    cancel: threading.Event | None = None,
) -> PolicyComparison:
    """Replay the same transcripts under two policies (one run) and compare them."""
    a, b = as_policy(current, "current"), as_policy(proposed, "proposed")
    if a.name == b.name:
        raise ValueError(f"both policies are named {a.name!r}; give them different names to tell them apart")
    files = transcript_files(paths)
    tasks = [ReplayTask(f, p, include_sidechains) for p in (a, b) for f in files]
    run = run_sessions(tasks, engine=engine, workers=workers, progress=progress, cancel=cancel, description="replay two policies")
    half = len(files)
    return PolicyComparison(_report(a, run, run.results[:half]), _report(b, run, run.results[half:]))
