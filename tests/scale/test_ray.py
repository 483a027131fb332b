"""The same sessions on Ray as here, on a cluster of two nodes joined as Ray users join one.

The module starts one cluster for all its tests, as ``ray start`` does: a head on
127.0.0.2 and a second node on 127.0.0.3 (1 CPU each, each with its own temp dir), then
joins it with ``RayEngine(address=...)``. On it: replays and agent sessions equal the
local engine's (relative paths meaning the caller's folder); a worker killed mid-run
loses nothing; a session past its timeout is reported; what cannot be pickled is named
before anything is sent; cancelling stops the sessions' shells and workers; scripts run
the README's recipe and a one-session replay under ``RAY_ADDRESS`` (as ``ray job
submit`` sets it); ``stop()`` on a cluster returns at once. The last test starts a Ray
of its own and checks that ``stop()`` leaves none of its processes. The fixture kills
every process of the cluster at the end (by their temp dirs, never by name).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import ray  # a test that needs Ray fails without it: it is part of the dev extra

from nbtoolsched import ConfigurationError, ScriptedModel
from nbtoolsched.scale import AgentTask, Policy, RayEngine, ReplayTask, iter_sessions, replay, run_sessions
from nbtoolsched.scale._engines import ray_processes

from .conftest import TRANSCRIPTS, fixture
from .helpers import alive, broken_task, kill_stalled_worker, pids_of, sleeper_task, stalling_policy, work_task

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
REAL = ["hand_parallel.jsonl", "hand_broken.jsonl", "fasthooks_main.jsonl", "fasthooks_studio.jsonl", "fasthooks_sidechain.jsonl"]
QUIET = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}  # no token files, no usage reports


@dataclass
class Cluster:
    address: str
    head_dir: str
    node_dir: str

    def processes(self) -> set[int]:
        return ray_processes(self.head_dir) | ray_processes(self.node_dir)


def _ray_start(*args: str) -> None:
    command = [str(Path(sys.executable).parent / "ray"), "start", *args, "--disable-usage-stats"]
    done = subprocess.run(command, env={**os.environ, **QUIET}, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def _kill_all(folders: list[str]) -> None:
    """Kill every process of the nodes kept in these temp dirs (and what they start meanwhile)."""
    deadline = time.monotonic() + 20
    while (found := set().union(*(ray_processes(f) for f in folders))) and time.monotonic() < deadline:
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster():
    saved = {name: os.environ.get(name) for name in QUIET}
    os.environ.update(QUIET)
    # Short folders: Ray's socket paths must fit in 107 bytes.
    head_dir, node_dir = tempfile.mkdtemp(prefix="nbh", dir="/tmp"), tempfile.mkdtemp(prefix="nbn", dir="/tmp")
    try:
        _ray_start("--head", "--node-ip-address=127.0.0.2", "--port=0", "--num-cpus=1", f"--temp-dir={head_dir}",
                   "--include-dashboard=false")
        address = (Path(head_dir) / "ray_current_cluster").read_text().strip()
        assert address.startswith("127.0.0.2:"), address
        _ray_start(f"--address={address}", "--node-ip-address=127.0.0.3", "--num-cpus=1", f"--temp-dir={node_dir}")
        yield Cluster(address, head_dir, node_dir)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _kill_all([head_dir, node_dir])
        assert not ray_processes(head_dir) | ray_processes(node_dir), "a process of the test cluster is still running"
        shutil.rmtree(head_dir, ignore_errors=True)
        shutil.rmtree(node_dir, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def engine(cluster):
    # SPREAD, as a Ray user spreads work over a cluster: both nodes replay (Ray's default
    # packs tasks onto the head while it keeps up, which would leave the second node idle).
    joined = RayEngine(address=cluster.address, task_options={"num_cpus": 1, "scheduling_strategy": "SPREAD"}).start()
    assert joined.joined and not joined.owned and joined.workers == 2
    yield joined
    joined.stop()


def test_replays_on_a_cluster_equal_the_local_engine_and_read_relative_paths_here(engine, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)  # the nodes' workers start elsewhere: the paths are made absolute first
    tasks = [ReplayTask(name, Policy(allow=("Bash(ls:*)",), deny=("Bash(rm:*)",))) for name in REAL * 4]
    local = run_sessions(tasks, workers=1, progress=False)
    on_ray = run_sessions(tasks, engine=engine, chunk_size=3, progress=False)
    assert on_ray.engine == "ray" and on_ray.workers == 2
    assert [r.value for r in on_ray.results] == [r.value for r in local.results]
    assert all(r.ok and r.value.status != "unreadable" for r in on_ray.results)
    # A report from Ray is the report from here.
    assert str(replay(REAL, engine=engine, progress=False)) == str(replay(REAL, workers=1, progress=False))


def test_a_worker_killed_mid_run_on_a_two_node_cluster_loses_nothing(engine, cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    policy = stalling_policy(tmp_path)
    tasks = [ReplayTask(name, policy) for name in REAL * 2]
    expected = [r.value for r in run_sessions(tasks, workers=1, progress=False).results]
    (tmp_path / "stall").touch()
    killed: list[int] = []
    nodes = (cluster.head_dir, cluster.node_dir)
    worked: set[str] = set()  # the nodes whose workers replayed (the killed one's included)

    def on_its_node(worker: int) -> None:
        worked.update(f for f in nodes if worker in ray_processes(f))

    threading.Thread(target=kill_stalled_worker, args=(tmp_path, killed, on_its_node), daemon=True).start()
    got = []
    with iter_sessions(tasks, engine=engine, chunk_size=1, retries=1, progress=False) as stream:
        for result in stream:  # a streaming consumer: results as they finish
            got.append(result)
            pid = int(result.worker.rsplit(":", 1)[1])
            worked.update(f for f in nodes if pid in ray_processes(f))
    assert killed and worked == set(nodes), "both nodes should have replayed"
    got.sort(key=lambda r: r.index)
    assert [r.value for r in got] == expected
    assert [r.attempts for r in got].count(2) == 1  # the session on the killed worker ran again
    assert stream.summary.ok == len(tasks)


def test_agent_sessions_reuse_their_workers_and_equal_the_local_engine(engine, tmp_path):
    local = run_sessions([work_task(tmp_path / "local", n) for n in range(6)] + [broken_task(tmp_path / "local")], progress=False)
    started = time.perf_counter()
    on_ray = run_sessions([work_task(tmp_path / "ray", n) for n in range(6)] + [broken_task(tmp_path / "ray")],
                          engine=engine, progress=False)
    assert [r.status for r in on_ray.results] == ["ok"] * 6 + ["failed"]
    assert [r.value for r in on_ray.results] == [r.value for r in local.results]
    assert on_ray.results[6].error == local.results[6].error
    assert (tmp_path / "ray" / "s5" / "notes.txt").read_text() == "seen\n"  # each session in its own folder
    assert len({r.worker for r in on_ray.results}) <= 2  # 7 sessions, 2 reused workers (not one process each)
    first = time.perf_counter() - started
    started = time.perf_counter()
    again = run_sessions([work_task(tmp_path / "again", n) for n in range(20)], engine=engine, progress=False)
    assert all(r.ok for r in again.results) and {r.worker for r in again.results} <= {r.worker for r in on_ray.results}
    assert time.perf_counter() - started < max(first, 5.0)  # the workers were there already
    # The idle actors hold the cluster's two CPUs: a replay after them must still get one.
    after = run_sessions([ReplayTask(fixture(REAL[0]))], engine=engine, progress=False)
    assert after.results[0].ok


def test_a_session_past_its_timeout_is_reported_and_what_cannot_be_pickled_is_named_first(engine, tmp_path):
    fifo = tmp_path / "stuck.jsonl"
    os.mkfifo(fifo)
    run = run_sessions([ReplayTask(str(fifo)), sleeper_task(tmp_path, 0), ReplayTask(fixture(REAL[0]))], engine=engine,
                       timeout=2, progress=False)
    stuck, slept, fine = run.results
    assert stuck.ok and "a FIFO" in stuck.value.problems[0]
    assert slept.status == "failed" and slept.error.startswith("timed out after 2 s") and fine.ok
    assert not alive(pids_of(tmp_path)[0])  # the timed-out session's shell was stopped
    lock = threading.Lock()
    bad = AgentTask(functools.partial(ScriptedModel, [lock]), "hi", name="locked")
    with pytest.raises(ConfigurationError, match=r"the model of task 1 \(locked\) cannot be pickled, so nothing was sent.*lock"):
        run_sessions([work_task(tmp_path, 1), bad], engine=engine, progress=False)
    assert not (tmp_path / "s1").exists()  # the first task was not sent either


def test_cancelling_a_ray_run_stops_the_sessions_and_their_processes(engine, tmp_path):
    cancel = threading.Event()

    def stop_when_sleeping() -> None:
        deadline = time.monotonic() + 120
        while len(pids_of(tmp_path)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=stop_when_sleeping, daemon=True).start()
    run = run_sessions([sleeper_task(tmp_path, n) for n in range(2)], engine=engine, cancel=cancel, progress=False)
    assert run.cancelled and [r.status for r in run.results] == ["cancelled", "cancelled"]
    shells, workers = pids_of(tmp_path)[0::2], pids_of(tmp_path)[1::2]
    assert len(shells) == 2
    deadline = time.monotonic() + 30
    while any(alive(p) for p in shells + workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in shells), "a cancelled session's shell is still running"
    assert not any(alive(p) for p in workers), "a cancelled session's Ray worker is still running"


def test_a_ray_data_dataset_of_paths_is_replayed_like_the_list(engine):
    import ray.data as data  # part of the dev extra: without it this test fails, it does not skip
    paths = [fixture(name) for name in REAL]
    policy = Policy(deny=("Bash(rm:*)",))
    from_list = run_sessions([ReplayTask(p, policy) for p in paths], engine=engine, progress=False)
    from_data = run_sessions(data.from_items([{"path": p} for p in paths]), engine=engine, policy=policy, progress=False)
    assert [r.value for r in from_data.results] == [r.value for r in from_list.results]


def _readme_recipe() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    found = [b for b in blocks if b.startswith("# policy_sim.py")]
    assert len(found) == 1, "README.md's 'Beyond one machine' should hold one recipe starting '# policy_sim.py'"
    return found[0]


def _project(folder: Path) -> Path:
    """What the recipe reads: transcripts/, .claude/settings.json, proposed.json."""
    (folder / "transcripts").mkdir(parents=True)
    for name in REAL:
        shutil.copy(TRANSCRIPTS / name, folder / "transcripts" / name)
    (folder / ".claude").mkdir()
    (folder / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(ls:*)"]}}')
    (folder / "proposed.json").write_text('{"permissions": {"allow": ["Bash(ls:*)", "Read"], "deny": ["Bash(rm:*)"]}}')
    return folder


def _script(folder: Path, code: str, ray_address: str | None) -> subprocess.CompletedProcess[str]:
    (folder / "script.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | QUIET
    if ray_address:
        env["RAY_ADDRESS"] = ray_address
    return subprocess.run([sys.executable, "script.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=240)


def test_the_readme_recipe_runs_as_a_script_on_both_engines(cluster, tmp_path):
    recipe = _readme_recipe()
    here = _script(_project(tmp_path / "here"), recipe, None)
    there = _script(_project(tmp_path / "there"), recipe, cluster.address)
    assert here.returncode == 0, here.stderr[-3000:]
    assert there.returncode == 0, there.stderr[-3000:]
    assert "BrokenProcessPool" not in here.stderr + there.stderr
    assert "5 sessions" in here.stdout and here.stdout == there.stdout  # the same comparison, printed


def test_under_ray_address_workers_mean_concurrency_and_one_replay_is_quick(cluster, tmp_path):
    before = cluster.processes()
    code = ("import time\nstarted = time.perf_counter()\n"
            "from nbtoolsched.scale import ReplayTask, run_sessions\n"
            "run = run_sessions([ReplayTask('transcripts/hand_parallel.jsonl')], engine='ray', workers=2, progress=False)\n"
            "print(run.engine, run.workers, run.results[0].status, run.results[0].value.status, f'{time.perf_counter() - started:.1f}')\n")
    done = _script(_project(tmp_path), code, cluster.address)
    assert done.returncode == 0, done.stderr[-3000:]
    engine_name, workers, status, replayed, seconds = done.stdout.split()
    assert (engine_name, workers, status, replayed) == ("ray", "2", "ok", "ok")
    assert float(seconds) < 15, f"a one-session replay on a running cluster took {seconds} s"
    assert before <= cluster.processes() | {p for p in before if not alive(p)}  # the cluster went on


def test_stop_leaves_a_cluster_at_once_and_a_ray_it_started_without_a_process(engine, cluster, tmp_path):
    started = time.perf_counter()
    engine.stop()
    assert time.perf_counter() - started < 2.0
    assert not ray.is_initialized() and cluster.processes()  # disconnected; the cluster goes on
    temp = tempfile.mkdtemp(prefix="nbr", dir="/tmp")
    try:
        own = RayEngine(num_cpus=1, _temp_dir=temp, _node_ip_address="127.0.0.4")
        run = run_sessions([ReplayTask(fixture(REAL[0]))], engine=own, progress=False)
        assert own.owned and run.results[0].ok
        session_dir = own._session_dir
        assert ray_processes(session_dir), "the running Ray's processes should be found"
        own.stop()
        assert ray_processes(session_dir) == set()
    finally:
        _kill_all([temp])
        shutil.rmtree(temp, ignore_errors=True)
