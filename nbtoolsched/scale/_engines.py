"""Running many sessions: here (asyncio, a process pool) or on Ray, with the same results.

``run_sessions(tasks, engine=...)`` takes replay tasks and agent tasks and gives back one
``SessionResult`` per task, in task order, whatever happens to it: ``ok`` with its value,
``failed`` with the error (the others go on), or ``cancelled`` when the run was stopped
first. A progress line counts sessions: in a notebook plain HTML output, updated in place and
left in its final state ("305/305 sessions · 12.3 s"), so a saved notebook shows it without a
kernel; in a terminal a tqdm bar.

Engines:

* ``"local"`` (default): agent sessions run as asyncio tasks in one process (they wait
  on models and tools, not on the CPU), at most ``workers`` at once; replays, which are
  CPU-bound, run in chunks in a pool of ``workers`` processes (one process: a thread).
* ``"ray"`` or a ``RayEngine``: the same chunks as Ray tasks. ``RayEngine()`` starts a
  local Ray (``num_cpus``) and shuts it down when done; ``RayEngine(address=...)``
  joins a cluster (``"auto"``, ``"ray://host:10001"``) and leaves it running. Ray is an
  optional extra: ``pip install "nbtoolsched[ray]"``.

Cancelling (``cancel.set()``, Ctrl-C, a kernel interrupt, cancelling ``arun_sessions``)
stops the run: tasks not started are dropped, running Ray tasks get a KeyboardInterrupt
(so a session's tools stop their process groups) and, after ``grace`` seconds, their
worker processes are killed; a local Ray started for the run is shut down. Every
session not finished is reported as ``cancelled``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import math
import multiprocessing
import os
import socket
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence, TypedDict, Union, Unpack

from .._errors import ConfigurationError
from ._agents import AgentSummary, AgentTask, run_agent_task
from ._policy import Policy
from ._replay import SessionReplay, areplay_session

__all__ = ["ReplayTask", "RayEngine", "ScaleRun", "SessionResult", "run_sessions", "arun_sessions"]

Status = Literal["ok", "failed", "cancelled"]
MAX_CHUNK = 64  # replays per chunk at most: a chunk is what one worker does between two progress ticks


@dataclass(frozen=True)
class ReplayTask:
    """Replay one transcript under a policy (see ``replay_session``)."""

    path: str
    policy: Policy = field(default_factory=Policy)
    include_sidechains: bool = False
    checkout: str | None = None

    @property
    def label(self) -> str:
        return os.path.basename(self.path)


Task = ReplayTask | AgentTask
SessionValue = Union[SessionReplay, AgentSummary]  # what a ReplayTask, an AgentTask gives


@dataclass
class SessionResult:
    """One session's result: its value, or why it has none."""

    index: int
    name: str
    status: Status
    value: SessionValue | None = None  # a ReplayTask's SessionReplay, an AgentTask's AgentSummary
    error: str | None = None
    seconds: float = field(default=0.0, compare=False)
    worker: str = field(default="", compare=False)  # host:pid that ran it

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class ScaleRun:
    """Every session's result, in task order, and how the run went."""

    results: list[SessionResult]
    engine: str
    workers: int
    seconds: float
    cancelled: bool = False

    @property
    def values(self) -> list[SessionValue]:
        return [r.value for r in self.results if r.ok and r.value is not None]

    @property
    def failed(self) -> list[SessionResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def sessions_per_second(self) -> float:
        return len(self.results) / self.seconds if self.seconds > 0 else 0.0

    def __repr__(self) -> str:
        counts = {s: sum(1 for r in self.results if r.status == s) for s in ("ok", "failed", "cancelled")}
        return (f"ScaleRun({len(self.results)} sessions on {self.engine} x{self.workers} in {self.seconds:.2f} s: "
                f"{counts['ok']} ok, {counts['failed']} failed, {counts['cancelled']} cancelled)")


# -- what a worker runs ----------------------------------------------------------------------------
def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _describe(err: BaseException) -> str:
    """The error and where it was raised (file, line, function), on one line."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(err).__name__}: {err}{where}"


async def _run_one(index: int, task: Task) -> SessionResult:
    started = time.perf_counter()
    try:
        if isinstance(task, ReplayTask):
            value: SessionValue = await areplay_session(task.path, task.policy, include_sidechains=task.include_sidechains, checkout=task.checkout)
        elif isinstance(task, AgentTask):
            value = await run_agent_task(task)
        else:
            raise TypeError(f"a session task must be a ReplayTask or an AgentTask, got {type(task).__name__}")
    except Exception as err:  # noqa: BLE001 - a failing session is reported, and the others go on
        return SessionResult(index, _label(task), "failed", None, _describe(err), time.perf_counter() - started, _worker_name())
    return SessionResult(index, _label(task), "ok", value, None, time.perf_counter() - started, _worker_name())


async def _run_chunk_async(chunk: Sequence[tuple[int, Task]]) -> list[SessionResult]:
    return [await _run_one(index, task) for index, task in chunk]


def run_chunk(chunk: Sequence[tuple[int, Task]]) -> list[SessionResult]:
    """A worker's job: run the sessions of a chunk one after another on one event loop."""
    return asyncio.run(_run_chunk_async(chunk))


def _label(task: Any) -> str:
    return str(getattr(task, "label", type(task).__name__))


# -- the driver ----------------------------------------------------------------------------------------
def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (an IPython shell with a kernel behind it)."""
    if "IPython" not in sys.modules:  # never imported: not a notebook, and no reason to import it
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class _Progress:
    """Sessions done, while a run goes: in a notebook one HTML line (and its text/plain),
    in a terminal a tqdm bar, or nothing.

    The notebook line is plain output, not a widget: it is shown with ``display(...,
    display_id=...)`` and replaced with ``update_display`` at most ``INTERVAL`` apart and
    once more at the end, so a saved notebook (reopened without a kernel, nbconvert, GitHub)
    holds the state the run ended in: "305/305 sessions · 12.3 s". Its colours are the
    theme's CSS variables, readable in dark themes too."""

    INTERVAL = 0.25  # seconds between two updates of the notebook line (4 a second at most)

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.bar: Any = None
        self.display_id: str | None = None
        self.started = time.perf_counter()
        self._shown = 0.0  # time.monotonic() of the last update of the notebook line
        self._lock = threading.Lock()  # updates come from the agents' thread too
        if not enabled:
            return
        if _in_notebook():
            from IPython.display import display

            self.display_id = f"nbtoolsched-progress-{uuid.uuid4().hex}"
            display(self.bundle(), raw=True, display_id=self.display_id)
            self._shown = time.monotonic()
        else:
            from tqdm import tqdm  # a text bar: a terminal, a script, a CI log

            self.bar = tqdm(total=total, desc=description, unit="session", dynamic_ncols=True)

    def text(self, final: bool = False) -> str:
        """The state in words: ``187/305 sessions · 7.9 s`` (and ``· stopped`` for a run that ended short)."""
        line = f"{self.done}/{self.total} sessions · {time.perf_counter() - self.started:.1f} s"
        return line + (" · stopped" if final and self.done < self.total else "")

    def bundle(self, final: bool = False) -> dict[str, str]:
        text = self.text(final)
        share = 100.0 * self.done / self.total if self.total else 100.0
        bar = ("<span style='display:inline-block;width:160px;height:8px;border-radius:4px;overflow:hidden;vertical-align:middle;"
               "background:var(--jp-layout-color3, #d0d7de)'><span style='display:block;height:100%;"
               f"width:{share:.1f}%;background:var(--jp-brand-color1, #1976d2)'></span></span>")
        page = (f"<div class='nts-progress' role='progressbar' aria-valuemin='0' aria-valuemax='{self.total}' aria-valuenow='{self.done}' "
                "style='font-size:12px;color:var(--jp-content-font-color1, inherit)'>"
                f"<span style='margin-right:8px'>{html.escape(self.description)}</span>{bar}"
                f"<span style='margin-left:8px'>{html.escape(text)}</span></div>")
        return {"text/html": page, "text/plain": f"{self.description}: {text}"}

    def _publish(self, final: bool = False) -> None:
        from IPython.display import update_display

        update_display(self.bundle(final), raw=True, display_id=self.display_id)
        self._shown = time.monotonic()

    def update(self, count: int) -> None:
        if not count:
            return
        with self._lock:
            self.done += count
            if self.bar is not None:
                self.bar.update(count)
            elif self.display_id is not None and time.monotonic() - self._shown >= self.INTERVAL:
                self._publish()

    def close(self) -> None:
        with self._lock:
            if self.bar is not None:
                self.bar.close()
            elif self.display_id is not None:
                self._publish(final=True)  # always: the saved output must say how the run ended
                self.display_id = None


def _chunks(tasks: list[Task], workers: int, chunk_size: int | None) -> list[list[tuple[int, Task]]]:
    """Agent sessions one per chunk; replays in chunks, about four per worker (at most MAX_CHUNK)."""
    indexed = list(enumerate(tasks))
    agents = [[item] for item in indexed if isinstance(item[1], AgentTask)]
    replays = [item for item in indexed if not isinstance(item[1], AgentTask)]
    size = chunk_size or max(1, min(MAX_CHUNK, math.ceil(len(replays) / (workers * 4)) if replays else 1))
    return agents + [replays[i:i + size] for i in range(0, len(replays), size)]


def _cancelled(chunk: Sequence[tuple[int, Task]], why: str = "the run was cancelled before this session finished") -> list[SessionResult]:
    return [SessionResult(index, _label(task), "cancelled", None, why) for index, task in chunk]


def _lost(chunk: Sequence[tuple[int, Task]], err: BaseException) -> list[SessionResult]:
    return [SessionResult(index, _label(task), "failed", None, f"the worker running it failed: {_describe(err)}") for index, task in chunk]


class RayEngine:
    """Ray as an engine: a local Ray (``num_cpus``) or a cluster (``address``).

    Reusable across runs (``with RayEngine(num_cpus=2) as ray_engine: ...``); a Ray this
    engine started is shut down by ``stop()`` (or at the end of a ``run_sessions`` that
    was given ``engine="ray"``). ``init_options`` go to ``ray.init`` (``runtime_env`` to
    ship code to a cluster, ``_temp_dir``...). ``grace``: seconds a cancelled task gets to
    stop by itself before its worker process is killed."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, grace: float = 3.0, **init_options: Any) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.grace = grace
        self.init_options = init_options
        self.owned = False
        self._remote: Any = None
        self._isolated: Any = None
        self._session_dir = ""

    @staticmethod
    def _ray() -> Any:
        try:
            import ray
        except ImportError:
            raise ConfigurationError('engine="ray" needs Ray, an optional extra: pip install "nbtoolsched[ray]"') from None
        return ray

    def start(self) -> "RayEngine":
        ray = self._ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **self.init_options}
            if self.address is None and self.num_cpus is not None:
                options["num_cpus"] = self.num_cpus
            context = ray.init(address=self.address, **options)
            self.owned = True
            self._session_dir = str(getattr(context, "address_info", {}).get("session_dir") or "")
        if self._remote is None:
            self._remote = ray.remote(max_retries=0, num_cpus=1)(run_chunk)
            # An agent session runs real tools: its worker process ends with it (max_calls=1),
            # so nothing it started outlives it, cancelled or not.
            self._isolated = ray.remote(max_retries=0, num_cpus=1, max_calls=1)(run_chunk)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Shut down a Ray this engine started, and wait until its processes are gone
        (``ray.shutdown`` returns while they are still exiting)."""
        if self.owned:
            processes = ray_processes(self._session_dir) if self._session_dir else set()
            self._ray().shutdown()
            self.owned = False
            self._remote = self._isolated = None
            _wait_for_exit(processes, timeout)

    def __enter__(self) -> "RayEngine":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def workers(self) -> int:
        ray = self._ray()
        return int(ray.cluster_resources().get("CPU", 1)) if ray.is_initialized() else (self.num_cpus or 1)

    def run(self, chunks: list[list[tuple[int, Task]]], progress: _Progress, cancel: threading.Event) -> tuple[list[SessionResult], bool]:
        ray = self._ray()
        self.start()
        pending = {(self._isolated if isinstance(chunk[0][1], AgentTask) else self._remote).remote(chunk): chunk for chunk in chunks}
        out: list[SessionResult] = []
        try:
            while pending:
                if cancel.is_set():
                    raise _Cancel()
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                for ref in ready:
                    chunk = pending.pop(ref)
                    try:
                        results = ray.get(ref)
                    except Exception as err:  # noqa: BLE001 - a worker that died, a task that could not be pickled...
                        results = _lost(chunk, err)
                    out.extend(results)
                    progress.update(len(chunk))
        except (_Cancel, KeyboardInterrupt, asyncio.CancelledError) as stop:
            self._cancel(pending)
            for chunk in pending.values():
                out.extend(_cancelled(chunk))
            if not isinstance(stop, _Cancel):
                raise _Interrupted(out) from stop
            return out, True
        return out, False

    def _cancel(self, pending: dict[Any, Any]) -> None:
        """Interrupt the running tasks, let them stop their tools, then kill what still runs."""
        ray = self._ray()
        refs = list(pending)
        for ref in refs:
            ray.cancel(ref, force=False, recursive=True)
        _, still = ray.wait(refs, num_returns=len(refs), timeout=self.grace) if refs else ([], [])
        for ref in still:
            ray.cancel(ref, force=True, recursive=True)
        if still:
            ray.wait(still, num_returns=len(still), timeout=10)


def ray_processes(session_dir: str) -> set[int]:
    """The live processes of a local Ray node: those naming its session directory, and
    all their descendants (workers rename themselves ``ray::...``). Linux only (/proc)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return set()
    parents: dict[int, int] = {}
    roots: set[int] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if fields[0] == "Z":  # exited, not yet reaped: gone for our purpose
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        if session_dir.encode() in cmdline and pid != os.getpid():
            roots.add(pid)
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _wait_for_exit(pids: set[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if Path(f"/proc/{pid}").exists() and not _zombie(pid)}
        if pids:
            time.sleep(0.1)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return False


class _Cancel(Exception):
    """The run's cancel event was set."""


class _Interrupted(Exception):
    """A KeyboardInterrupt or task cancellation, carrying what was collected before it."""

    def __init__(self, results: list[SessionResult]) -> None:
        super().__init__("interrupted")
        self.results = results


def _pool_context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _run_local(chunks: list[list[tuple[int, Task]]], workers: int, progress: _Progress, cancel: threading.Event) -> tuple[list[SessionResult], bool]:
    """Agent sessions as asyncio tasks in one loop; replay chunks in a process pool (or one thread)."""
    agent_chunks = [c for c in chunks if isinstance(c[0][1], AgentTask)]
    replay_chunks = [c for c in chunks if not isinstance(c[0][1], AgentTask)]
    out: list[SessionResult] = []
    cancelled = False
    if agent_chunks:
        results, cancelled = _run_agents_here(agent_chunks, workers, progress, cancel)
        out.extend(results)
    if replay_chunks:
        if cancelled:
            for chunk in replay_chunks:
                out.extend(_cancelled(chunk))
        else:
            results, cancelled = _run_pool(replay_chunks, workers, progress, cancel)
            out.extend(results)
    return out, cancelled


def _run_pool(chunks: list[list[tuple[int, Task]]], workers: int, progress: _Progress, cancel: threading.Event) -> tuple[list[SessionResult], bool]:
    executor: concurrent.futures.Executor
    if workers == 1:
        executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbtoolsched-replay")
    else:
        executor = concurrent.futures.ProcessPoolExecutor(workers, mp_context=_pool_context())
    futures = {executor.submit(run_chunk, chunk): chunk for chunk in chunks}
    out: list[SessionResult] = []
    waiting = set(futures)

    def collect(future: concurrent.futures.Future[list[SessionResult]]) -> None:
        chunk = futures[future]
        try:
            out.extend(future.result())
        except Exception as err:  # noqa: BLE001 - a worker process that died
            out.extend(_lost(chunk, err))
        progress.update(len(chunk))

    try:
        while waiting:
            if cancel.is_set():
                raise _Cancel()
            done, waiting = concurrent.futures.wait(waiting, timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                collect(future)
    except (_Cancel, KeyboardInterrupt) as stop:
        # Chunks not started are dropped; running ones are short (MAX_CHUNK replays at most)
        # and are let finish, so what they did is kept.
        running = [f for f in waiting if not f.cancel()]
        for future in waiting:
            if future.cancelled():
                out.extend(_cancelled(futures[future]))
        for future in concurrent.futures.as_completed(running):
            collect(future)
        executor.shutdown(wait=True, cancel_futures=True)
        if not isinstance(stop, _Cancel):
            raise _Interrupted(out) from stop
        return out, True
    executor.shutdown(wait=True)
    return out, False


def _run_agents_here(chunks: list[list[tuple[int, Task]]], workers: int, progress: _Progress, cancel: threading.Event) -> tuple[list[SessionResult], bool]:
    """Agent sessions on a private event loop in a thread (so a notebook's own loop is never blocked)."""
    results: dict[int, SessionResult] = {}
    box: dict[str, Any] = {}
    started = threading.Event()

    async def one(limit: asyncio.Semaphore, index: int, task: Task) -> None:
        async with limit:
            results[index] = await _run_one(index, task)
        progress.update(1)

    async def main() -> None:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        limit = asyncio.Semaphore(workers)
        try:
            await asyncio.gather(*(one(limit, index, task) for chunk in chunks for index, task in chunk))
        finally:
            # A cancelled session can return before the cleanup its tools started (stopping a
            # shell's process group) is done: let that finish before the loop goes away.
            leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if leftovers:
                await asyncio.wait(leftovers, timeout=30)

    def target() -> None:
        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            pass

    def stop() -> None:
        started.wait()
        box["loop"].call_soon_threadsafe(box["task"].cancel)

    thread = threading.Thread(target=target, name="nbtoolsched-agents", daemon=True)
    thread.start()
    interrupted: BaseException | None = None
    stopped = False
    try:
        while thread.is_alive():
            thread.join(0.1)
            if cancel.is_set() and not stopped:
                stopped = True
                stop()
    except KeyboardInterrupt as err:
        interrupted, stopped = err, True
        stop()
        thread.join()
    out = list(results.values())
    for chunk in chunks:
        out.extend(r for r in _cancelled(chunk) if r.index not in results)
    if interrupted is not None:
        raise _Interrupted(out) from interrupted
    return out, stopped


def run_sessions(
    tasks: Iterable[Task],
    *,
    engine: str | RayEngine = "local",
    workers: int | None = None,
    progress: bool = True,
    cancel: threading.Event | None = None,
    chunk_size: int | None = None,
    description: str = "sessions",
) -> ScaleRun:
    """Run every task and collect one result per task, in task order.

    ``workers``: processes (replays) or concurrent sessions (agents) for the local
    engine (default: the CPU count, and 8 concurrent agent sessions). On Ray the cluster
    decides. ``cancel``: set it (from another thread) to stop the run."""
    items = list(tasks)
    for task in items:
        if not isinstance(task, (ReplayTask, AgentTask)):
            raise TypeError(f"run_sessions() takes ReplayTask and AgentTask objects, got {type(task).__name__}")
    cancel = cancel or threading.Event()
    ray_engine: RayEngine | None
    if isinstance(engine, RayEngine):
        ray_engine, owned = engine, False
    elif engine == "ray":
        ray_engine, owned = RayEngine(num_cpus=workers), True
    elif engine == "local":
        ray_engine, owned = None, False
    else:
        raise ConfigurationError(f'engine must be "local", "ray" or a RayEngine, got {engine!r}')
    started = time.perf_counter()
    if ray_engine is not None:
        ray_engine.start()
        count = ray_engine.workers
    else:
        has_agents = any(isinstance(t, AgentTask) for t in items)
        count = workers or (8 if has_agents else (os.cpu_count() or 1))
    if count < 1:
        raise ConfigurationError(f"workers must be a positive number, got {count}")
    chunks = _chunks(items, count, chunk_size)
    bar = _Progress(len(items), progress, description)
    try:
        if ray_engine is not None:
            results, stopped = ray_engine.run(chunks, bar, cancel)
        else:
            results, stopped = _run_local(chunks, count, bar, cancel)
    except _Interrupted as err:
        raise KeyboardInterrupt(f"run_sessions interrupted after {sum(1 for r in err.results if r.ok)} sessions") from err
    finally:
        bar.close()
        if owned and ray_engine is not None:
            ray_engine.stop()
    results.sort(key=lambda r: r.index)
    name = "ray" if ray_engine is not None else "local"
    return ScaleRun(results, name, count, time.perf_counter() - started, stopped)


class RunOptions(TypedDict, total=False):
    """The keywords of ``run_sessions`` (``arun_sessions`` passes them on)."""

    engine: str | RayEngine
    workers: int | None
    progress: bool
    cancel: threading.Event | None
    chunk_size: int | None
    description: str


async def arun_sessions(tasks: Iterable[Task], **options: Unpack[RunOptions]) -> ScaleRun:
    """``run_sessions`` for a notebook or any running loop: the loop stays free, and
    cancelling this coroutine cancels the run (every session is still accounted for)."""
    cancel = options["cancel"] = options.get("cancel") or threading.Event()
    items = list(tasks)
    future = asyncio.get_running_loop().run_in_executor(None, lambda: run_sessions(items, **options))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        await asyncio.wait([future])
        raise
