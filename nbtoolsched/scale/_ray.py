"""Ray as an engine: replays as Ray tasks, agent sessions on a pool of reused actors.

``RayEngine()`` starts a local Ray (``num_cpus``) unless ``RAY_ADDRESS`` names a cluster
(as ``ray job submit`` sets it), and ``RayEngine(address=...)`` joins one (``"auto"``,
``"host:6379"``, ``"ray://host:10001"``). On a cluster this engine did not start,
``stop()`` disconnects and returns (the cluster goes on), and ``num_cpus`` caps how many
CPUs the run uses at once instead of sizing a cluster.

Replays go in chunks as Ray tasks (Ray reuses its worker processes); agent sessions,
which wait on models and tools, run on async actors (``sessions_per_actor`` at once on
each), created once and reused by every run of the engine until it stops, except that
an actor with nothing to do is let go while a replay waits (it holds a CPU). Every task
and actor asks for ``task_options`` (``{"num_cpus": 1}`` unless given: any of Ray's
``.options()``, such as ``num_cpus=0.5``, ``memory=``, ``resources={"sandbox": 1}``).
Ray's own retries are off: the engine retries what a dead worker lost itself, the same
way on every engine (``run_sessions(retries=...)``).
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .._errors import ConfigurationError
from ._work import SessionResult, Task, describe, run_chunk, run_one

__all__ = ["RayEngine", "RayBackend", "ray_processes"]


def _remote_chunk(chunk: Sequence[tuple[int, Task]], timeout: float | None) -> list[SessionResult]:
    """A Ray task: a chunk of replays on the worker's main thread (so SIGALRM can stop a hung one)."""
    return run_chunk(chunk, timeout, alarm=True)


class _SessionActor:
    """A reused worker for agent sessions (an async actor: several sessions at once)."""

    async def run(self, index: int, task: Task, timeout: float | None) -> SessionResult:
        return await run_one(index, task, timeout)

    def pid(self) -> int:
        return os.getpid()


class RayEngine:
    """Ray as an engine: a local Ray (``num_cpus``) or a cluster (``address``, or ``RAY_ADDRESS``).

    Reusable across runs (``with RayEngine(num_cpus=2) as ray_engine: ...``); a Ray this
    engine started is shut down by ``stop()`` (or at the end of a ``run_sessions`` that
    was given ``engine="ray"``), a cluster it joined is only disconnected from.
    ``init_options`` go to ``ray.init`` (``runtime_env={"py_modules": [nbtoolsched]}`` ships
    this package to a cluster's workers, ``_temp_dir``...). ``task_options`` go to every
    Ray task and actor (resources); ``sessions_per_actor``: agent sessions one actor runs
    at once. ``grace``: seconds a cancelled task gets to stop by itself before its worker
    process is killed."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, grace: float = 3.0,
                 task_options: dict[str, Any] | None = None, sessions_per_actor: int = 4, **init_options: Any) -> None:
        if num_cpus is not None and num_cpus < 1:
            raise ConfigurationError(f"num_cpus must be a positive number, got {num_cpus}")
        if sessions_per_actor < 1:
            raise ConfigurationError(f"sessions_per_actor must be a positive number, got {sessions_per_actor}")
        self.address = address
        self.num_cpus = num_cpus
        self.grace = grace
        self.task_options: dict[str, Any] = dict(task_options) if task_options else {"num_cpus": 1}
        self.sessions_per_actor = sessions_per_actor
        self.init_options = init_options
        self.owned = False  # this engine started the Ray it runs on (and shuts it down)
        self.connected = False  # this engine called ray.init (and so disconnects in stop)
        self._chunk_fn: Any = None
        self._actor_cls: Any = None
        self.actors: list[Any] = []
        self._session_dir = ""
        self._lock = threading.Lock()

    @staticmethod
    def _ray() -> Any:
        try:
            import ray
        except ImportError:
            raise ConfigurationError('engine="ray" needs Ray, an optional extra: pip install "nbtoolsched[ray]"') from None
        return ray

    @property
    def target(self) -> str | None:
        """The cluster this engine joins (its address, or ``RAY_ADDRESS``), or None for a local Ray."""
        return self.address or os.environ.get("RAY_ADDRESS") or None

    @property
    def joined(self) -> bool:
        """Whether the Ray it runs on is someone else's (a cluster, or one this process had already)."""
        return not self.owned

    def start(self) -> "RayEngine":
        ray = self._ray()
        with self._lock:
            if not ray.is_initialized():
                options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **self.init_options}
                target = self.target
                if target is None:
                    if self.num_cpus is not None:
                        options["num_cpus"] = self.num_cpus
                    context = ray.init(address="local", **options)
                    self.owned = True
                    self._session_dir = str(getattr(context, "address_info", {}).get("session_dir") or "")
                else:
                    ray.init(address=target, **options)
                self.connected = True
            if self._chunk_fn is None:
                self._chunk_fn = ray.remote(_remote_chunk).options(max_retries=0, **self.task_options)
                self._actor_cls = ray.remote(_SessionActor).options(max_concurrency=self.sessions_per_actor, max_restarts=0,
                                                                     max_task_retries=0, **self.task_options)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Let go of Ray: kill this engine's actors; a Ray it started is shut down and its
        processes waited for (``ray.shutdown`` returns while they are still exiting); a
        cluster it joined is only disconnected from, at once."""
        ray = self._ray()
        with self._lock:
            self.kill_actors()
            self._chunk_fn = self._actor_cls = None
            if self.owned:
                processes = ray_processes(self._session_dir) if self._session_dir else set()
                ray.shutdown()
                _wait_for_exit(processes, timeout)
            elif self.connected:
                ray.shutdown()
            self.owned = self.connected = False

    def kill_actors(self) -> None:
        if self.actors:
            ray = self._ray()
            for actor in self.actors:
                try:
                    ray.kill(actor, no_restart=True)
                except Exception:  # noqa: BLE001 - already gone
                    pass
            self.actors = []

    def __enter__(self) -> "RayEngine":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def cluster_cpus(self) -> float:
        ray = self._ray()
        return float(ray.cluster_resources().get("CPU", 1)) if ray.is_initialized() else float(self.num_cpus or 1)

    @property
    def workers(self) -> int:
        """How many units run at once: on a cluster it joined, ``num_cpus`` if given; else
        the CPUs of the cluster divided by what each task asks for."""
        per = float(self.task_options.get("num_cpus", 1) or 0)
        if self.joined and self.num_cpus is not None:
            return max(1, int(self.num_cpus / per) if per else self.num_cpus)
        cpus = self.cluster_cpus()
        return max(1, int(cpus / per) if per else int(cpus))

    def __repr__(self) -> str:
        where = self.target or "local"
        return f"RayEngine({where!r}, {'started' if self.connected else 'not started'})"


@dataclass
class _Slot:
    actor: Any
    load: int = 0
    refs: set[Any] = field(default_factory=set)


class RayBackend:
    """One run's units on Ray: replay chunks as tasks, agent sessions on the engine's actors."""

    def __init__(self, engine: RayEngine, concurrency: int, capped: bool, timeout: float | None, agents: int) -> None:
        self.ray = engine._ray()
        self.engine = engine
        self.timeout = timeout
        self.refs: dict[Any, tuple[Any, _Slot | None]] = {}  # ref -> (unit, the actor's slot for an agent session)
        self.replay_slots = concurrency if capped else 2 * concurrency
        per_actor = engine.sessions_per_actor
        actor_cpus = float(engine.task_options.get("num_cpus", 1) or 0)
        fit = max(1, int(engine.cluster_cpus() / actor_cpus)) if actor_cpus else concurrency
        want = concurrency if capped else concurrency * per_actor
        self.max_actors = max(1, min(math.ceil(want / per_actor), fit, math.ceil(max(agents, 1) / per_actor)))
        self.agent_slots = min(want, self.max_actors * per_actor)
        self.slots = [_Slot(a) for a in engine.actors[: self.max_actors]]
        self.in_flight = {"replay": 0, "agent": 0}

    def room(self, kind: str) -> int:
        if kind == "replay":
            return self.replay_slots - self.in_flight["replay"]
        return self.agent_slots - self.in_flight["agent"]

    def _slot(self) -> _Slot:
        free = [s for s in self.slots if s.load < self.engine.sessions_per_actor]
        if not free or (len(self.slots) < self.max_actors and min(s.load for s in free) > 0):
            actor = self.engine._actor_cls.remote()
            self.engine.actors.append(actor)
            slot = _Slot(actor)
            self.slots.append(slot)
            return slot
        return min(free, key=lambda s: s.load)

    def submit(self, unit: Any) -> None:
        if unit.kind == "replay":
            self._release_idle()
            ref = self.engine._chunk_fn.remote(unit.items, self.timeout)
            self.refs[ref] = (unit, None)
        else:
            slot = self._slot()
            (index, task), = unit.items
            ref = slot.actor.run.remote(index, task, self.timeout)
            slot.load += 1
            slot.refs.add(ref)
            self.refs[ref] = (unit, slot)
        self.in_flight[unit.kind] += 1

    def busy(self) -> bool:
        return bool(self.refs)

    def _settle(self, ref: Any) -> tuple[Any, list[SessionResult] | BaseException]:
        unit, slot = self.refs.pop(ref)
        self.in_flight[unit.kind] -= 1
        if slot is not None:
            slot.load -= 1
            slot.refs.discard(ref)
        try:
            value = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as err:
            if slot is not None:
                self._drop(slot)
            return unit, err
        except Exception as err:  # noqa: BLE001 - a worker that died, a task that could not be pickled...
            return unit, err
        return unit, [value] if isinstance(value, SessionResult) else list(value)

    def _release_idle(self) -> None:
        """Kill the actors that run nothing now: each holds its ``task_options`` resources
        (a CPU, by default) for as long as it lives, so idle ones kept for the next agent
        session would leave a replay task waiting for a CPU that never frees (on a cluster
        of two CPUs, two idle actors starve every replay). Replays waiting win; the pool
        grows again when an agent session needs it."""
        busy = {id(s.actor) for s in self.slots if s.load > 0}
        for slot in [s for s in self.slots if s.load == 0]:
            self.slots.remove(slot)
        idle = [a for a in self.engine.actors if id(a) not in busy]
        for actor in idle:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
            self.engine.actors.remove(actor)

    def _drop(self, slot: _Slot) -> None:
        if slot in self.slots:
            self.slots.remove(slot)
        if slot.actor in self.engine.actors:
            self.engine.actors.remove(slot.actor)

    def poll(self, timeout: float) -> list[tuple[Any, list[SessionResult] | BaseException]]:
        if not self.refs:
            return []
        refs = list(self.refs)
        ready, _ = self.ray.wait(refs, num_returns=1, timeout=timeout)
        if not ready:
            return []
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        settled = [self._settle(ref) for ref in ready]
        if self.in_flight["replay"]:
            self._release_idle()
        return settled

    def cancel(self) -> list[tuple[Any, list[SessionResult] | BaseException | None]]:
        """Interrupt what runs, let it stop its tools (``grace``), then kill what still
        runs and the actors; each unit with what it gave, or None when it did not finish."""
        refs = list(self.refs)
        for ref in refs:
            try:
                self.ray.cancel(ref, force=False, recursive=True)
            except Exception:  # noqa: BLE001 - finished meanwhile
                pass
        out: list[tuple[Any, list[SessionResult] | BaseException | None]] = []
        if refs:
            done, still = self.ray.wait(refs, num_returns=len(refs), timeout=self.engine.grace)
            for ref in done:
                unit, outcome = self._settle(ref)
                out.append((unit, outcome if isinstance(outcome, list) else None))
            for ref in still:
                unit, slot = self.refs[ref]
                if slot is None:
                    self.ray.cancel(ref, force=True, recursive=True)
            self.engine.kill_actors()
            self.slots = []
            if still:
                self.ray.wait(still, num_returns=len(still), timeout=10)
            for ref in still:
                unit, _ = self.refs.pop(ref)
                out.append((unit, None))
        self.in_flight = {"replay": 0, "agent": 0}
        return out

    def close(self) -> None:
        pass


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


# The error a lost unit is reported with, in words.
def lost_reason(err: BaseException) -> str:
    return describe(err).split("\n", 1)[0]
