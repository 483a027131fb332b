"""Running many sessions: here (asyncio, worker processes) or on Ray, with the same results.

``run_sessions(tasks, engine=...)`` takes replay tasks and agent tasks and gives back one
``SessionResult`` per task, in task order, whatever happens to it: ``ok`` with its value,
``failed`` with the error (the others go on), or ``cancelled`` when the run was stopped
first. ``iter_sessions`` hands the same results out as they finish, holding none of them;
both keep a ``RunSummary`` one result at a time and, given ``run_dir``, write every
finished session to ``run_dir/results.jsonl`` as it comes (a run started again with the
same ``run_dir`` skips what finished). A progress line counts sessions: in a notebook
plain HTML output, updated in place and left in its final state ("305/305 sessions ·
12.3 s"), so a saved notebook shows it without a kernel; in a terminal a tqdm bar.

Before anything is sent: every task is checked (a model factory or policy that cannot be
pickled for where it goes, named), and relative paths are made absolute here, not in a
worker's own folder. A transcript that is not there, cannot be read or is not a regular
file fails its own session, with the reason; the others go on.

Engines:

* ``"local"`` (default): agent sessions run as asyncio tasks on one loop in a thread of
  this process (they wait on models and tools, not on the CPU), at most ``workers`` at
  once; replays, which are CPU-bound, run in chunks in ``workers`` worker processes
  (plain interpreters that import nbtoolsched only, so a script needs no
  ``if __name__ == "__main__":`` guard; one worker: a thread of this process).
* ``"ray"`` or a ``RayEngine``: replay chunks as Ray tasks, agent sessions on reused
  actors (``_ray.py``). ``RayEngine()`` starts a local Ray, or joins the cluster that
  ``RAY_ADDRESS`` names; ``RayEngine(address=...)`` joins one.

A worker that dies (killed, out of memory, a crash in a C extension) loses its chunk:
a chunk of several sessions is sent again one session at a time, so one bad session
cannot take its neighbours with it; a single session is sent again ``retries`` times,
then reported as failed. ``timeout`` bounds each session (see ``_work.py``).

Cancelling (``cancel.set()``, Ctrl-C, a kernel interrupt, cancelling ``arun_sessions``)
stops the run: tasks not started are dropped, running sessions are cancelled (their tools
stop their process groups) and, after ``grace`` seconds, their worker processes are
killed. ``run_sessions`` then returns what finished (``ScaleRun.cancelled``, and
``interrupted`` for a Ctrl-C); every session not finished is reported as ``cancelled``.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import dataclasses
import html
import io
import math
import os
import pickle
import queue
import sys
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Callable, Generator, Iterable, Iterator, Literal, Sequence, TypedDict, Unpack

from .._errors import ConfigurationError
from ._agents import AgentTask
from ._policy import Policy
from ._pool import WorkerProcess
from ._ray import RayBackend, RayEngine, lost_reason, ray_processes
from ._results import RunDirectory, RunSummary
from ._work import ReplayTask, SessionResult, SessionValue, Task, describe, label_of, run_chunk, run_one

__all__ = ["ReplayTask", "RayEngine", "ScaleRun", "SessionResult", "SessionStream", "run_sessions", "iter_sessions",
           "arun_sessions", "ray_processes", "SessionValue"]

MAX_TIMEOUT = 10_000_000.0  # seconds (about 115 days): past it, the worker's alarm timer cannot be set
MAX_CHUNK = 64  # replays per chunk at most: a chunk is what one worker does between two progress ticks
GRACE = 3.0  # seconds running local replay chunks get to finish when a run is cancelled
Kind = Literal["replay", "agent"]


@dataclass
class ScaleRun:
    """How a run went: its ``summary`` always, every session's result in task order unless
    the run was told not to keep them (``keep_results=False``: see ``run_dir``)."""

    results: list[SessionResult]
    engine: str
    workers: int
    seconds: float
    cancelled: bool = False
    summary: RunSummary = field(default_factory=RunSummary)
    interrupted: bool = False  # stopped by Ctrl-C (a KeyboardInterrupt) rather than by ``cancel``
    run_dir: str | None = None
    resumed: int = 0  # sessions a run directory already held, not run again

    @property
    def values(self) -> list[SessionValue]:
        return [r.value for r in self.results if r.ok and r.value is not None]

    @property
    def failed(self) -> list[SessionResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def sessions_per_second(self) -> float:
        ran = self.summary.sessions - self.resumed
        return ran / self.seconds if self.seconds > 0 else 0.0

    def __repr__(self) -> str:
        s = self.summary
        extra = f", {self.resumed} resumed" if self.resumed else ""
        return (f"ScaleRun({s.sessions} sessions on {self.engine} x{self.workers} in {self.seconds:.2f} s: "
                f"{s.ok} ok, {s.failed} failed, {s.cancelled} cancelled{extra})")


# -- the progress line ---------------------------------------------------------------------------------
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

    def __init__(self, total: int, enabled: bool, description: str, done: int = 0) -> None:
        self.total = total
        self.description = description
        self.done = done
        self.bar: Any = None
        self.display_id: str | None = None
        self.started = time.perf_counter()
        self._shown = 0.0  # time.monotonic() of the last update of the notebook line
        self._lock = threading.Lock()
        if not enabled:
            return
        if _in_notebook():
            from IPython.display import display

            self.display_id = f"nbtoolsched-progress-{uuid.uuid4().hex}"
            display(self.bundle(), raw=True, display_id=self.display_id)
            self._shown = time.monotonic()
        else:
            from tqdm import tqdm  # a text bar: a terminal, a script, a CI log

            self.bar = tqdm(total=total, initial=done, desc=description, unit="session", dynamic_ncols=True)

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
                self.bar = None
            elif self.display_id is not None:
                self._publish(final=True)  # always: the saved output must say how the run ended
                self.display_id = None


# -- units of work -------------------------------------------------------------------------------------
_ids = iter(range(1, sys.maxsize))


@dataclass
class _Unit:
    """What one worker gets at once: a chunk of replays, or one agent session."""

    kind: Kind
    items: list[tuple[int, Task]]
    attempt: int = 1
    id: int = field(default_factory=lambda: next(_ids))


class _Lost(Exception):
    """A unit's worker ended before answering."""


def _cancelled(items: Iterable[tuple[int, Task]], why: str = "the run was cancelled before this session finished") -> list[SessionResult]:
    return [SessionResult(index, label_of(task), "cancelled", None, why) for index, task in items]


def _absolute(path: str, base: str) -> str:
    return os.path.abspath(os.path.join(base, os.path.expanduser(path)))


def _resolved(task: Task, base: str) -> Task:
    """The task with its paths made absolute against ``base``: the folder the run was made in."""
    if isinstance(task, ReplayTask):
        path = _absolute(task.path, base)
        checkout = _absolute(task.checkout, base) if task.checkout else task.checkout
        if path != task.path or checkout != task.checkout:
            return dataclasses.replace(task, path=path, checkout=checkout)
    elif isinstance(task, AgentTask) and task.workdir is not None:
        workdir = _absolute(os.fspath(task.workdir), base)
        if workdir != task.workdir:
            return dataclasses.replace(task, workdir=workdir)
    return task


class _MainFinder(pickle.Pickler):
    """A pickler that notes whether what it pickles refers to a class or function of
    ``__main__`` (which the local worker processes do not import)."""

    names_main = False

    def reducer_override(self, obj: Any) -> Any:
        if (isinstance(obj, type) or callable(obj)) and getattr(obj, "__module__", None) == "__main__":
            self.names_main = True
        return NotImplemented


def _names_main(value: object) -> bool:
    """Does ``value`` pickle a reference into ``__main__``? Judged on what is pickled, so a
    rule or a path that merely contains the text ``__main__`` does not count."""
    finder = _MainFinder(io.BytesIO())
    finder.dump(value)
    return finder.names_main


class _Plan:
    """The tasks, checked, and handed out in units: replays in chunks in task order, agent
    sessions one by one, each skipping what a run directory says finished."""

    def __init__(self, tasks: Sequence[Task], where: str, chunk_size: int | None, workers: int,
                 done: Callable[[int], bool]) -> None:
        self.tasks = tasks
        self.done = done
        self.where = where  # "ray", "processes" or "here": how tasks travel (what must pickle)
        self.base = os.getcwd()  # relative paths mean this folder, whatever the folder when they are sent
        counts = self._check()
        self.replays, self.agents = counts
        self.chunk = chunk_size or max(1, min(MAX_CHUNK, math.ceil(self.replays / (workers * 4)) if self.replays else 1))
        self._cursor: dict[Kind, int] = {"replay": 0, "agent": 0}

    @property
    def kinds(self) -> list[Kind]:
        found: list[Kind] = []
        if self.agents:
            found.append("agent")
        if self.replays:
            found.append("replay")
        return found

    def _check(self) -> tuple[int, int]:
        replays = agents = 0
        checked: set[int] = set()
        dumps = self._pickler()
        for index, task in enumerate(self.tasks):
            if not isinstance(task, (ReplayTask, AgentTask)):
                raise TypeError(f"run_sessions() takes ReplayTask and AgentTask objects, got {type(task).__name__} (task {index})")
            if self.done(index):
                continue
            if isinstance(task, ReplayTask):
                replays += 1  # a transcript that is not there is that session's problem, reported with it
                if dumps is not None:
                    self._pickles(index, task, "policy", task.policy, checked, dumps)
            else:
                agents += 1
                if self.where == "ray" and dumps is not None:
                    for what in ("model", "setup", "policy", "prompt"):
                        self._pickles(index, task, what, getattr(task, what), checked, dumps)
        return replays, agents

    def _pickler(self) -> Callable[[object], bytes] | None:
        if self.where == "ray":
            try:
                from ray import cloudpickle
            except ImportError:
                return None
            return lambda value: bytes(cloudpickle.dumps(value))
        if self.where == "processes":
            return lambda value: pickle.dumps(value)
        return None

    def _pickles(self, index: int, task: Task, what: str, value: object, checked: set[int], dumps: Callable[[object], bytes]) -> None:
        if value is None or id(value) in checked:
            return
        how = "Ray sends tasks with cloudpickle" if self.where == "ray" else "the local worker processes take tasks through pickle"
        try:
            dumps(value)
        except Exception as err:  # noqa: BLE001 - any reason it cannot travel is the user's to hear
            raise ConfigurationError(
                f"the {what} of task {index} ({label_of(task)}) cannot be pickled, so nothing was sent: {describe(err)}. "
                f"{how}: give a module-level function or class, or a functools.partial of one, and let it make what "
                "cannot travel (clients, open files, locks) where it runs") from err
        if self.where == "processes" and _names_main(value):
            raise ConfigurationError(
                f"the {what} of task {index} ({label_of(task)}) refers to the running script (__main__), which the local "
                "worker processes do not import, so nothing was sent: define it in a module, or use engine='ray' (cloudpickle)")
        checked.add(id(value))

    def _next_of(self, kind: Kind) -> tuple[int, Task] | None:
        want = AgentTask if kind == "agent" else ReplayTask
        i = self._cursor[kind]
        n = len(self.tasks)
        while i < n:
            task = self.tasks[i]
            i += 1
            if isinstance(task, want) and not self.done(i - 1):
                self._cursor[kind] = i
                return i - 1, _resolved(task, self.base)
        self._cursor[kind] = n
        return None

    def next_unit(self, kind: Kind) -> _Unit | None:
        if kind == "agent":
            item = self._next_of("agent")
            return _Unit("agent", [item]) if item is not None else None
        items: list[tuple[int, Task]] = []
        while len(items) < self.chunk:
            item = self._next_of("replay")
            if item is None:
                break
            items.append(item)
        return _Unit("replay", items) if items else None

    def rest(self) -> Iterator[tuple[int, Task]]:
        """What was never handed out (a cancelled run reports it as cancelled)."""
        for kind in self.kinds:
            while (item := self._next_of(kind)) is not None:
                yield item


# -- the local engine ----------------------------------------------------------------------------------
class _LocalBackend:
    """Agent sessions on an event loop in a thread; replays in worker processes (one worker: a thread)."""

    def __init__(self, workers: int, agent_concurrency: int, timeout: float | None, grace: float) -> None:
        self.workers = workers
        self.agent_concurrency = agent_concurrency
        self.timeout = timeout
        self.grace = grace
        self.events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.in_flight: dict[Kind, int] = {"replay": 0, "agent": 0}
        self.units: dict[int, _Unit] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._futures: dict[int, concurrent.futures.Future[SessionResult]] = {}
        self._replay_thread: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool: list[WorkerProcess] = []

    # agent sessions: one loop, many tasks
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._loop_thread = threading.Thread(target=serve, name="nbtoolsched-agents", daemon=True)
            self._loop_thread.start()
            ready.wait()
            self._loop = loop
        return self._loop

    def room(self, kind: Kind) -> int:
        if kind == "agent":
            return self.agent_concurrency - self.in_flight["agent"]
        return self.workers - self.in_flight["replay"]

    def submit(self, unit: _Unit) -> None:
        self.units[unit.id] = unit
        self.in_flight[unit.kind] += 1
        if unit.kind == "agent":
            (index, task), = unit.items
            future = asyncio.run_coroutine_threadsafe(run_one(index, task, self.timeout), self._ensure_loop())
            self._futures[unit.id] = future
            future.add_done_callback(self._reporter("agent", unit.id))
        elif self.workers == 1:
            if self._replay_thread is None:
                self._replay_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbtoolsched-replay")
            done = self._replay_thread.submit(run_chunk, unit.items, self.timeout)
            done.add_done_callback(self._reporter("thread", unit.id))
        else:
            worker = next((w for w in self._pool if w.alive and w.unit is None), None)
            if worker is None:
                worker = WorkerProcess(self.events)
                self._pool.append(worker)
            body = pickle.dumps((unit.items, self.timeout), protocol=pickle.HIGHEST_PROTOCOL)
            if not worker.send(unit.id, body):
                worker.unit = unit.id  # its reader reports the end, and the unit with it

    def _reporter(self, source: str, unit_id: int) -> Callable[[concurrent.futures.Future[Any]], None]:
        def report(future: concurrent.futures.Future[Any]) -> None:
            self.events.put((source, unit_id, future))

        return report

    def busy(self) -> bool:
        return bool(self.units)

    def _outcome(self, event: tuple[Any, ...]) -> tuple[_Unit, list[SessionResult] | BaseException] | None:
        source, key, payload = event
        if isinstance(source, WorkerProcess):
            worker = source
            if key is None:  # the worker ended
                if worker in self._pool:
                    self._pool.remove(worker)
                if worker.unit is None or worker.unit not in self.units:
                    return None
                unit_id = worker.unit
                worker.unit = None
                code = worker.proc.poll()
                return self._finish(unit_id, _Lost(f"its worker process {worker.pid} ended (exit code {code})"))
            worker.unit = None
            state, value = payload
            return self._finish(key, value if state == "ok" else _Lost(f"its worker could not run it: {value}"))
        future = payload
        if key not in self.units:
            return None
        if future.cancelled():
            return self._finish(key, None)
        err = future.exception()
        if err is not None:
            return self._finish(key, err)
        value = future.result()
        return self._finish(key, [value] if isinstance(value, SessionResult) else list(value))

    def _finish(self, unit_id: int, outcome: Any) -> tuple[_Unit, Any]:
        unit = self.units.pop(unit_id)
        self._futures.pop(unit_id, None)
        self.in_flight[unit.kind] -= 1
        return unit, outcome

    def poll(self, timeout: float) -> list[tuple[_Unit, list[SessionResult] | BaseException]]:
        out = []
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            return []
        while True:
            found = self._outcome(event)
            if found is not None:
                out.append(found)
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return out

    def cancel(self) -> list[tuple[_Unit, list[SessionResult] | BaseException | None]]:
        """Cancel the agent sessions and wait until their tools have stopped; let running
        replay chunks finish for ``grace`` seconds, then kill their workers."""
        out: list[tuple[_Unit, Any]] = []
        if self._loop is not None:
            for future in list(self._futures.values()):
                future.cancel()

            async def settle() -> None:
                # A cancelled session can return before the cleanup its tools started (stopping a
                # shell's process group) is done: let that finish before going on.
                others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for task in others:
                    task.cancel()
                if others:
                    await asyncio.wait(others, timeout=30)

            asyncio.run_coroutine_threadsafe(settle(), self._loop).result()
        if self._replay_thread is not None:
            self._replay_thread.shutdown(wait=True, cancel_futures=True)
            self._replay_thread = None
        deadline = time.monotonic() + self.grace
        while self.units and time.monotonic() < deadline:
            for found in self.poll(0.05):
                unit, outcome = found
                out.append((unit, outcome if isinstance(outcome, list) else None))
            if all(u.kind == "agent" for u in self.units.values()):
                break
        for worker in list(self._pool):
            if worker.unit is not None:
                worker.kill()
        for unit in list(self.units.values()):
            self._finish(unit.id, None)
            out.append((unit, None))
        return out

    def close(self) -> None:
        for worker in self._pool:
            worker.close()
        self._pool = []
        if self._replay_thread is not None:
            self._replay_thread.shutdown(wait=True)
            self._replay_thread = None
        if self._loop is not None:
            loop = self._loop
            loop.call_soon_threadsafe(loop.stop)
            if self._loop_thread is not None:
                self._loop_thread.join(30)
            loop.close()
            self._loop = None


# -- one run ---------------------------------------------------------------------------------------------
class _Cancel(Exception):
    """The run's cancel event was set."""


def _dataset_tasks(dataset: Any, policy: Policy | None) -> list[Task]:
    """A ``ray.data`` dataset of paths (a ``path`` column, or its only column) as replay tasks."""
    columns = list(dataset.columns() or [])
    column = "path" if "path" in columns else columns[0] if len(columns) == 1 else None
    if column is None:
        raise ConfigurationError(f"a dataset of transcripts needs a 'path' column (or a single column), got {columns}")
    chosen = policy or Policy(name="default")
    return [ReplayTask(str(row[column]), chosen) for row in dataset.iter_rows()]


def _is_dataset(value: object) -> bool:
    return type(value).__name__ in ("Dataset", "MaterializedDataset") and type(value).__module__.startswith("ray.data")


class RunOptions(TypedDict, total=False):
    """The keywords of ``run_sessions`` (``iter_sessions`` and ``arun_sessions`` take them too)."""

    engine: str | RayEngine
    workers: int | None
    progress: bool
    cancel: threading.Event | None
    chunk_size: int | None
    description: str
    timeout: float | None
    retries: int
    run_dir: str | os.PathLike[str] | None
    keep_results: bool
    policy: Policy | None


_OPEN: "weakref.WeakSet[SessionStream]" = weakref.WeakSet()


@atexit.register
def _close_open_streams() -> None:
    """A stream left open (a ``break`` without ``close()``) stops its workers before the
    interpreter goes down, not during its finalization."""
    for stream in list(_OPEN):
        stream.close()


class SessionStream:
    """Results as sessions finish (any order), with the run's summary so far.

    Iterate it once. Leaving early cancels what still runs: ``close()``, or the end of a
    ``with iter_sessions(...) as stream:`` block (a ``break`` alone leaves the workers
    running until the stream is closed or garbage-collected). A Ctrl-C stops the run:
    what finished has been handed out, the rest comes out as cancelled, and the
    KeyboardInterrupt is raised again at the end."""

    def __init__(self, tasks: Iterable[Task] | Any, options: RunOptions, *, reraise: bool = True) -> None:
        engine = options.get("engine", "local")
        workers = options.get("workers")
        self.timeout = options.get("timeout")
        self.retries = int(options.get("retries", 0))
        if self.retries < 0:
            raise ConfigurationError(f"retries must not be negative, got {self.retries}")
        if self.timeout is not None and (isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float))
                                         or not math.isfinite(self.timeout) or not 0 < self.timeout <= MAX_TIMEOUT):
            raise ConfigurationError(f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} "
                                     f"(or None for no limit), got {self.timeout!r}")
        chunk = options.get("chunk_size")
        if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1):
            raise ConfigurationError(f"chunk_size must be a positive whole number of sessions (or None), got {chunk!r}")
        if workers is not None and workers < 1:
            raise ConfigurationError(f"workers must be a positive number, got {workers}")
        self.cancel_event = options.get("cancel") or threading.Event()
        self.reraise = reraise
        items = _dataset_tasks(tasks, options.get("policy")) if _is_dataset(tasks) else tasks
        self.tasks: Sequence[Task] = items if isinstance(items, Sequence) else list(items)
        self.ray_engine: RayEngine | None
        if isinstance(engine, RayEngine):
            self.ray_engine, self.owns_engine = engine, False
        elif engine == "ray":
            self.ray_engine, self.owns_engine = RayEngine(num_cpus=workers), True
        elif engine == "local":
            self.ray_engine, self.owns_engine = None, False
        else:
            raise ConfigurationError(f'engine must be "local", "ray" or a RayEngine, got {engine!r}')
        self.engine = "ray" if self.ray_engine is not None else "local"
        self.workers_option = workers
        self.summary = RunSummary()
        self.resumed = 0
        self.local_workers = workers or (os.cpu_count() or 1)
        self.agent_concurrency = workers or 8
        self.chunk_size = options.get("chunk_size")
        self.yield_resumed = options.get("keep_results", True) or reraise  # iter_sessions hands out every result
        run_dir = options.get("run_dir")
        self.run_dir = RunDirectory(run_dir, len(self.tasks)) if run_dir is not None else None
        if self.run_dir is not None:  # what finished before: checked against the tasks, summed up, skipped
            for result in self.run_dir.read(lambda i: label_of(self.tasks[i])):
                self.summary.add(result)
                self.resumed += 1
        where = "ray" if self.ray_engine is not None else ("processes" if self.local_workers > 1 else "here")
        done = self.run_dir.is_done if self.run_dir is not None else (lambda index: False)
        self.plan = _Plan(self.tasks, where, self.chunk_size, self.local_workers, done)
        self._progress_options = (options.get("progress", True), options.get("description", "sessions"))
        self.progress: _Progress | None = None
        self.cancelled = False
        self.interrupted = False
        self.workers = 0
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.startup_seconds = 0.0  # starting (or joining) Ray, before the first session was sent
        self.parquet: str | None = None  # run_dir/results.parquet, when written
        self._iterator = self._run()

        _OPEN.add(self)

    # the iterator protocol
    def __iter__(self) -> "SessionStream":
        return self

    def __next__(self) -> SessionResult:
        return next(self._iterator)

    def close(self) -> None:
        """Stop the run if it still goes (what runs is cancelled, its workers stopped)."""
        _OPEN.discard(self)
        self._iterator.close()

    def __enter__(self) -> "SessionStream":
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _run(self) -> Generator[SessionResult, None, None]:
        enabled, description = self._progress_options
        progress = self.progress = _Progress(len(self.tasks), enabled, description, done=self.resumed)
        began = time.perf_counter()
        try:
            if self.run_dir is not None and self.yield_resumed:
                for result in self.run_dir.results():
                    yield result
            backend: _LocalBackend | RayBackend
            if self.ray_engine is not None:
                self.ray_engine.start()
                self.startup_seconds = time.perf_counter() - began
                capped = self.workers_option is not None or (self.ray_engine.joined and self.ray_engine.num_cpus is not None)
                self.workers = self.workers_option or self.ray_engine.workers
                if self.chunk_size is None and self.plan.replays:
                    self.plan.chunk = max(1, min(MAX_CHUNK, math.ceil(self.plan.replays / (self.workers * 4))))
                backend = RayBackend(self.ray_engine, self.workers, capped, self.timeout, self.plan.agents)
            else:
                self.workers = self.agent_concurrency if self.plan.agents and not self.plan.replays else self.local_workers
                backend = _LocalBackend(self.local_workers, self.agent_concurrency, self.timeout, GRACE)
            self.started = time.perf_counter()
            for result in self._drive(backend):
                if self.run_dir is not None:
                    self.run_dir.save_artifacts(result)
                    self.run_dir.write(result)
                self.summary.add(result)
                progress.update(1)
                yield result
            if self.run_dir is not None:
                self.run_dir.close()
                self.parquet = self.run_dir.write_parquet()
            if self.interrupted and self.reraise:
                raise KeyboardInterrupt(f"the run was interrupted after {self.summary.ok} sessions")
        finally:
            _OPEN.discard(self)
            self.seconds = time.perf_counter() - self.started
            progress.close()
            if self.run_dir is not None:
                self.run_dir.close()
            if self.owns_engine and self.ray_engine is not None:
                self.ray_engine.stop()

    def _drive(self, backend: _LocalBackend | RayBackend) -> Iterator[SessionResult]:
        plan = self.plan
        retry: dict[Kind, collections.deque[_Unit]] = {"replay": collections.deque(), "agent": collections.deque()}
        in_flight: dict[int, _Unit] = {}
        settled = False
        try:
            try:
                while True:
                    for kind in plan.kinds:
                        while backend.room(kind) > 0:
                            unit = retry[kind].popleft() if retry[kind] else plan.next_unit(kind)
                            if unit is None:
                                break
                            backend.submit(unit)
                            in_flight[unit.id] = unit
                    if not in_flight:
                        settled = True
                        return
                    if self.cancel_event.is_set():
                        raise _Cancel()
                    for unit, outcome in backend.poll(0.2):
                        in_flight.pop(unit.id, None)
                        if isinstance(outcome, BaseException):
                            yield from self._lost(unit, outcome, retry)
                        else:
                            for result in outcome:
                                result.attempts = unit.attempt
                                yield result
            except (_Cancel, KeyboardInterrupt) as stop:
                self.cancelled = True
                self.interrupted = isinstance(stop, KeyboardInterrupt)
                stopped = backend.cancel()
                settled = True
                for unit, gave in stopped:
                    in_flight.pop(unit.id, None)
                    yield from gave if isinstance(gave, list) else _cancelled(unit.items)
                for units in retry.values():
                    for unit in units:
                        yield from _cancelled(unit.items)
                for unit in in_flight.values():
                    yield from _cancelled(unit.items)
                for item in plan.rest():
                    yield from _cancelled([item])
        finally:
            if not settled:  # the consumer left early: stop what runs
                self.cancelled = True
                backend.cancel()
            backend.close()

    def _lost(self, unit: _Unit, err: BaseException, retry: dict[Kind, collections.deque[_Unit]]) -> Iterator[SessionResult]:
        """A unit whose worker died: a chunk is sent again one session at a time (free: which of
        them was to blame is unknown); a single session ``retries`` times, then it is failed."""
        if len(unit.items) > 1:
            retry[unit.kind].extend(_Unit(unit.kind, [item], unit.attempt) for item in unit.items)
            return
        if unit.attempt <= self.retries:
            retry[unit.kind].append(_Unit(unit.kind, unit.items, unit.attempt + 1))
            return
        why = lost_reason(err) if not isinstance(err, _Lost) else str(err)
        for index, task in unit.items:
            yield SessionResult(index, label_of(task), "failed", None,
                                f"its worker was lost ({unit.attempt} attempt{'s' if unit.attempt > 1 else ''}): {why}",
                                attempts=unit.attempt)


def iter_sessions(tasks: Iterable[Task], **options: Unpack[RunOptions]) -> SessionStream:
    """Run every task and hand out each result as it finishes, holding none of them.

    Takes ``run_sessions``' keywords. The tasks are checked at once (missing paths, what
    cannot be pickled); the run starts at the first ``next()``. ``stream.summary`` is the
    run's ``RunSummary`` so far."""
    return SessionStream(tasks, options)


def run_sessions(tasks: Iterable[Task], **options: Unpack[RunOptions]) -> ScaleRun:
    """Run every task and collect one result per task, in task order.

    ``workers``: processes (replays) or concurrent sessions (agents) for the local engine
    (default: the CPU count, and 8 concurrent agent sessions); on Ray, how many run at
    once (default: what the cluster's CPUs hold; ``engine="ray"`` starts a local Ray of
    that many CPUs unless ``RAY_ADDRESS`` names a cluster). ``timeout``: seconds per session.
    ``retries``: how often a session whose worker died is run again. ``cancel``: set it
    (from another thread) to stop the run. ``run_dir``: write each result there as it
    finishes and skip what an earlier run there finished; with ``keep_results=False``
    only the summary is kept (constant memory). ``policy``: for a ``ray.data`` dataset of
    paths given as ``tasks``."""
    stream = SessionStream(tasks, options, reraise=False)
    keep = options.get("keep_results", True)
    results: list[SessionResult] = []
    try:
        for result in stream:
            if keep:
                results.append(result)
    except KeyboardInterrupt:
        # A Ctrl-C that landed between two results (writing one to the run directory, say),
        # outside the run's own handler: stop what runs, and account for every session.
        stream.close()
        stream.cancelled = stream.interrupted = True
        if keep:
            seen = {r.index for r in results}
            if stream.run_dir is not None and any(stream.run_dir.is_done(i) for i in range(len(stream.tasks)) if i not in seen):
                results.extend(r for r in stream.run_dir.results() if r.index not in seen)  # saved, not yet handed out
                seen = {r.index for r in results}
            results.extend(_cancelled((index, task) for index, task in enumerate(stream.tasks) if index not in seen))
    results.sort(key=lambda r: r.index)
    return ScaleRun(results, stream.engine, stream.workers, stream.seconds, stream.cancelled, stream.summary, stream.interrupted,
                    os.fspath(stream.run_dir.path) if stream.run_dir is not None else None, stream.resumed)


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
