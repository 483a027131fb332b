"""Three real Claude Code sessions, counted by hand, against the simulation's counts.

The files and where they come from: tests/fixtures/transcripts/README.md. Each count
below was made by reading the file's tool_use blocks one by one and deciding each call as
Claude Code decides it (the reference of Claude Code's semantics: §3.4 for tools without
a check of their own, §4.4 for the order, §4.5 for file paths, §5 for Bash; the table
in nbtoolsched/scale/_claude_tools.py for TodoWrite, Task, Skill and the rest), not by
running the replay; the comments show the sums.
"""

from __future__ import annotations

from collections import Counter

from nbtoolsched.scale import Policy, replay_session

from .conftest import fixture


def counts(r) -> tuple[int, int, int]:
    return r.count("allow"), r.count("prompt"), r.count("deny")


def by_outcome(r, outcome: str) -> list[str]:
    return [c.summary for c in r.calls if c.outcome == outcome]


# -- fasthooks_main.jsonl (Claude Code 2.0.76, cwd /workspace, 10 calls) ------------------------
def test_fasthooks_main_by_hand():
    r = replay_session(fixture("fasthooks_main.jsonl"))
    assert Counter(c.tool for c in r.calls) == {"Bash": 5, "Write": 3, "Read": 2}
    # Default policy. allow: `ls -la` and `cat nonexistent.txt` (read-only commands, §5),
    # the two Reads inside /workspace (§4.5 read step 6) = 4. prompt: the three Writes (§4.5
    # write step 8), `python ...` and `python3 ...` (not read-only), `ls -lh /workspace/*.txt
    # ...` (a glob: not provably read-only) = 6. deny: 0. 4 + 6 = 10 calls.
    assert counts(r) == (4, 6, 0)
    # acceptEdits: the Writes are inside /workspace, so allowed (§4.5 write step 6): 7, 3, 0.
    # With Bash(python:*) denied on top: `python ...` denied (`python3` is another program): 7, 2, 1.
    assert counts(replay_session(fixture("fasthooks_main.jsonl"), Policy(mode="acceptEdits"))) == (7, 3, 0)
    denied = replay_session(fixture("fasthooks_main.jsonl"), Policy(mode="acceptEdits", deny=("Bash(python:*)",)))
    assert counts(denied) == (7, 2, 1) and by_outcome(denied, "deny") == ["Bash: python /workspace/number_generator.py"]


# -- claudestatus_init.jsonl (Claude Code 1.0.31, /init in /var/home/a/Code/ClaudeStatus, 16 calls) ---
def test_claudestatus_init_by_hand():
    r = replay_session(fixture("claudestatus_init.jsonl"))
    assert r.status == "ok" and r.problems == []
    assert Counter(c.tool for c in r.calls) == {"TodoWrite": 5, "Glob": 5, "LS": 3, "Read": 2, "Write": 1}
    # Default policy. allow: TodoWrite x5 (its checkPermissions allows, never asks), LS x3
    # (paths inside the cwd: the read check, §4.5 step 6), Read x2 (inside the cwd), Glob x5
    # (no path: the cwd) = 5 + 3 + 2 + 5 = 15. prompt: the Write of CLAUDE.md (default mode,
    # no rule: §4.5 write step 8) = 1. deny: 0.
    assert counts(r) == (15, 1, 0)
    assert by_outcome(r, "prompt") == ["Write: /var/home/a/Code/ClaudeStatus/CLAUDE.md"]
    # Batches: [TodoWrite] [LS Read Glob] [LS LS Read] [TodoWrite] [Glob x4] [TodoWrite] [TodoWrite]
    # [Write] [TodoWrite]: 9, three of them parallel (TodoWrite is not concurrency-safe; LS is).
    assert (r.batches, r.parallel_batches) == (9, 3)
    # acceptEdits: the Write is inside the cwd, so 16 allowed. Read(./Prompts.md) denied: the
    # Read of Prompts.md is denied (14 allowed, 1 prompt, 1 denied).
    assert counts(replay_session(fixture("claudestatus_init.jsonl"), Policy(mode="acceptEdits"))) == (16, 0, 0)
    prompts_md = replay_session(fixture("claudestatus_init.jsonl"), Policy(deny=("Read(./Prompts.md)",)))
    assert counts(prompts_md) == (14, 1, 1) and by_outcome(prompts_md, "deny") == ["Read: /var/home/a/Code/ClaudeStatus/Prompts.md"]


def test_claudestatus_init_times_what_the_transcript_can_show():
    r = replay_session(fixture("claudestatus_init.jsonl"))
    calls = {c.summary: c for c in r.calls}
    # The Write took 14.96 s from tool_use to tool_result: Claude Code (default mode) asked for
    # it, so most of that is a person reading the prompt. Its tool time is estimated: the
    # median of the session's measured calls (it is the only Write), far below its span.
    write = calls["Write: /var/home/a/Code/ClaudeStatus/CLAUDE.md"]
    assert write.person == "maybe" and write.timing == "estimated"
    assert round(write.recorded_s, 3) == 14.962 and write.duration < 0.1
    # The Globs measured themselves (toolUseResult.durationMs 22, 9, 14, 19, 25).
    globs = [c for c in r.calls if c.tool == "Glob"]
    assert [round(c.duration * 1000) for c in globs] == [22, 9, 14, 19, 25]
    assert all(c.timing == "measured" for c in globs)
    # 15 s of the 19.6 s observed was the person: none of it is tool time.
    assert r.observed_s > 19 and r.serial_s < 1 and r.estimated_s < 0.1


# -- claudecontext_plan.jsonl (Claude Code 2.1.4, plan mode in /Users/bskim/ClaudeContext, 53 calls) ---
def test_claudecontext_plan_by_hand():
    r = replay_session(fixture("claudecontext_plan.jsonl"))
    assert r.status == "ok" and r.problems == []
    assert Counter(c.tool for c in r.calls) == {"Task": 27, "TodoWrite": 12, "Bash": 8, "ExitPlanMode": 2,
                                                "AskUserQuestion": 1, "Write": 1, "Skill": 1, "Edit": 1}
    # Default policy.
    # allow: Task x27 (Agent: checkPermissions allows outside auto mode), TodoWrite x12,
    #   the Write and the Edit of the session's plan file ~/.claude/plans/resilient-inventing-snail.md
    #   (the file the entries' slug names: Claude Code lets a session write it, §4.5 write step 2),
    #   Bash `ls -la ...` x3 and `git status --short` x2 (read-only, inside the cwd)
    #   = 27 + 12 + 2 + 3 + 2 = 46;
    # prompt: AskUserQuestion and ExitPlanMode x2 (they need the person, §4.4 step 1e), Skill
    #   isolate-context (no Skill rule: ask), Bash `pnpm add lucide-react`, `npm run typecheck 2>&1 |
    #   head -50`, `npm run typecheck` (not read-only) = 3 + 1 + 3 = 7;
    # deny: 0. 46 + 7 = 53.
    assert counts(r) == (46, 7, 0)
    assert sorted(by_outcome(r, "prompt")) == sorted(["AskUserQuestion", "ExitPlanMode", "ExitPlanMode", "Skill: isolate-context",
                                                      "Bash: pnpm add lucide-react", "Bash: npm run typecheck 2>&1 | head -50",
                                                      "Bash: npm run typecheck"])
    plan = [c for c in r.calls if c.tool in ("Write", "Edit")]
    assert [c.outcome for c in plan] == ["allow", "allow"] and all("plan file" in c.decided_by for c in plan)
    # acceptEdits, Bash(npm run:*) and Skill(isolate-context) allowed, Bash(pnpm:*) denied: the two
    # npm runs and the skill are allowed (46 + 3 = 49), pnpm denied (1), the three questions to
    # the person still ask (3): 49 + 3 + 1 = 53.
    team = Policy(mode="acceptEdits", allow=("Bash(npm run:*)", "Skill(isolate-context)"), deny=("Bash(pnpm:*)",))
    other = replay_session(fixture("claudecontext_plan.jsonl"), team)
    assert counts(other) == (49, 3, 1) and by_outcome(other, "deny") == ["Bash: pnpm add lucide-react"]


def test_claudecontext_plan_times_people_apart_from_tools():
    r = replay_session(fixture("claudecontext_plan.jsonl"))
    questions = [c for c in r.calls if c.tool in ("AskUserQuestion", "ExitPlanMode")]
    # The question took 62.7 s (the person answering), the first plan was rejected after 40.8 s,
    # the second approved after 6.3 s: all of it the person's, no tool time.
    assert [c.person for c in questions] == ["asked", "stopped", "asked"]
    assert [round(c.recorded_s, 1) for c in questions] == [62.7, 40.8, 6.3]
    assert [c.duration for c in questions] == [0.0, 0.0, 0.0]
    # Every Task measured itself (toolUseResult.totalDurationMs): the first one 27,516 ms.
    tasks = [c for c in r.calls if c.tool == "Task"]
    assert all(c.timing == "measured" and c.duration is not None for c in tasks)
    assert round(tasks[0].duration, 3) == 27.516
    # The four-agent batches really run together: saving is real, and nothing in it is a person.
    assert r.parallel_batches == 8 and r.saved_s > 1000
    assert r.estimated_s < 1.0
