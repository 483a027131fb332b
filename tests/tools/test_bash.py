"""Bash with real subprocesses: exit status, streaming, timeouts, aborts, sibling cancellation."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.permissions._approvals import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from nbtoolsched.permissions._base import PermissionRequest
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.speculation import Overlay
from nbtoolsched.speculation._gate import SpeculationGate
from nbtoolsched._tool._abort import INTERRUPT, USER_ABORT, AbortSignal
from nbtoolsched._tool._context import ToolContext
from nbtoolsched.tools import _bash as bash_module
from nbtoolsched.tools import _bash_processes as bash_processes
from nbtoolsched.tools._bash import BashInput, BashResult, BashTool, command_env, to_output
from nbtoolsched.tools._bash_output import ProgressThrottle, StreamCapture
from nbtoolsched.tools._sleep import SleepTool

from tests.processes import sleeping


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool's own process tracking (marker, process group, pidfds): the path every
    command takes where the OS sandbox cannot start. Inside the sandbox its PID namespace
    does that job: tests/sandbox."""
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")

REAP_PATIENCE = 15.0  # how long a killed process may take to die on a busy machine


def use(command: str, id: str = "b1", **extra: object) -> dict:
    return {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command, **extra}}


@pytest.fixture
def sched(tmp_path: Path) -> nts.Scheduler:
    return nts.Scheduler(ToolRegistry([BashTool(), SleepTool()]), cwd=tmp_path, session_dir=tmp_path / "session")


def live_members(pgid: int) -> list[int]:
    """Processes of the group that are still running (zombies waiting for a reaper do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry))
    return found


async def assert_group_gone(pgid: int) -> None:
    """Nothing of the group runs any more. Its zombies do not count: they are orphans that
    init reaps in its own time (here seconds at a time), which says nothing about our code."""
    deadline = time.monotonic() + REAP_PATIENCE
    while live_members(pgid):
        assert time.monotonic() < deadline, f"processes of group {pgid} are still running: {live_members(pgid)}"
        await asyncio.sleep(0.05)


async def find_pgid(marker: str, patience: float = 10.0) -> int:
    """The process group of the process whose command line contains ``marker``."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                if marker in cmdline and "bash" not in cmdline.split()[0]:
                    return os.getpgid(int(entry))
        await asyncio.sleep(0.02)
    raise AssertionError(f"no process with {marker!r} appeared")


# -- results ------------------------------------------------------------------------------


async def test_success_returns_stdout_and_stderr(sched: nts.Scheduler) -> None:
    [result] = await sched.run([use("echo hello; echo warn >&2")])
    assert not result.is_error
    assert result.text == "hello\nwarn"


async def test_failure_is_an_error_with_exit_code_stderr_and_stdout(sched: nts.Scheduler) -> None:
    [result] = await sched.run([use("echo out; echo boom >&2; exit 3")])
    assert result.is_error
    assert result.text.splitlines() == ["Exit code 3", "boom", "out"]


async def test_benign_exit_is_not_an_error(sched: nts.Scheduler, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("something\n")
    [result] = await sched.run([use("grep nothing file")])
    assert not result.is_error
    assert "exit code 1" in result.text


async def test_empty_output_gets_a_marker(sched: nts.Scheduler) -> None:
    [result] = await sched.run([use("true")])
    assert result.text == "(Bash completed with no output)"


async def test_runs_in_the_context_cwd(sched: nts.Scheduler, tmp_path: Path) -> None:
    [result] = await sched.run([use("pwd")])
    assert result.text == str(tmp_path.resolve())


async def test_large_output_is_persisted_with_a_preview(sched: nts.Scheduler, tmp_path: Path) -> None:
    [result] = await sched.run([use("seq 1 20000")])
    assert "<persisted-output>" in result.text
    saved = next((tmp_path / "session" / "tool-results").iterdir())
    assert saved.read_text().splitlines()[-1] == "20000"


@pytest.mark.parametrize(
    "extra, needle",
    [
        ({"run_in_background": True}, "run_in_background is not supported"),
        ({"timeout": 600_001}, "timeout"),
        ({"timeout": 0}, "timeout"),
    ],
)
async def test_bad_inputs_are_refused_clearly(sched: nts.Scheduler, extra: dict, needle: str) -> None:
    [result] = await sched.run([use("echo hi", **extra)])
    assert result.is_error and needle in result.text


async def test_blank_command_is_refused(sched: nts.Scheduler) -> None:
    [result] = await sched.run([use("   ")])
    assert result.is_error and "command is empty" in result.text


# -- read-only analysis --------------------------------------------------------------------


async def test_read_only_commands_are_safe_and_allowed(tmp_path: Path) -> None:
    tool, ctx = BashTool(), ToolContext(tmp_path)
    safe, unsafe = BashInput(command="git status"), BashInput(command="rm -rf build")
    assert tool.is_concurrency_safe(safe) and tool.is_read_only_in(safe, ctx.cwd)
    assert not tool.is_read_only(safe)  # git obeys its repository's config: where does it run?
    assert tool.is_read_only(BashInput(command="ls -la"))
    assert not tool.is_concurrency_safe(unsafe) and not tool.is_read_only_in(unsafe, ctx.cwd)
    allowed = await tool.check_permissions(safe, ctx)
    assert allowed.behavior == "allow" and allowed.reason is not None and allowed.reason.kind == "tool"
    assert (await tool.check_permissions(unsafe, ctx)).behavior == "passthrough"


def test_analysis_failure_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(command: str, cwd: str | None = None) -> None:
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(bash_module, "analyze", broken)
    assert not BashTool().is_concurrency_safe(BashInput(command="ls"))
    assert not BashTool().is_read_only_in(BashInput(command="ls"), ".")


def test_read_only_git_runs_without_optional_locks() -> None:
    assert command_env(read_only=True)["GIT_OPTIONAL_LOCKS"] == "0"
    assert "GIT_OPTIONAL_LOCKS" not in command_env(read_only=False) or os.environ.get("GIT_OPTIONAL_LOCKS")


async def test_two_concurrent_git_status_both_succeed(sched: nts.Scheduler, tmp_path: Path) -> None:
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text(f"{i}\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (tmp_path / "f1.txt").write_text("changed\n")  # status must look at the index
    results = await sched.run([use("git status --short", "g1"), use("git status --short", "g2")])
    assert [bool(r.is_error) for r in results] == [False, False]
    assert results[0].text == results[1].text and "f1.txt" in results[0].text
    spans = {s.tool_use_id: s for s in sched.last_trace.states()}
    assert spans["g1"].batch == spans["g2"].batch  # one parallel batch
    assert max(s.started_at for s in spans.values()) < min(s.finished_at for s in spans.values())


# -- streaming ---------------------------------------------------------------------------------


async def test_progress_arrives_while_the_command_still_runs(sched: nts.Scheduler, tmp_path: Path) -> None:
    # The command waits for a file that the test creates only after seeing the first line:
    # if lines were not streamed before the end, this would never finish.
    marker = tmp_path / "go"
    command = f"echo first; while [ ! -e {marker} ]; do sleep 0.05; done; echo second >&2"
    seen = []
    async for event in sched.stream([use(command, timeout=30_000)]):
        seen.append(event)
        if event.kind == "progress_event" and event.data == {"stream": "stdout", "line": "first"}:
            marker.touch()
    kinds = [e.kind for e in seen]
    assert kinds[-1] == "result_event" and not seen[-1].result.is_error
    assert {"stream": "stderr", "line": "second"} in [e.data for e in seen if e.kind == "progress_event"]


# -- stopping: timeout, abort, cancellation ---------------------------------------------------------


async def test_timeout_kills_the_whole_group_quickly(sched: nts.Scheduler) -> None:
    started = time.monotonic()
    events = [e async for e in sched.stream([use("echo $$; sleep 30 & sleep 30", timeout=500)])]
    elapsed = time.monotonic() - started
    pgid = int(next(e.data["line"] for e in events if e.kind == "progress_event"))
    result = events[-1].result
    assert result.is_error and "timed out" in result.text
    assert elapsed < 10, "a 0.5 s timeout must not wait for sleep 30"
    await assert_group_gone(pgid)


def _unique_sleep() -> str:
    """A sleep of 30-odd seconds whose command line is this test's alone."""
    return f"sleep 30.{os.getpid()}{random.SystemRandom().randrange(10**6):06d}"


async def test_abort_through_the_scheduler_kills_grandchildren(sched: nts.Scheduler) -> None:
    abort = AbortSignal()
    nap = _unique_sleep()  # no other test's process, on a busy machine, has this command line
    command = f"echo $$; bash -c '{nap} & {nap}'"
    task = asyncio.ensure_future(sched.run_outcomes([use(command)], abort=abort))
    pgid = await find_pgid(nap)
    abort.abort(USER_ABORT)
    result = await asyncio.wait_for(task, 10)
    [outcome] = result.outcomes
    assert outcome.status == "cancelled" and outcome.is_error
    assert "interrupted" in outcome.result.text
    await assert_group_gone(pgid)


async def test_abort_through_the_streaming_executor_kills_the_group(sched: nts.Scheduler) -> None:
    abort = AbortSignal()
    async with sched.streaming_executor(abort=abort) as ex:
        nap = _unique_sleep()
        ex.add_tool(use(f"echo $$; bash -c '{nap} & {nap}'"))
        pgid = None
        outcomes = []
        async for update in ex.get_remaining_results():
            if isinstance(update, nts.events.ProgressEvent) and pgid is None:
                pgid = int(update.data["line"])
                await find_pgid(nap)
                abort.abort(USER_ABORT)
            elif isinstance(update, nts.events.ResultEvent):
                outcomes.append(update)
    assert pgid is not None
    assert [o.status for o in outcomes] == ["cancelled"]
    await assert_group_gone(pgid)


async def test_cancelling_the_call_kills_the_group(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    task = asyncio.ensure_future(BashTool().call(BashInput(command="sleep 31.5 & sleep 31.5"), ctx))
    pgid = await find_pgid("sleep 31.5")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    await assert_group_gone(pgid)


@pytest.mark.heavy  # lets a blocking bash finish its one-second sleep
async def test_interrupt_stops_sleep_but_not_a_blocking_bash(sched: nts.Scheduler) -> None:
    abort = AbortSignal()
    async with sched.streaming_executor(abort=abort) as ex:
        ex.add_tool({"type": "tool_use", "id": "s", "name": "Sleep", "input": {"seconds": 30}})
        ex.add_tool(use("sleep 1; echo done", "b"))  # read-only: runs beside Sleep; "block" on interrupt
        await asyncio.sleep(0.2)
        assert not ex.interruptible  # Bash would block a new message
        abort.abort(INTERRUPT)
        outcomes = {u.tool_use_id: u for u in [u async for u in ex.get_remaining_results()] if isinstance(u, nts.events.ResultEvent)}
    assert outcomes["s"].status == "cancelled"
    assert outcomes["b"].status == "completed" and outcomes["b"].result.text == "done"


# -- sibling cancellation in the streaming executor ----------------------------------------------


async def test_a_failing_command_cancels_its_running_siblings(sched: nts.Scheduler) -> None:
    async with sched.streaming_executor() as ex:
        started = time.monotonic()
        ex.add_tool(use("sleep 32.5; echo x", "slow"))
        pgid = await find_pgid("sleep 32.5")
        ex.add_tool(use("false", "bad"))
        outcomes = {u.tool_use_id: u for u in [u async for u in ex.get_remaining_results()] if isinstance(u, nts.events.ResultEvent)}
    assert time.monotonic() - started < 20
    assert outcomes["bad"].status == "error" and "Exit code 1" in outcomes["bad"].result.text
    slow = outcomes["slow"]
    assert slow.status == "cancelled" and "Bash(false)" in slow.result.text
    assert "did not interrupt" in slow.result.text
    await assert_group_gone(pgid)


async def test_a_benign_exit_does_not_cancel_siblings(sched: nts.Scheduler, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("hay\n")
    async with sched.streaming_executor() as ex:
        ex.add_tool(use("sleep 0.5; echo x", "slow"))
        ex.add_tool(use("grep nothing file", "grep"))
        outcomes = {u.tool_use_id: u for u in [u async for u in ex.get_remaining_results()] if isinstance(u, nts.events.ResultEvent)}
    assert outcomes["grep"].status == "completed" and not outcomes["grep"].is_error
    assert outcomes["slow"].status == "completed" and outcomes["slow"].result.text == "x"


# -- output: linear, bounded, throttled ------------------------------------------------------------


class Progress:
    """A listener that counts a call's progress and keeps the last few events."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.count = 0

    def __call__(self, event: Any) -> None:
        if event.kind == "progress_event":
            self.count += 1
            self.events.append(event.data)
            del self.events[:-5]


async def test_a_few_lines_stream_one_event_each(sched: nts.Scheduler) -> None:
    seen = Progress()
    sched.events.subscribe(seen)
    [result] = await sched.run([use("printf 'a\\nb\\nc'")])
    assert result.text == "a\nb\nc"
    assert seen.events == [{"stream": "stdout", "line": line} for line in "abc"]


async def test_a_flood_of_lines_is_folded_into_few_progress_events(sched: nts.Scheduler) -> None:
    seen = Progress()
    sched.events.subscribe(seen)
    await sched.run([use("seq 1 200000")])
    # Bounded by time (20 lines per 50 ms, plus one folded event), not by lines: 2 million
    # lines cost the same. 20,000 leaves room for a machine 50 times slower than ours.
    assert seen.count < 20_000
    assert seen.events[-1] == {"stream": "stdout", "line": "200000", "lines": seen.events[-1].get("lines", 1)}


async def test_memory_stays_flat_in_the_number_of_lines_with_the_trace_on(sched: nts.Scheduler) -> None:
    peaks = {}
    for lines in (50_000, 400_000):
        tracemalloc.start()
        try:
            [result] = await sched.run([use(f"seq 1 {lines}")])
            peaks[lines] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert not result.is_error
        assert sched.last_trace is not None and len(sched.last_trace) < 120
    assert peaks[400_000] < 16_000_000, peaks  # was about 240 MB: a trace event per line, each line kept
    assert peaks[400_000] < 3 * peaks[50_000] + 4_000_000, peaks


async def test_a_huge_output_is_saved_whole_and_shown_as_head_and_tail(sched: nts.Scheduler, tmp_path: Path) -> None:
    [result] = await sched.run([use("seq 1 300000")])
    text = result.text
    assert "<persisted-output>" not in text and len(text) < 30_000  # shown inline, not persisted again
    assert text.startswith("(stdout was 1,988,895 bytes") and "\n1\n2\n3\n" in text and text.endswith("\n299999\n300000")
    assert "bytes of stdout cut here; all of it is saved in" in text
    [saved] = (tmp_path / "session" / "tool-results").glob("bash-*-stdout.txt")
    assert str(saved) in text
    assert saved.read_text().splitlines() == [str(i) for i in range(1, 300_001)]


async def test_a_32_mb_line_keeps_its_head_and_tail_in_little_memory(tmp_path: Path) -> None:
    events: list[dict] = []
    ctx = ToolContext(tmp_path, session_dir=tmp_path / "session", progress=lambda _id, data: events.append(data))
    command = "head -c 33554432 /dev/zero | tr '\\0' a; echo; echo end"
    tracemalloc.start()
    try:
        output = await BashTool().call(BashInput(command=command), ctx)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000, peak  # was 64 MB and more: the pending line was copied for every chunk
    stdout = output.data.stdout
    head, cut, tail = stdout.partition(" bytes of stdout cut here")
    assert head.startswith("a" * 6000) and cut and tail.endswith("a" * 4000 + "\nend\n")
    [long_line] = [e["line"] for e in events if len(e["line"]) > 100]
    assert long_line.startswith("a" * 5000) and long_line.endswith("a" * 5000) and "33,544,432 bytes cut" in long_line
    assert {"stream": "stdout", "line": "end"} in events


# -- nothing outlives its call ------------------------------------------------------------------


@pytest.fixture
def sleeper() -> Iterator[Callable[[], str]]:
    """Unique ``sleep`` durations; whatever of them still runs after the test is killed by pid."""
    tags: list[str] = []

    def make() -> str:
        tags.append(f"{1000 + len(tags)}.{random.randrange(10**8):08d}")
        return tags[-1]

    yield make
    for tag in tags:
        for pid in sleeping(tag):
            os.kill(pid, signal.SIGKILL)


async def wait_sleeping(tag: str, patience: float = 10.0) -> None:
    deadline = time.monotonic() + patience
    while not sleeping(tag):
        assert time.monotonic() < deadline, f"sleep {tag} never started"
        await asyncio.sleep(0.02)


LEFT_RUNNING = {
    "background": "sleep {t} >/dev/null 2>&1 &",
    "nohup": "nohup sleep {t} >/dev/null 2>&1 &",
    "double fork": "( ( sleep {t} >/dev/null 2>&1 & ) & )",
    "setsid": "setsid sleep {t} >/dev/null 2>&1 &",
    "setsid holding the pipes": "setsid sleep {t} &",
}


@pytest.mark.heavy  # waits out a grace period, for each shape
@pytest.mark.parametrize("shape", list(LEFT_RUNNING))
async def test_what_a_command_leaves_running_is_stopped_and_named(sched: nts.Scheduler, sleeper: Callable[[], str], shape: str) -> None:
    tag = sleeper()
    # The command waits until its sleep really runs (not a shell still forking), so what
    # is left running when it exits is the same every time.
    settle = f"\nuntil pgrep -f '^sleep {tag}$' >/dev/null; do sleep 0.01; done"
    [result] = await sched.run([use("echo started; " + LEFT_RUNNING[shape].format(t=tag) + settle)])
    assert sleeping(tag) == []
    assert not result.is_error and result.text.startswith("started")
    assert "1 process the command started was still running and stopped when the command finished: sleep (pid " in result.text
    assert ("had left the command's process group" in result.text) == shape.startswith("setsid")


@pytest.mark.heavy  # waits for a timeout, then the grace period
async def test_a_timeout_stops_what_left_the_group(sched: nts.Scheduler, sleeper: Callable[[], str]) -> None:
    tag = sleeper()
    [result] = await sched.run([use(f"setsid sleep {tag} & wait", timeout=1000)])
    assert result.is_error and "timed out and was killed (with everything it started)" in result.text
    assert sleeping(tag) == []


async def test_an_abort_stops_what_left_the_group(sched: nts.Scheduler, sleeper: Callable[[], str]) -> None:
    tag = sleeper()
    abort = AbortSignal()
    task = asyncio.ensure_future(sched.run_outcomes([use(f"setsid sleep {tag} & wait")], abort=abort))
    await wait_sleeping(tag)
    abort.abort(USER_ABORT)
    [outcome] = (await asyncio.wait_for(task, 10)).outcomes
    assert outcome.status == "cancelled"
    assert sleeping(tag) == []


async def test_a_cancel_stops_what_left_the_group(tmp_path: Path, sleeper: Callable[[], str]) -> None:
    tag = sleeper()
    task = asyncio.ensure_future(BashTool().call(BashInput(command=f"setsid sleep {tag} & wait"), ToolContext(tmp_path)))
    await wait_sleeping(tag)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert sleeping(tag) == []


@pytest.mark.heavy  # waits for a timeout, then the grace period
async def test_what_could_not_be_stopped_is_said(sched: nts.Scheduler, sleeper: Callable[[], str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A process we may not signal (another user's, say), played by one whose signals are lost.
    monkeypatch.setattr(bash_processes._Target, "signal", lambda self, sig: None)
    tag = sleeper()
    [result] = await sched.run([use(f"setsid sleep {tag} >/dev/null 2>&1 & sleep 5", timeout=500)])
    assert len(sleeping(tag)) == 1
    assert "timed out and was killed (but not everything it started could be stopped)" in result.text
    assert "1 process it started could not be stopped and may still be running: sleep (pid " in result.text


@pytest.mark.heavy  # waits out a grace period
async def test_without_proc_the_group_is_still_stopped(sched: nts.Scheduler, sleeper: Callable[[], str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bash_processes, "PROC_ROOT", tmp_path / "no-proc")
    tag = sleeper()
    [result] = await sched.run([use(f"sleep {tag} >/dev/null 2>&1 &")])
    assert sleeping(tag) == []
    assert "left in its process group were stopped when the command finished" in result.text
    assert "processes that left the group cannot be found" in result.text


# -- invariants ----------------------------------------------------------------------------------


class _FakeReader:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def read(self, n: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


def _expected_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") or not text else lines


def check_progress(events: list[dict], expected: list[str]) -> None:
    """Folded events carry the latest line and how many lines they stand for: together, every line once."""
    seen = 0
    for event in events:
        seen += event.get("lines", 1)
        assert event["line"] == expected[seen - 1]
    assert seen == len(expected)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_capture_is_independent_of_chunking(data: bytes, cuts: list[int]) -> None:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)]) if data[a:b]]
    events: list[dict] = []

    async def go() -> StreamCapture:
        capture = StreamCapture("stdout", ProgressThrottle(events.append, burst=3))
        await capture.pump(_FakeReader(chunks))  # type: ignore[arg-type]
        capture.throttle.flush()  # type: ignore[union-attr]
        return capture

    capture = asyncio.run(go())
    expected = "\n".join(part.decode("utf-8", errors="replace") for part in data.split(b"\n"))
    assert capture.text() == expected
    check_progress(events, _expected_lines(expected))


@given(st.integers(min_value=-64, max_value=255), st.booleans(), st.booleans(), st.text(max_size=30), st.text(max_size=30))
def test_error_iff_real_failure(code: int, benign: bool, timed_out: bool, out: str, err: str) -> None:
    output = to_output(BashResult("cmd", out, err, code, timed_out), benign=benign)
    failed = timed_out or (code != 0 and (code < 0 or not benign))
    assert output.is_error == failed
    assert output.exit_code == code
    if code > 0 and not timed_out:
        assert f"xit code {code}" in output.content


async def test_cancel_while_the_shell_is_starting_still_kills_the_group(tmp_path) -> None:
    """A cancel that lands during process start-up must not leave a background child holding the pipes."""
    import subprocess
    import time as _time

    from nbtoolsched.tools._bash import run_command

    marker = "117.4321"
    task = asyncio.ensure_future(run_command(f"sleep {marker} & sleep {marker}", cwd=str(tmp_path), timeout=60))
    await asyncio.sleep(0)  # the task is now inside the start of the subprocess
    task.cancel()
    started = _time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 20)
    assert _time.monotonic() - started < 15
    deadline = _time.monotonic() + 15
    while _time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
        if not alive:
            break
        await asyncio.sleep(0.2)
    assert not alive


# -- read-only means no approval: it must really be read-only ------------------------------


def guarded(cwd: Path, session: Path) -> tuple[nts.Scheduler, list[str]]:
    """Default mode, the real Bash tool, and an approver that refuses (and records) every ask."""
    asked: list[str] = []

    async def refuse(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.input["command"])
        return ApprovalAnswer.deny()

    permissions = nts.Permissions(mode="default", cwd=cwd, approver=refuse)
    registry = ToolRegistry([BashTool()])
    return nts.Scheduler(registry, permissions=permissions, cwd=cwd, session_dir=session), asked


@pytest.mark.parametrize("command", [
    "cat <<EOF\n $(touch PWNED)\nEOF",
    "grep x <<EOF\n\t`touch PWNED`\nEOF",
    "cat <<-EOF\n\t$(touch PWNED)\n\tEOF",
])
async def test_an_indented_heredoc_substitution_needs_approval(tmp_path: Path, command: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    sched, asked = guarded(work, tmp_path / "session")
    [result] = await sched.run([use(command)])
    assert asked == [command] and result.is_error
    assert not (work / "PWNED").exists()


async def test_a_plain_heredoc_still_runs_without_asking(tmp_path: Path) -> None:
    sched, asked = guarded(tmp_path, tmp_path / "session")
    [result] = await sched.run([use("cat <<EOF\n  indented text\nEOF")])
    assert asked == [] and not result.is_error and result.text == "  indented text"


# -- git: read-only only where the repository's config cannot run programs -----------------

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def repository(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    for text in ("one\n", "two\n"):
        (src / "f.txt").write_text(text)
        git(src, "add", ".")
        git(src, "commit", "-qm", f"write {text.strip()}")
    return src


def hostile(tmp_path: Path, *, bare: bool) -> tuple[Path, Path]:
    """A repository whose diff driver runs a program on `git show` and `git log -p`."""
    src = repository(tmp_path)
    cwd, git_dir = src, src / ".git"
    if bare:
        cwd = git_dir = tmp_path / "clone.git"
        git(tmp_path, "clone", "-q", "--bare", str(src), str(cwd))
    marker = tmp_path / "PWNED"
    git(cwd, "config", "diff.evil.textconv", f"sh -c 'touch {marker}; cat \"$1\"' -")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("* diff=evil\n")
    subprocess.run(["git", "show"], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)
    assert marker.exists(), "the attack must be real: git itself runs the program"
    marker.unlink()
    return cwd, marker


@pytest.mark.parametrize("bare", [True, False], ids=["bare", "non-bare"])
@pytest.mark.parametrize("command", ["git show", "git log -p -1", "git show && ls"])
async def test_git_in_a_hostile_repository_needs_approval(tmp_path: Path, bare: bool, command: str) -> None:
    cwd, marker = hostile(tmp_path, bare=bare)
    sched, asked = guarded(cwd, tmp_path / "session")
    [result] = await sched.run([use(command)])
    assert asked == [command] and result.is_error
    assert not marker.exists()


async def test_fsmonitor_in_the_config_needs_approval(tmp_path: Path) -> None:
    src = repository(tmp_path)
    marker = tmp_path / "PWNED"
    git(src, "config", "core.fsmonitor", f"sh -c 'touch {marker}'")
    sched, asked = guarded(src, tmp_path / "session")
    [result] = await sched.run([use("git status --short")])
    assert asked == ["git status --short"] and not marker.exists()


async def test_git_in_a_clean_repository_runs_without_asking(tmp_path: Path) -> None:
    src = repository(tmp_path)
    sched, asked = guarded(src, tmp_path / "session")
    [result] = await sched.run([use("git log --oneline")])
    assert asked == [] and not result.is_error and "write two" in result.text


async def test_plan_mode_still_allows_read_only_git(tmp_path: Path) -> None:
    src = repository(tmp_path)
    permissions = nts.Permissions(mode="plan", cwd=src, approver=ApprovalBroker("deny"))
    sched = nts.Scheduler(ToolRegistry([BashTool()]), permissions=permissions, cwd=src, session_dir=tmp_path / "s")
    [result] = await sched.run([use("git log --oneline")])
    assert not result.is_error and "write two" in result.text


async def test_speculation_stops_at_git_in_a_hostile_repository(tmp_path: Path) -> None:
    async def decide(cwd: Path) -> bool:
        overlay = Overlay(cwd, tmp_path / f"overlay-{cwd.name}")
        gate = SpeculationGate(overlay, AbortSignal())
        try:
            data = {"command": "git show"}
            request = PermissionRequest(BashTool(), data, BashInput(**data), ToolContext(cwd), "toolu_x", None)
            return (await gate.decide(request)).allowed
        finally:
            overlay.discard()

    (tmp_path / "h").mkdir()
    (tmp_path / "c").mkdir()
    cwd, _ = hostile(tmp_path / "h", bare=False)
    assert not await decide(cwd)
    assert await decide(repository(tmp_path / "c"))


def stale(tmp_path: Path) -> Path:
    """A repository whose index has old stat data for an unchanged file."""
    src = repository(tmp_path)
    past = time.time() - 1000
    os.utime(src / "f.txt", (past, past))
    probe = tmp_path / "probe"
    shutil.copytree(src, probe)
    before = (probe / ".git" / "index").read_bytes()
    subprocess.run(["git", "diff", "--stat"], cwd=probe, env={**GIT_ENV, "GIT_OPTIONAL_LOCKS": "0"}, check=True)
    assert (probe / ".git" / "index").read_bytes() != before, "plain git must rewrite this index"
    return src


@pytest.mark.parametrize("command", ["git diff --stat", "git describe --dirty --always", "git status --short && git diff"])
async def test_read_only_git_leaves_a_stale_index_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    src = stale(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    index = src / ".git" / "index"
    before, stamp = index.read_bytes(), index.stat().st_mtime_ns
    sched, asked = guarded(src, tmp_path / "session")
    [result] = await sched.run([use(command)])
    assert asked == [] and not result.is_error, result.text
    assert "-dirty" not in result.text and "f.txt" not in result.text  # same answers as before
    assert index.read_bytes() == before and index.stat().st_mtime_ns == stamp
    assert list(scratch.iterdir()) == []  # the private copy is gone


def test_private_index_only_for_read_only_git(tmp_path: Path) -> None:
    src = repository(tmp_path)
    with bash_module.private_git_index("git status", str(src), True) as index:
        assert index is not None and Path(index).read_bytes() == (src / ".git" / "index").read_bytes()
        assert command_env(read_only=True, git_index=index)["GIT_INDEX_FILE"] == index
    assert not Path(index).exists()
    for command, read_only in (("ls", True), ("git status", False)):
        with bash_module.private_git_index(command, str(src), read_only) as index:
            assert index is None


async def test_read_only_git_writes_no_shared_index_even_when_the_user_config_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The repository's core.splitIndex is refused by the read-only check; the user's own
    # config is not checked, so read-only git runs with core.splitIndex=false on top.
    src = stale(tmp_path)
    user_config = tmp_path / "gitconfig"
    user_config.write_text("[core]\n\tsplitIndex = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    before = sorted(os.listdir(src / ".git"))
    sched, asked = guarded(src, tmp_path / "session")
    [result] = await sched.run([use("git diff --stat")])
    assert asked == [] and not result.is_error, result.text
    assert sorted(os.listdir(src / ".git")) == before


def test_command_env_forces_no_split_index_after_the_callers_own_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "me")
    env = command_env(read_only=True)
    assert env["GIT_CONFIG_COUNT"] == "2" and env["GIT_CONFIG_KEY_0"] == "user.name"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("core.splitIndex", "false")
    assert command_env(read_only=False).get("GIT_CONFIG_COUNT") == "1"


@pytest.mark.parametrize("kind", ["link", "fifo", "large"])
def test_the_private_index_copy_follows_no_link_and_stops_at_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str,
) -> None:
    # The read-only check refuses such an index; this is the copy's own guard, for an
    # index swapped in between the check and the run.
    src = repository(tmp_path)
    index = src / ".git" / "index"
    if kind == "link":
        index.unlink()
        os.symlink("/dev/zero", index)
    elif kind == "fifo":
        index.unlink()
        os.mkfifo(index)  # opening it for reading would wait for a writer forever
    else:
        monkeypatch.setattr(bash_module, "MAX_INDEX_BYTES", 100)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(bash_module.GitIndexError):
        with bash_module.private_git_index("git status", str(src), True):
            pass
    assert list(scratch.iterdir()) == []


def test_the_private_index_copy_keeps_the_mtime(tmp_path: Path) -> None:
    src = repository(tmp_path)
    stamp = (src / ".git" / "index").stat().st_mtime_ns
    with bash_module.private_git_index("git status", str(src), True) as index:
        assert index is not None and Path(index).stat().st_mtime_ns == stamp
