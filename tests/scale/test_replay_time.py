"""What a replay's times are made of, what it decides with, and where: a function of the
transcript and the policy.

* Durations exclude people: a call a person was (or may have been) asked about is an
  estimate, capped by its span, its timeout and the session's median; a question to the
  person takes no tool time; a rejected call has the median; tools that measure
  themselves are believed; the recorded permission mode says who would have been asked.
* "Saved by running in parallel" comes only from batches in which two or more calls run
  (a hypothesis property over random sessions and policies).
* Paths are judged as written against the session's cwd: a symlinked folder on the
  replaying machine changes no decision; hooks run in the session's folder when it is
  here, else in an empty temporary folder, and the problems say so.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nbtoolsched.scale import Policy, replay_session
from nbtoolsched.scale._replay import UNKNOWN_CWD, cpu_ms_per_session

from .conftest import fixture, write_settings

START = datetime(2026, 5, 1, 8, 0, tzinfo=timezone.utc)
CWD = "/home/dev/proj"


def _ts(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_session(path: Path, answers: Sequence[Sequence[tuple[Any, ...]]], *, cwd: str | None = CWD,
                  mode: str | None = None) -> Path:
    """Each answer: calls (name, input, seconds[, result fields]). The answer's tool_use entries
    are 0.1 s apart; each call's result comes ``seconds`` after the previous result of the answer
    (the first: after the answer's last tool_use), so with one call per batch a call's span is
    exactly its seconds. ``result fields`` go on the result entry (toolUseResult...), and a
    ``content``/``is_error`` key in them goes on the tool_result block. ``mode`` is written as
    Claude Code 2.1.20+ does: ``permissionMode`` on the user prompt."""
    lines: list[dict[str, Any]] = []
    clock = START
    n = 0

    def entry(kind: str, message: Any, **extra: Any) -> None:
        data = {"type": kind, "isSidechain": False, "sessionId": path.stem, "version": "2.1.30", "timestamp": _ts(clock),
                "message": message, **extra}
        if cwd is not None:
            data["cwd"] = cwd
        lines.append(data)

    entry("user", {"role": "user", "content": "go"}, **({"permissionMode": mode} if mode else {}))
    for a, calls in enumerate(answers):
        ids = []
        for name, data, *rest in calls:
            n += 1
            ids.append((f"c{n}", rest))
            clock += timedelta(milliseconds=100)
            entry("assistant", {"id": f"msg_{a}", "role": "assistant",
                                "content": [{"type": "tool_use", "id": f"c{n}", "name": name, "input": data}]})
        for tool_use_id, rest in ids:
            seconds = rest[0] if rest else 1.0
            fields = dict(rest[1]) if len(rest) > 1 else {}
            block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": fields.pop("content", "ok")}
            if fields.pop("is_error", False):
                block["is_error"] = True
            clock += timedelta(seconds=seconds)
            entry("user", {"role": "user", "content": [block]}, **fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def by_id(r) -> dict:
    return {c.tool_use_id: c for c in r.calls}


REJECTED = {"content": "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
                       "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
            "is_error": True, "toolUseResult": "User rejected tool use"}


# -- durations without people -------------------------------------------------------------------
def test_an_approval_wait_is_never_tool_time(tmp_path):
    # The 12.7 h: a `timeout 60` command approved the next morning. Nothing else in the
    # session was measured, so its timeout caps it: 60 s (the input's timeout, in ms), and a
    # command without one at Bash's two minutes.
    path = write_session(tmp_path / "s.jsonl", [[("Bash", {"command": "timeout 60 ./slow.sh", "timeout": 60000}, 12.7 * 3600)],
                                                [("Bash", {"command": "make deploy"}, 5 * 3600)]])
    r = replay_session(path)
    first, second = r.calls
    assert first.person == second.person == "maybe" and first.timing == second.timing == "estimated"
    assert round(first.recorded_s) == 45720 and first.duration == 60.0 and second.duration == 120.0
    assert r.serial_s == 180.0 and r.estimated_s == 180.0 and r.observed_s > 60000
    assert "its timeout" in first.timing_note


def test_an_estimate_takes_the_session_median_of_the_same_tool(tmp_path):
    path = write_session(tmp_path / "s.jsonl", [
        [("Bash", {"command": "ls"}, 0.2)], [("Bash", {"command": "cat README.md"}, 0.4)], [("Bash", {"command": "git status"}, 0.6)],
        [("Bash", {"command": "npm test"}, 300.0)],          # may have been asked: min(300, 120, median 0.4) = 0.4
        [("Bash", {"command": "npm run build"}, 0.1)],       # its span is smaller still: 0.1
        [("Write", {"file_path": f"{CWD}/a.txt", "content": "x"}, 30.0)],  # no measured Write: every call's median, 0.4
    ])
    r = replay_session(path)
    assert [c.person for c in r.calls] == ["none"] * 3 + ["maybe"] * 3
    assert [round(c.duration, 3) for c in r.calls] == [0.2, 0.4, 0.6, 0.4, 0.1, 0.4]
    assert [c.timing for c in r.calls] == ["measured"] * 3 + ["estimated"] * 3
    notes = [c.timing_note for c in r.calls[3:]]
    assert "median of the session's measured Bash calls" in notes[0] and "its span" in notes[1]
    assert "median of the session's measured calls" in notes[2]


def test_the_recorded_permission_mode_says_who_was_asked(tmp_path):
    answers = [[("Bash", {"command": "ls"}, 0.5)], [("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, 20.0)],
               [("Bash", {"command": "make"}, 40.0)]]
    default = replay_session(write_session(tmp_path / "d.jsonl", answers))
    edits = replay_session(write_session(tmp_path / "e.jsonl", answers, mode="acceptEdits"))
    bypass = replay_session(write_session(tmp_path / "b.jsonl", answers, mode="bypassPermissions"))
    assert [c.person for c in default.calls] == ["none", "maybe", "maybe"]
    assert [c.person for c in edits.calls] == ["none", "none", "maybe"]  # acceptEdits allowed the Edit unasked
    assert [c.person for c in bypass.calls] == ["none", "none", "none"]  # nobody was asked: every span is measured
    assert [c.duration for c in bypass.calls] == [0.5, 20.0, 40.0]
    # The policy replayed does not change what the file says happened.
    assert [c.person for c in replay_session(tmp_path / "d.jsonl", Policy(mode="bypassPermissions")).calls] == ["none", "maybe", "maybe"]


def test_rejected_edited_and_self_timed_calls(tmp_path):
    path = write_session(tmp_path / "s.jsonl", [
        [("Read", {"file_path": f"{CWD}/a.py"}, 0.3)], [("Read", {"file_path": f"{CWD}/b.py"}, 0.5)],
        [("Bash", {"command": "rm -rf dist"}, 25.0, REJECTED)],  # stopped: no Bash measured, so every call's median:
        # the Reads' 0.3 and 0.5 and the Glob's own 0.042 -> 0.3
        [("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, 9.0,
          {"toolUseResult": {"filePath": f"{CWD}/a.py", "userModified": True}})],   # the person changed it: asked
        [("Glob", {"pattern": "**/*.py"}, 3.0, {"toolUseResult": {"filenames": [], "durationMs": 42, "numFiles": 0}})],
        [("AskUserQuestion", {"questions": [{"question": "which?"}]}, 120.0)],
    ])
    r = by_id(replay_session(path))
    assert (r["c3"].person, r["c3"].timing, round(r["c3"].duration, 3)) == ("stopped", "estimated", 0.3)
    assert r["c4"].person == "asked" and r["c4"].timing == "estimated" and r["c4"].duration <= 9.0
    assert (r["c5"].timing, r["c5"].duration, r["c5"].recorded_s) == ("measured", 0.042, 3.0)  # the tool's own measure wins
    assert (r["c6"].person, r["c6"].duration, r["c6"].recorded_s) == ("asked", 0.0, 120.0)  # a question: only the person's time


def test_calls_start_when_their_answer_is_complete(tmp_path):
    # Three reads written 0.1 s apart, results 0.5 s after the last: the model writing the later
    # blocks is not the first read's tool time.
    path = write_session(tmp_path / "s.jsonl", [[("Read", {"file_path": f"{CWD}/{n}"}, 0.5 if n == 0 else 0.0) for n in range(3)]])
    r = replay_session(path)
    assert [round(c.recorded_s, 3) for c in r.calls] == [0.5, 0.5, 0.5] and r.parallel_batches == 1


# -- a function of the transcript and the policy --------------------------------------------------
def test_a_symlinked_folder_on_the_replaying_machine_changes_no_decision(tmp_path):
    # The session worked in <tmp>/proj; here proj/src is a symlink to a folder elsewhere (and
    # proj itself sits under a link). Resolved through this machine, the Edit under src/ would
    # leave the working directory (acceptEdits: prompt); judged as written it is inside (allow),
    # as it is on a machine where the folder is not there at all.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = tmp_path / "real"
    (real / "proj").mkdir(parents=True)
    (real / "proj" / "src").symlink_to(elsewhere)
    (tmp_path / "home").symlink_to(real)
    cwd = str(tmp_path / "home" / "proj")
    answers = [[("Edit", {"file_path": f"{cwd}/src/a.py", "old_string": "a", "new_string": "b"}, 0.2),
                ("Read", {"file_path": f"{cwd}/src/a.py"}, 0.1)],
               [("Bash", {"command": f"cat {cwd}/src/a.py"}, 0.1)], [("Bash", {"command": "cat src/a.py > src/b.py"}, 0.1)]]
    policy = Policy(mode="acceptEdits", deny=("Read(//etc/**)",))
    linked = replay_session(write_session(tmp_path / "linked.jsonl", answers, cwd=cwd), policy)
    for link in (real / "proj" / "src", tmp_path / "home"):
        link.unlink()
    gone = replay_session(write_session(tmp_path / "gone.jsonl", answers, cwd=cwd), policy)
    assert [c.outcome for c in linked.calls] == ["allow", "allow", "allow", "allow"]
    assert [(c.outcome, c.decided_by, c.person) for c in linked.calls] == [(c.outcome, c.decided_by, c.person) for c in gone.calls]
    assert linked.cwd == cwd


def test_a_session_without_a_cwd_is_judged_against_a_stand_in(tmp_path):
    r = replay_session(write_session(tmp_path / "s.jsonl", [[("Read", {"file_path": "notes.md"}, 0.1)]], cwd=None))
    assert r.status == "partial" and UNKNOWN_CWD in r.problems[0]
    assert r.calls[0].outcome == "allow"  # relative: inside the stand-in folder
    outside = replay_session(write_session(tmp_path / "o.jsonl", [[("Read", {"file_path": os.getcwd() + "/x"}, 0.1)]], cwd=None))
    assert outside.calls[0].outcome == "prompt"  # the replaying process's folder is nothing to the session


def test_hooks_run_in_the_sessions_folder_when_it_is_here_else_in_an_empty_one(tmp_path):
    marker = tmp_path / "where.txt"
    hook = tmp_path / "where.sh"
    hook.write_text(f"#!/bin/sh\npwd >> {marker}\nls -A >> {marker}\necho --- >> {marker}\nexit 0\n")
    hook.chmod(0o755)
    settings = write_settings(tmp_path / "p" / ".claude", {"hooks": {"PreToolUse": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": str(hook)}]}]}})
    policy = Policy.from_settings(settings)
    here = tmp_path / "proj"
    here.mkdir()
    (here / "file.txt").write_text("x")
    mine = replay_session(write_session(tmp_path / "a.jsonl", [[("Read", {"file_path": f"{here}/file.txt"}, 0.1)]], cwd=str(here)), policy)
    assert mine.status == "ok" and mine.problems == []
    away = replay_session(write_session(tmp_path / "b.jsonl", [[("Read", {"file_path": "/nowhere/x"}, 0.1)]], cwd="/nowhere"), policy)
    assert any("hooks ran in an empty temporary folder" in p for p in away.problems)
    runs = marker.read_text().split("---\n")
    assert runs[0].splitlines() == [str(here), "file.txt"]
    neutral = runs[1].splitlines()
    assert neutral[0] not in (os.getcwd(), str(tmp_path)) and len(neutral) == 1  # an empty folder of its own


def test_permissions_built_once_per_policy_are_every_sessions_own(tmp_path):
    # The same command twice in each of two sessions of one project: "always allow" in the first
    # session saves a rule for its second call, and the next session starts from the policy alone.
    policy = Policy(prompt_answer="allow_always")
    answers = [[("Bash", {"command": "sqlite3 data.db .tables"}, 0.1)], [("Bash", {"command": "sqlite3 data.db .tables"}, 0.1)]]
    first = replay_session(write_session(tmp_path / "a.jsonl", answers), policy)
    second = replay_session(write_session(tmp_path / "b.jsonl", answers), policy)
    assert [c.outcome for c in first.calls] == [c.outcome for c in second.calls] == ["prompt", "allow"]
    assert policy.session_permissions(CWD) is not policy.session_permissions(CWD)
    assert len(policy.session_permissions(CWD).rules) == 0


# -- saved time: an invariant --------------------------------------------------------------------
TOOLS = [("Read", {"file_path": f"{CWD}/a.py"}), ("Grep", {"pattern": "x"}), ("Glob", {"pattern": "*.py"}),
         ("Bash", {"command": "ls"}), ("Bash", {"command": "git status"}), ("Bash", {"command": "rm -rf build"}),
         ("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}), ("Task", {"prompt": "look", "subagent_type": "Explore"}),
         ("TodoWrite", {"todos": []}), ("WebFetch", {"url": "https://example.com", "prompt": "x"})]
POLICIES = [Policy(), Policy(deny=("Read",)), Policy(deny=("Bash(ls)", "Grep")), Policy(mode="dontAsk"),
            Policy(max_concurrency=2), Policy(prompt_answer="deny"), Policy(mode="bypassPermissions", deny=("Task",))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(answers=[[(1, 1.0), (0, 2.0)]], policy=1, mode=None)  # [Grep, Read]: the Read, later and longer, denied
@example(answers=[[(0, 1.0), (9, 2.0), (2, 0.5)]], policy=3, mode=None)  # dontAsk: the WebFetch between two reads denied
@given(answers=st.lists(st.lists(st.tuples(st.sampled_from(range(len(TOOLS))), st.floats(0.0, 50.0)), min_size=1, max_size=5),
                        min_size=1, max_size=5),
       policy=st.sampled_from(range(len(POLICIES))), mode=st.sampled_from([None, "acceptEdits", "bypassPermissions"]))
def test_saved_time_never_exceeds_the_calls_that_run_together(answers, policy, mode):
    with tempfile.TemporaryDirectory() as folder:
        spec = [[(*TOOLS[i], seconds) for i, seconds in answer] for answer in answers]
        r = replay_session(write_session(Path(folder) / "s.jsonl", spec, mode=mode), POLICIES[policy])
    together = sum(c.duration or 0.0 for c in r.calls if c.parallel)
    ran = [c for c in r.calls if c.runs]
    assert -1e-9 <= r.saved_s <= together + 1e-9
    if r.parallel_batches == 0:
        assert abs(r.saved_s) < 1e-9
    assert abs(r.serial_s - sum(c.duration or 0.0 for c in ran)) < 1e-6
    assert abs(r.denied_s - sum(c.duration or 0.0 for c in r.calls if not c.runs)) < 1e-6
    assert -1e-9 <= r.estimated_s <= r.serial_s + 1e-9
    for c in r.calls:
        assert c.parallel <= c.runs  # only a call that runs runs beside another
        if c.timing == "estimated" and c.person != "stopped" and c.recorded_s is not None:
            assert c.duration is not None and c.duration <= c.recorded_s + 1e-9  # an estimate never exceeds its span
        if c.person == "none" and c.timing == "measured" and c.recorded_s is not None:
            assert c.duration == c.recorded_s


def test_cpu_ms_per_session_measures_a_replay():
    spent = cpu_ms_per_session([fixture("hand_parallel.jsonl"), fixture("claudestatus_init.jsonl")], repeat=2)
    assert 0 < spent < 1000
