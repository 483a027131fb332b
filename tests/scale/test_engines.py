"""Many sessions on the local engine: agents in one event loop, replays in worker processes.

Every session gets a result (ok, failed with its error, or cancelled), in task order;
one process and two give the same results; relative paths mean the caller's folder and
a missing one is refused before anything runs; a worker killed mid-run loses nothing
(its session runs again); a session past its timeout, or one that blows up, is reported
and the others go on; results stream out as they finish and into a run directory that a
second run resumes; cancelling, or a Ctrl-C, stops the tools of running sessions (their
shell processes are gone) and returns what finished.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import pickle
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from nbtoolsched import ConfigurationError
from nbtoolsched.scale import (AgentTask, Policy, ReplayTask, RunSummary, arun_sessions, iter_sessions, replay_session,
                               run_sessions)
from nbtoolsched.scale import _work
from nbtoolsched.scale._policy import SettingsSource
from nbtoolsched.scale._work import run_chunk

from ..processes import live
from .conftest import TRANSCRIPTS, fixture
from .helpers import POLICY, alive, broken_task, kill_stalled_worker, pids_of, sleeper_task, stalling_policy, work_task

REAL = ["hand_parallel.jsonl", "hand_broken.jsonl", "fasthooks_main.jsonl", "fasthooks_studio.jsonl", "fasthooks_sidechain.jsonl"]


def pool_workers() -> list[int]:
    """This process's local worker processes (plain interpreters running the pool's loop)."""
    me = str(os.getpid())
    return [pid for pid in live(lambda argv: any(b"nbtoolsched.scale._pool import serve" in a for a in argv))
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1] == me]


def wait_until(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the state waited for never came"
        time.sleep(0.05)


def test_agent_sessions_run_side_by_side_each_in_its_own_folder(tmp_path):
    run = run_sessions([work_task(tmp_path, n) for n in range(3)] + [broken_task(tmp_path)], progress=False)
    assert [r.status for r in run.results] == ["ok", "ok", "ok", "failed"]
    assert "TypeError" in run.results[3].error and "_scripted.py" in run.results[3].error
    for n, result in enumerate(run.results[:3]):
        summary = result.value
        assert summary.calls == (("Read", "completed"), ("Grep", "completed"), ("Bash", "completed"),
                                 ("Write", "completed"), ("Bash", "denied"))
        assert summary.prompts == 1 and summary.stop_reason == "end_turn" and summary.final_text == "done"
        assert (tmp_path / f"s{n}" / "notes.txt").read_text() == "seen\n"
    same_name = [dataclasses.replace(r.value, name="s") for r in run.results[:3]]
    assert same_name[0] == same_name[1] == same_name[2]  # the same script ends the same way
    assert run.summary.stop_reasons == {"end_turn": 3} and run.summary.failed == 1 and run.summary.prompts == 3


def test_a_session_without_a_workdir_leaves_no_folder_and_brings_back_its_artifacts(tmp_path):
    task = work_task(tmp_path, 0)
    temporary = dataclasses.replace(task, workdir=None, setup=None, name="temp")
    kept = dataclasses.replace(task, artifacts=True)
    run = run_sessions([temporary, kept], run_dir=tmp_path / "run", progress=False)
    gone, found = (r.value for r in run.results)
    assert gone.workdir and not Path(gone.workdir).exists()  # its temporary folder was removed
    files = found.artifacts
    assert files.files == {"notes.txt": b"seen\n"} and files.deleted == ()  # README.md came from setup: not a change
    assert files.transcript.count("\n") >= 8 and json.loads(files.transcript.splitlines()[0])["type"] == "user"
    folder = Path(files.folder)
    assert folder.parent == tmp_path / "run" / "artifacts"
    assert (folder / "files" / "notes.txt").read_bytes() == b"seen\n" and (folder / "transcript.jsonl").read_text() == files.transcript


def test_a_transcript_written_by_an_agent_replays_to_what_the_agent_did(tmp_path):
    summary = run_sessions([work_task(tmp_path, 0)], progress=False).results[0].value
    replayed = replay_session(summary.transcript_path, POLICY)
    assert replayed.status == "ok" and replayed.cwd == str((tmp_path / "s0").resolve())
    assert [c.tool for c in replayed.calls] == [tool for tool, _ in summary.calls]
    # The live session asked once (the Write) and denied rm; the replay says the same.
    assert replayed.count("prompt") == summary.prompts == 1
    assert [c.outcome == "deny" for c in replayed.calls] == [status == "denied" for _, status in summary.calls]
    assert (replayed.batches, replayed.parallel_batches) == (3, 1)


def test_read_only_calls_rerun_against_a_checkout_of_the_sessions_repository(tmp_path):
    origin = tmp_path / "s0"
    origin.mkdir()
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    (origin / "README.md").write_text("# demo\nline two\n")
    subprocess.run(["git", "-C", str(origin), "add", "."], check=True)
    subprocess.run(["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], check=True)
    task = work_task(tmp_path, 0)
    summary = run_sessions([task.__class__(**{**task.__dict__, "setup": None})], progress=False).results[0].value
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    r = replay_session(summary.transcript_path, POLICY, checkout=clone)
    assert r.rerun is not None
    # Read, Grep and ls are read-only and allowed: run again in the clone, same answers.
    assert (r.rerun.calls, r.rerun.same, r.rerun.different, r.rerun.errors) == (3, 3, 0, 0)
    (clone / "README.md").write_text("changed\n")
    again = replay_session(summary.transcript_path, POLICY, checkout=clone)
    assert again.rerun is not None and again.rerun.different >= 1


@pytest.mark.heavy  # starts worker processes that import the package
def test_relative_paths_mean_this_folder_and_two_processes_give_what_one_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    tasks = [ReplayTask(name, Policy(allow=("Bash(ls:*)",))) for name in REAL * 3]
    one = run_sessions(tasks, workers=1, progress=False)
    monkeypatch.chdir(tmp_path)  # the workers start here: the paths were made absolute before
    elsewhere = run_sessions(tasks[:1], workers=2, progress=False).results[0]  # read against this folder: not here
    assert elsewhere.ok and elsewhere.value.status == "unreadable"
    assert elsewhere.value.path == str(tmp_path / REAL[0])
    monkeypatch.chdir(TRANSCRIPTS)
    two = run_sessions(tasks, workers=2, progress=False)
    assert [r.value for r in one.results] == [r.value for r in two.results]
    assert all(r.ok and r.value.status != "unreadable" for r in two.results)
    assert [r.index for r in two.results] == list(range(len(tasks)))
    assert len({r.worker for r in two.results}) == 2  # two processes did the work
    assert two.results[0].value.path == str(TRANSCRIPTS / REAL[0])
    assert pool_workers() == []  # and they are gone


@pytest.mark.heavy  # starts worker processes, kills one
def test_a_worker_killed_mid_run_loses_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    policy = stalling_policy(tmp_path)
    tasks = [ReplayTask(name, policy) for name in REAL * 2]
    expected = [r.value for r in run_sessions(tasks, workers=1, progress=False).results]
    (tmp_path / "stall").touch()
    killed: list[int] = []
    threading.Thread(target=kill_stalled_worker, args=(tmp_path, killed), daemon=True).start()
    got = []
    with iter_sessions(tasks, workers=2, chunk_size=1, retries=1, progress=False) as stream:
        for result in stream:  # as they finish
            got.append(result)
    assert killed and all(f":{killed[0]}" not in r.worker for r in got)
    got.sort(key=lambda r: r.index)
    assert [r.value for r in got] == expected
    assert [r.attempts for r in got].count(2) == 1  # the killed one ran again, once
    assert stream.summary.ok == len(tasks) and pool_workers() == []


def test_bad_arguments_are_refused_before_anything_runs_and_a_missing_path_fails_alone(tmp_path):
    with pytest.raises(TypeError, match="ReplayTask and AgentTask"):
        run_sessions(["a.jsonl"], progress=False)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="engine must be"):
        run_sessions([], engine="spark", progress=False)
    run = run_sessions([ReplayTask(fixture(REAL[0]))] + [ReplayTask(str(tmp_path / f"missing-{n}.jsonl")) for n in range(2)],
                       workers=1, progress=False)
    assert [r.value.status for r in run.results] == ["ok", "unreadable", "unreadable"]
    for bad, named in (({"retries": -1}, "retries"), ({"timeout": 0}, "timeout"), ({"workers": 0}, "workers"),
                       ({"timeout": float("nan")}, "timeout"), ({"timeout": float("inf")}, "timeout"),
                       ({"timeout": 1e12}, "timeout"), ({"timeout": "5"}, "timeout"), ({"chunk_size": -1}, "chunk_size"),
                       ({"chunk_size": 0}, "chunk_size"), ({"chunk_size": "3"}, "chunk_size")):
        with pytest.raises(ConfigurationError, match=named):
            run_sessions([ReplayTask(fixture(REAL[0]))], progress=False, **bad)
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigurationError, match="run_dir must be a folder"):
        run_sessions([ReplayTask(fixture(REAL[0]))], run_dir=tmp_path / "afile", progress=False)


def test_relative_paths_mean_the_folder_the_run_was_made_in_and_main_in_a_rule_is_only_text(tmp_path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    policy = Policy(allow=("Read(**/__main__.py)",))  # the text __main__ in a rule refers to nothing of the script
    with iter_sessions([ReplayTask(name, policy) for name in REAL], workers=2, chunk_size=1, progress=False) as stream:
        monkeypatch.chdir(tmp_path)  # the consumer moves before the first session is sent
        got = sorted(stream, key=lambda r: r.index)
    assert [r.value.status for r in got] == [replay_session(fixture(n), policy).status for n in REAL]
    assert all(r.value.status != "unreadable" for r in got)


def test_a_ctrl_c_between_two_results_still_accounts_for_every_session(tmp_path, monkeypatch):
    """A KeyboardInterrupt that lands outside the run's own handler (writing a result to the
    run directory) still returns every session: finished, saved, or cancelled."""
    from nbtoolsched.scale import _results
    written = []
    real_write = _results.RunDirectory.write

    def write(self, result):
        real_write(self, result)
        written.append(result.index)
        if len(written) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(_results.RunDirectory, "write", write)
    tasks = [ReplayTask(fixture(name)) for name in REAL * 4]
    run = run_sessions(tasks, workers=1, chunk_size=1, run_dir=tmp_path / "run", progress=False)
    assert run.interrupted and run.cancelled
    assert sorted(r.index for r in run.results) == list(range(len(tasks)))
    assert {r.index for r in run.results if r.ok} == set(written)  # the third was saved before the interrupt
    assert all(r.status == "cancelled" for r in run.results if r.index not in written)


def test_a_policy_that_cannot_travel_to_the_workers_is_named_before_anything_runs(tmp_path):
    odd = Policy(name="odd", settings=(SettingsSource("userSettings", "odd.json", {"env": {"X": threading.Lock()}}),))
    tasks = [ReplayTask(fixture(REAL[0])), ReplayTask(fixture(REAL[1]), odd)]
    with pytest.raises(ConfigurationError, match=r"the policy of task 1 \(hand_broken\.jsonl\) cannot be pickled.*lock"):
        run_sessions(tasks, workers=2, progress=False)
    assert run_sessions(tasks[:1], workers=1, progress=False).results[0].ok  # one thread: nothing travels


def test_a_session_past_its_timeout_or_one_that_blows_up_is_reported_and_the_others_go_on(tmp_path):
    fifo = tmp_path / "stuck.jsonl"
    os.mkfifo(fifo)  # read forever, were it read
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 200_000 + "\n")
    sleepy = sleeper_task(tmp_path, 0)
    tasks = [ReplayTask(str(fifo)), ReplayTask(str(deep)), ReplayTask(fixture(REAL[0])), sleepy, work_task(tmp_path, 1)]
    started = time.monotonic()
    run = run_sessions(tasks, workers=1, timeout=2, progress=False)
    assert time.monotonic() - started < 30
    fifo_r, deep_r, fine, slept, worked = run.results
    assert fifo_r.ok and fifo_r.value.status == "unreadable" and "a FIFO" in fifo_r.value.problems[0]
    assert deep_r.status in ("ok", "failed")  # the replay's business; either way reported, never raised
    assert fine.ok and worked.ok
    assert slept.status == "failed" and slept.error.startswith("timed out after 2 s")
    shell = pids_of(tmp_path)[0]
    assert not alive(shell)  # the timed-out session's shell was stopped


def test_a_session_that_never_awaits_is_stopped_by_the_alarm_on_a_workers_main_thread(monkeypatch):
    real = _work.areplay_session

    async def stuck(path, *args, **kwargs):
        if path.endswith(REAL[0]):
            time.sleep(30)  # blocks the loop: only a signal gets it out
        return await real(path, *args, **kwargs)

    monkeypatch.setattr(_work, "areplay_session", stuck)
    started = time.monotonic()
    first, second = run_chunk([(0, ReplayTask(fixture(REAL[0]))), (1, ReplayTask(fixture(REAL[1])))], timeout=0.5, alarm=True)
    assert time.monotonic() - started < 10
    assert first.status == "failed" and first.error.startswith("timed out after 0.5 s")
    assert second.ok and second.value.status in ("ok", "partial")


def test_results_stream_into_a_run_directory_and_a_second_run_resumes(tmp_path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    tasks = [ReplayTask(name) for name in REAL * 4]
    straight = run_sessions(tasks, workers=1, chunk_size=2, progress=False)
    run_dir = tmp_path / "run"
    with iter_sessions(tasks, workers=1, chunk_size=2, run_dir=run_dir, progress=False) as stream:
        first = [next(stream) for _ in range(5)]
    assert stream.cancelled and len(first) == 5
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert 5 <= len(lines) < len(tasks)  # written as they came; the chunk in flight when it stopped may be there too
    with open(run_dir / "results.jsonl", "a") as out:
        out.write('{"index": 19, "name": "cut sh')  # a write cut short by the interruption
    again = run_sessions(tasks, workers=1, chunk_size=2, run_dir=run_dir, progress=False)
    assert again.resumed == len(lines) and not again.cancelled
    assert [r.value for r in again.results] == [r.value for r in straight.results]
    assert (again.summary.sessions, again.summary.calls, again.summary.outcomes) == \
        (straight.summary.sessions, straight.summary.calls, straight.summary.outcomes)
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == len(tasks)
    import pyarrow.parquet  # the dev extra's ray[data] brings it: the finished run is also a Parquet table
    table = pyarrow.parquet.read_table(run_dir / "results.parquet").to_pylist()
    assert [row["index"] for row in sorted(table, key=lambda row: row["index"])] == list(range(len(tasks)))
    assert sum(row["calls"] for row in table) == straight.summary.calls
    done = run_sessions(tasks, workers=1, run_dir=run_dir, keep_results=False, progress=False)
    assert done.resumed == len(tasks) and done.results == [] and done.summary.calls == straight.summary.calls
    with pytest.raises(ConfigurationError, match="holds a run of 20 sessions, not 5"):
        run_sessions(tasks[:5], workers=1, run_dir=run_dir, progress=False)


def test_the_summary_is_the_sum_of_the_results_and_does_not_grow_with_them():
    tasks = [ReplayTask(fixture(name), Policy(deny=("Bash(rm:*)",))) for name in REAL * 2]
    run = run_sessions(tasks, workers=1, progress=False)
    summed = RunSummary()
    for result in run.results:
        summed.add(result)
    assert summed.calls == run.summary.calls == sum(len(r.value.calls) for r in run.results)
    assert summed.outcomes == run.summary.outcomes and summed.tools == run.summary.tools
    size = len(pickle.dumps(run.summary))
    for result in run.results * 20:
        summed.add(result)
    assert summed.sessions == 21 * len(tasks)
    assert len(pickle.dumps(summed)) < size * 1.2  # counts grow, not lists


def test_cancelling_stops_running_sessions_and_their_processes(tmp_path):
    cancel = threading.Event()
    tasks = [sleeper_task(tmp_path, n) for n in range(2)] + [work_task(tmp_path, 9)]

    def stop_when_sleeping() -> None:
        wait_until(lambda: len(pids_of(tmp_path)) >= 4)
        cancel.set()

    threading.Thread(target=stop_when_sleeping, daemon=True).start()
    run = run_sessions(tasks, workers=2, cancel=cancel, progress=False)
    assert run.cancelled and not run.interrupted
    assert [r.status for r in run.results[:2]] == ["cancelled", "cancelled"]
    assert run.results[2].status in ("ok", "cancelled")  # it may have finished before the cancel
    shells = pids_of(tmp_path)[0::2]
    assert shells and not any(alive(pid) for pid in shells)


def test_a_ctrl_c_returns_what_finished_with_the_shells_stopped(tmp_path):
    tasks = [sleeper_task(tmp_path, 0), work_task(tmp_path, 1)]

    def interrupt_when_sleeping() -> None:
        wait_until(lambda: len(pids_of(tmp_path)) >= 2 and (tmp_path / "s1" / "notes.txt").exists())
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt_when_sleeping, daemon=True).start()
    run = run_sessions(tasks, workers=2, progress=False)  # returns: no KeyboardInterrupt to catch
    assert run.cancelled and run.interrupted
    assert run.results[0].status == "cancelled"
    assert run.results[1].status in ("ok", "cancelled")
    assert not alive(pids_of(tmp_path)[0])  # stopped before run_sessions returned


async def test_cancelling_arun_sessions_accounts_for_every_session(tmp_path):
    task = asyncio.ensure_future(arun_sessions([sleeper_task(tmp_path, 0)], progress=False))
    for _ in range(600):
        if pids_of(tmp_path):
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    shell = pids_of(tmp_path)[0]
    assert not alive(shell)


def test_agent_tasks_take_relative_workdirs_as_this_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = dataclasses.replace(work_task(tmp_path, 0), workdir="rel/s0")
    run = run_sessions([task], progress=False)
    assert run.results[0].value.workdir == str(tmp_path / "rel" / "s0")
    assert isinstance(task, AgentTask) and (tmp_path / "rel" / "s0" / "notes.txt").exists()
