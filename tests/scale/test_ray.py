"""The same sessions on a local Ray (2 CPUs): identical results, failures reported, and a
cancelled run leaves no process behind.

One Ray is started for the module (it takes seconds to start); the last test shuts it
down and checks that every process of it is gone.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason='Ray is an optional extra: pip install -e ".[ray]"')

from nbtoolsched.scale import Policy, RayEngine, ReplayTask, replay, run_sessions  # noqa: E402
from nbtoolsched.scale._engines import ray_processes  # noqa: E402

from .conftest import fixture  # noqa: E402
from .helpers import alive, broken_task, pids_of, sleeper_task, work_task  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]

REAL = ["hand_parallel.jsonl", "hand_broken.jsonl", "fasthooks_main.jsonl", "fasthooks_studio.jsonl", "fasthooks_sidechain.jsonl"]


@pytest.fixture(scope="module")
def ray_engine():
    temp = tempfile.mkdtemp(prefix="nbr", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    engine = RayEngine(num_cpus=2, _temp_dir=temp)
    engine.start()
    assert engine.owned, "a Ray was already running in this process"
    yield engine
    engine.stop()


def test_replays_on_ray_equal_the_local_engine(ray_engine, tmp_path):
    tasks = [ReplayTask(fixture(n), Policy(allow=("Bash(ls:*)",), deny=("Bash(rm:*)",))) for n in REAL * 4]
    tasks.append(ReplayTask(str(tmp_path / "missing.jsonl")))
    local = run_sessions(tasks, workers=2, progress=False)
    on_ray = run_sessions(tasks, engine=ray_engine, chunk_size=3, progress=False)
    assert on_ray.engine == "ray" and on_ray.workers == 2
    assert [r.value for r in on_ray.results] == [r.value for r in local.results]
    assert all(r.ok for r in on_ray.results)
    # A report from Ray is the report from here.
    here = replay([fixture(n) for n in REAL], workers=1, progress=False)
    there = replay([fixture(n) for n in REAL], engine=ray_engine, progress=False)
    assert str(there) == str(here)


def test_agent_sessions_on_ray_equal_the_local_engine_and_failures_are_reported(ray_engine, tmp_path):
    local = run_sessions([work_task(tmp_path / "local", n) for n in range(3)] + [broken_task(tmp_path / "local")], progress=False)
    on_ray = run_sessions([work_task(tmp_path / "ray", n) for n in range(3)] + [broken_task(tmp_path / "ray")],
                          engine=ray_engine, progress=False)
    assert [r.status for r in on_ray.results] == ["ok", "ok", "ok", "failed"]
    assert [r.value for r in on_ray.results] == [r.value for r in local.results]
    assert on_ray.results[3].error == local.results[3].error
    assert (tmp_path / "ray" / "s2" / "notes.txt").read_text() == "seen\n"  # each session in its own folder


def test_cancelling_a_ray_run_stops_the_tasks_and_their_processes(ray_engine, tmp_path):
    cancel = threading.Event()

    def stop_when_sleeping() -> None:
        deadline = time.monotonic() + 120
        while len(pids_of(tmp_path)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=stop_when_sleeping, daemon=True).start()
    run = run_sessions([sleeper_task(tmp_path, n) for n in range(2)], engine=ray_engine, cancel=cancel, progress=False)
    assert run.cancelled and [r.status for r in run.results] == ["cancelled", "cancelled"]
    shells, workers = pids_of(tmp_path)[0::2], pids_of(tmp_path)[1::2]
    assert len(shells) == 2
    # The shells were stopped by the cancelled sessions; their Ray worker processes end with
    # them (an agent session's worker runs one task). Wait for the exit, bounded.
    deadline = time.monotonic() + 30
    while any(alive(p) for p in shells + workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in shells), "a cancelled session's shell is still running"
    assert not any(alive(p) for p in workers), "a cancelled session's Ray worker is still running"


def test_stopping_the_engine_leaves_no_ray_process(ray_engine):
    session_dir = ray_engine._session_dir
    assert ray_processes(session_dir), "the running Ray's processes should be found"
    ray_engine.stop()
    assert ray_processes(session_dir) == set()
    assert not Path(session_dir).parent.name == ""  # the check looked at a real session directory
