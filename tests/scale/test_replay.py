"""Policy simulation over transcripts, checked against transcripts counted by hand.

``hand_parallel.jsonl`` (counted by hand, see tests/fixtures/transcripts/README.md):
three answers, nine calls. Answer 1 is [Grep, Read, Edit, Glob, Read]: batches
[Grep, Read] [Edit] [Glob, Read]; answer 2 is [git log, git status, rm -rf build]:
[git log, git status] [rm]; answer 3 is [WebFetch]. Six batches, three parallel.

Time, by hand. A call starts when its answer is complete (its last tool_use: 01.4, 06.2,
10.0) and the batches before it are done; spans (tool_use -> tool_result):
0.6 1.1 | 1.5 | 0.5 1.0 || 0.8 1.3 | 1.5 || 3.0. The file records no permission mode, so
default: there Claude Code asks for the Edit, the rm and the WebFetch, so their spans may
hold a person's wait and are estimated: the smaller of the span and the median of the
session's measured calls of that tool (else of all its measured calls: 0.6 1.1 0.5 1.0
0.8 1.3 -> 0.9): Edit 0.9, rm min(1.5, median(0.8, 1.3) = 1.05) = 1.05, WebFetch 0.9.
Every call alone: 0.6+1.1+0.9+0.5+1.0+0.8+1.3+1.05+0.9 = 8.15 s, of it 2.85 s estimated;
the batches 1.1+0.9+1.0 + 1.3+1.05 + 0.9 = 6.25 s; saved by running in parallel 1.9 s
(0.6 + 0.5 + 0.8: the shorter call of each batch of two); observed 4.0+3.0+3.0 = 10.0 s.
"""

from __future__ import annotations

from collections import Counter

import pytest

from nbtoolsched.scale import Policy, replay, replay_session

from .conftest import fixture, write_settings
from .transcripts import write_transcript


def outcomes(replay_result) -> dict[str, str]:
    return {c.tool_use_id: c.outcome for c in replay_result.calls}


def test_default_policy_counts_match_the_hand_count():
    r = replay_session(fixture("hand_parallel.jsonl"))
    assert r.status == "ok" and r.problems == []
    assert (r.turns, r.batches, r.parallel_batches) == (3, 6, 3)
    assert [c.batch for c in r.calls] == [1, 1, 2, 3, 3, 4, 4, 5, 6]
    assert outcomes(r) == {"t1": "allow", "t2": "allow", "t3": "prompt", "t4": "allow", "t5": "allow",
                           "t6": "allow", "t7": "allow", "t8": "prompt", "t9": "prompt"}
    assert (r.count("allow"), r.count("prompt"), r.count("deny")) == (6, 3, 0)
    assert [round(c.recorded_s, 3) for c in r.calls] == [0.6, 1.1, 1.5, 0.5, 1.0, 0.8, 1.3, 1.5, 3.0]
    assert [round(c.duration, 3) for c in r.calls] == [0.6, 1.1, 0.9, 0.5, 1.0, 0.8, 1.3, 1.05, 0.9]
    assert [c.person for c in r.calls] == ["none"] * 2 + ["maybe"] + ["none"] * 4 + ["maybe"] * 2
    assert [c.timing for c in r.calls].count("estimated") == 3
    assert (round(r.observed_s, 3), round(r.serial_s, 3), round(r.simulated_s, 3)) == (10.0, 8.15, 6.25)
    assert (round(r.saved_s, 3), round(r.estimated_s, 3), r.denied_s, r.prompt_s) == (1.9, 2.85, 0.0, 0.0)


def test_a_settings_file_changes_prompts_into_allows_and_denials(tmp_path):
    settings = write_settings(tmp_path / "proj" / ".claude", {"permissions": {
        "allow": ["Bash(git log:*)", "WebFetch(domain:example.com)"], "deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits"}})
    r = replay_session(fixture("hand_parallel.jsonl"), Policy.from_settings(settings, name="proposed"))
    assert outcomes(r) == {"t1": "allow", "t2": "allow", "t3": "allow", "t4": "allow", "t5": "allow",
                           "t6": "allow", "t7": "allow", "t8": "deny", "t9": "allow"}
    by = {c.tool_use_id: c.decided_by for c in r.calls}
    assert by["t8"] == f"Bash(rm:*) ({settings})"
    assert by["t9"] == f"WebFetch(domain:example.com) ({settings})"
    assert by["t3"].startswith("mode: acceptEdits")
    # The denied rm does not run: its 1.05 s is time the policy keeps from running, never a
    # saving (6.25 - 1.05 in batches, 8.15 - 1.05 alone; still 1.9 s saved in parallel).
    assert (round(r.simulated_s, 3), round(r.serial_s, 3), round(r.denied_s, 3), round(r.saved_s, 3)) == (5.2, 7.1, 1.05, 1.9)
    assert [c.runs for c in r.calls] == [True] * 7 + [False, True]
    # What the transcript says about the person does not depend on the policy replayed.
    assert [c.person for c in r.calls] == [c.person for c in replay_session(fixture("hand_parallel.jsonl")).calls]


def test_modes_and_answers_settle_the_asks():
    path = fixture("hand_parallel.jsonl")
    dont_ask = replay_session(path, Policy(mode="dontAsk"))
    assert (dont_ask.count("allow"), dont_ask.count("prompt"), dont_ask.count("deny")) == (6, 0, 3)
    assert {c.decided_by for c in dont_ask.calls if c.outcome == "deny"} == {"mode: dontAsk turns every ask into a deny"}
    plan = replay_session(path, Policy(mode="plan"))
    assert {c.tool_use_id for c in plan.calls if c.outcome == "deny"} == {"t3", "t8"}  # plan mode refuses the edit and rm
    bypass = replay_session(path, Policy(mode="bypassPermissions"))
    assert bypass.count("allow") == 9


def test_always_allow_saves_the_rule_for_the_rest_of_the_session(tmp_path):
    # "Always allow" saves the narrowest suggestion, the exact command: the same command
    # later in the session runs unasked, another one asks again.
    path = write_transcript(tmp_path / "s.jsonl", [[("Bash", {"command": "sqlite3 data.db .tables"})],
                                                   [("Bash", {"command": "sqlite3 data.db .tables"})],
                                                   [("Bash", {"command": "sqlite3 data.db .schema"})]])
    assert replay_session(path, Policy(prompt_answer="allow")).count("prompt") == 3
    always = replay_session(path, Policy(prompt_answer="allow_always"))
    assert [c.outcome for c in always.calls] == ["prompt", "allow", "prompt"]
    assert always.calls[1].decided_by == "Bash(sqlite3 data.db .tables) (session)"
    # Two different sqlite3 commands in a real transcript: each asks, unless a prefix rule covers both.
    studio = fixture("fasthooks_studio.jsonl")
    assert [c.outcome for c in replay_session(studio, Policy(prompt_answer="allow_always")).calls] == ["prompt", "prompt"]
    fixed = replay_session(studio, Policy(allow=("Bash(sqlite3:*)",)))
    assert fixed.count("allow") == 2


def test_the_concurrency_cap_is_the_schedulers():
    serial = replay_session(fixture("hand_parallel.jsonl"), Policy(max_concurrency=1))
    assert round(serial.simulated_s, 3) == round(serial.serial_s, 3) == 8.15
    assert serial.saved_s == 0.0
    assert serial.parallel_batches == 3  # the partition does not change; the cap runs its calls one by one


def test_prompt_seconds_price_a_persons_time_apart_from_tool_time():
    r = replay_session(fixture("hand_parallel.jsonl"), Policy(prompt_seconds=10.0))
    # Edit, rm and WebFetch ask: 3 x 10 s of people's time, never added to tool time.
    assert (r.prompt_s, round(r.simulated_s, 3), round(r.total_s, 3)) == (30.0, 6.25, 36.25)
    refused = replay_session(fixture("hand_parallel.jsonl"), Policy(prompt_answer="deny"))
    # Asked and refused: they do not run (their 2.85 s is kept from running); the prompts still count.
    assert refused.count("prompt") == 3 and [c.runs for c in refused.calls] == [True, True, False] + [True] * 4 + [False, False]
    assert round(refused.denied_s, 3) == 2.85 and round(refused.saved_s, 3) == 1.9


def test_saved_time_comes_only_from_batches_in_which_two_calls_run():
    path = fixture("hand_parallel.jsonl")
    # Both git commands denied: batch 4 runs nothing, so it saves nothing and is not parallel.
    r = replay_session(path, Policy(deny=("Bash(git:*)",)))
    assert r.parallel_batches == 2 and round(r.saved_s, 3) == round(0.6 + 0.5, 3)
    assert not any(c.parallel for c in r.calls if c.batch == 4)
    # Every batch of two loses a call: no parallel batch, nothing saved, however much is denied
    # (the session: 0 parallel batches and 171 s "saved", 90 % of it denied calls).
    none = replay_session(path, Policy(deny=("Read", "Bash(git status)")))
    assert none.parallel_batches == 0 and none.saved_s == 0.0 and none.denied_s > 0
    assert none.simulated_s == none.serial_s


def test_a_pretooluse_hook_from_settings_runs_for_real(tmp_path):
    hook = tmp_path / "deny_git.sh"
    hook.write_text('#!/bin/bash\nif grep -q \'"git status"\'; then echo "no status" >&2; exit 2; fi\nexit 0\n')
    hook.chmod(0o755)
    settings = write_settings(tmp_path / "p" / ".claude", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]}})
    r = replay_session(fixture("hand_parallel.jsonl"), Policy.from_settings(settings))
    assert outcomes(r)["t7"] == "deny" and outcomes(r)["t6"] == "allow"
    assert next(c.decided_by for c in r.calls if c.tool_use_id == "t7").startswith("hook")
    unhooked = replay_session(fixture("hand_parallel.jsonl"), Policy.from_settings(settings, run_hooks=False))
    assert outcomes(unhooked)["t7"] == "allow"


def test_bad_and_partial_transcripts_are_reported_with_reasons_never_raised():
    r = replay_session(fixture("hand_broken.jsonl"))
    assert r.status == "partial"
    assert [c.tool_use_id for c in r.calls] == ["u1", "u2", "u3"]
    text = "\n".join(r.problems)
    for expected in ("line 7: not valid JSON", "line 11: the file ends in the middle of this entry",
                     "2 sidechain (subagent) entries with 1 tool calls left out",
                     "1 tool calls have no tool_result", "Read u2",
                     "1 tool_results answer a tool_use the file does not hold (toolu_ghost)",
                     "schema refuses (Bash x1)"):
        assert expected in text, expected
    # TodoWrite is not in the registry, but it is one of Claude Code's own tools: decided as
    # Claude Code decides it (never asked), not reported as unknown (tests/scale/test_claude_tools.py).
    assert "does not have" not in text
    assert [c.known_tool for c in r.calls] == [True, True, True]
    assert next(c for c in r.calls if c.tool_use_id == "u1").outcome == "allow"
    assert next(c for c in r.calls if c.tool_use_id == "u2").duration is None
    with_side = replay_session(fixture("hand_broken.jsonl"), include_sidechains=True)
    assert [c.tool_use_id for c in with_side.calls] == ["u1", "s1", "u2", "u3"]
    assert next(c for c in with_side.calls if c.tool_use_id == "s1").sidechain


def test_files_that_cannot_be_replayed_say_why(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "text.jsonl").write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
    (tmp_path / "garbage.jsonl").write_bytes(b"\xff\xfe not json\n[1, 2]\n")
    assert replay_session(tmp_path / "missing.jsonl").status == "unreadable"
    empty = replay_session(tmp_path / "empty.jsonl")
    assert empty.status == "empty" and "no entries at all" in empty.problems[-1]
    assert replay_session(tmp_path / "text.jsonl").problems == ["no tool calls to replay"]
    garbage = replay_session(tmp_path / "garbage.jsonl")
    assert garbage.status == "empty" and "not UTF-8" in garbage.problems[0] and "not an object" in garbage.problems[1]


def test_real_claude_code_transcripts_hand_counted():
    # fasthooks_main.jsonl: 10 calls in 7 answers, before and after a /compact (the replay
    # reads every entry, not only the chain after the compaction).
    main = replay_session(fixture("fasthooks_main.jsonl"))
    assert main.status == "ok" and main.cwd == "/workspace"
    assert Counter(c.tool for c in main.calls) == {"Bash": 5, "Write": 3, "Read": 2}
    assert (main.turns, main.batches, main.parallel_batches) == (7, 10, 0)
    # allowed: ls -la and cat (read-only commands), the two Reads inside /workspace;
    # prompts: three Writes, python, python3, and ls with a glob (not provably read-only).
    assert (main.count("allow"), main.count("prompt"), main.count("deny")) == (4, 6, 0)
    assert [c.summary for c in main.calls if c.outcome == "allow"] == [
        "Bash: ls -la", "Read: /workspace/hello_world.py", "Bash: cat nonexistent.txt", "Read: /workspace/data.txt"]
    studio = replay_session(fixture("fasthooks_studio.jsonl"))
    assert [c.outcome for c in studio.calls] == ["prompt", "prompt"]
    side = replay_session(fixture("fasthooks_sidechain.jsonl"))
    assert side.status == "empty" and "1 sidechain (subagent) entries" in side.problems[0]


def test_replay_of_a_folder_sums_it_up(tmp_path):
    report = replay([fixture("hand_parallel.jsonl"), fixture("fasthooks_main.jsonl"), fixture("hand_broken.jsonl"),
                     str(tmp_path / "gone.jsonl")], Policy(name="now"), workers=1, progress=False)
    t = report.totals()
    assert (t.sessions, t.calls, t.allow, t.prompt, t.deny) == (4, 22, 12, 10, 0)  # hand_broken's TodoWrite: never asked
    assert report.by_tool().to_dicts()[0] == {"tool": "Bash", "calls": 9, "allow": 4, "prompt": 5, "deny": 0}
    reasons = report.problems().column("reason")
    assert any("cannot be read" in r for r in reasons) and any("sidechain" in r for r in reasons)


@pytest.mark.parametrize("bad", [{"max_concurrency": 0}, {"prompt_answer": "maybe"}, {"mode": "sideways"}, {"allow": ("Bash(",)}])
def test_a_policy_that_cannot_work_fails_where_it_is_made(bad):
    with pytest.raises(ValueError):
        Policy(**bad)


def test_a_broken_settings_file_is_named(tmp_path):
    bad = tmp_path / "settings.json"
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="settings.json"):
        Policy.from_settings(bad)
