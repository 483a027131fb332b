"""Many sessions on the local engine: agents in one event loop, replays in a process pool.

Every session gets a result (ok, failed with its error, or cancelled), in task order;
one process and two give the same results; cancelling stops the tools of running
sessions (their shell processes are gone) and reports the rest as cancelled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import threading
import time

import pytest

from nbtoolsched.scale import Policy, ReplayTask, arun_sessions, replay_session, run_sessions

from .conftest import fixture
from .helpers import POLICY, alive, broken_task, pids_of, sleeper_task, work_task

REAL = ["hand_parallel.jsonl", "hand_broken.jsonl", "fasthooks_main.jsonl", "fasthooks_studio.jsonl", "fasthooks_sidechain.jsonl"]


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
def test_one_process_and_two_give_the_same_replays(tmp_path):
    tasks = [ReplayTask(fixture(name), Policy(allow=("Bash(ls:*)",))) for name in REAL * 3] + [ReplayTask(str(tmp_path / "nope.jsonl"))]
    one = run_sessions(tasks, workers=1, progress=False)
    two = run_sessions(tasks, workers=2, progress=False)
    assert [r.value for r in one.results] == [r.value for r in two.results]
    assert [r.index for r in two.results] == list(range(len(tasks)))
    assert len({r.worker for r in two.results}) == 2  # two processes did the work
    assert two.results[-1].value.status == "unreadable"


def test_cancelling_stops_running_sessions_and_their_processes(tmp_path):
    cancel = threading.Event()
    tasks = [sleeper_task(tmp_path, n) for n in range(2)] + [work_task(tmp_path, 9)]

    def stop_when_sleeping() -> None:
        deadline = time.monotonic() + 60
        while len(pids_of(tmp_path)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=stop_when_sleeping, daemon=True).start()
    run = run_sessions(tasks, workers=2, cancel=cancel, progress=False)
    assert run.cancelled
    assert [r.status for r in run.results[:2]] == ["cancelled", "cancelled"]
    assert run.results[2].status in ("ok", "cancelled")  # it may have finished before the cancel
    shells = pids_of(tmp_path)[0::2]
    assert shells and not any(alive(pid) for pid in shells)


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


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(TypeError, match="ReplayTask and AgentTask"):
        run_sessions(["a.jsonl"], progress=False)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="engine must be"):
        run_sessions([], engine="spark", progress=False)
