"""Claude Code's own tools in a replay: the table of their facts, and what a replay makes of it.

A transcript of Claude Code is full of tools this package does not implement (TodoWrite,
Task / Agent, BashOutput, KillShell...). Replayed without their facts, every such call was
"unknown": a prompt where Claude Code asks nobody, partitioned alone, and the session
"partial". With ``CLAUDE_TOOLS`` each is decided and partitioned as Claude Code does it.
"""

from __future__ import annotations

import pytest

from nbtoolsched.scale import Policy, replay, replay_session
from nbtoolsched.scale._claude_tools import CLAUDE_TOOLS, claude_tool
from nbtoolsched.tools import default_registry

from .transcripts import write_transcript

TODOS = {"todos": [{"content": "fix it", "status": "in_progress", "activeForm": "fixing it"}]}
TASK = {"description": "look around", "prompt": "find the bug", "subagent_type": "Explore"}


def outcomes(r) -> list[str]:
    return [c.outcome for c in r.calls]


def test_the_table_has_one_row_per_tool_and_every_name_is_found_once():
    names = [n for row in CLAUDE_TOOLS for n in (row.name, *row.aliases)]
    assert len(names) == len(set(names))
    for row in CLAUDE_TOOLS:
        assert row.asks in ("never", "rules", "always", "read", "edit")
        assert (row.path_field is not None) == (row.asks in ("read", "edit")), row.name
        for name in (row.name, *row.aliases):
            assert claude_tool(name) is claude_tool(row.name)
    # The ones the user report listed, by their names in old and new transcripts.
    for name in ("TodoWrite", "Task", "Agent", "BashOutput", "KillShell", "WebSearch", "ExitPlanMode", "NotebookRead", "LS",
                 "MultiEdit", "SlashCommand", "Skill", "TaskOutput", "TaskStop", "AskUserQuestion", "EnterPlanMode"):
        assert claude_tool(name) is not None, name
    assert claude_tool("NoSuchTool") is None


def test_the_registry_tools_come_first():
    registry = default_registry()
    # The real implementations are not shadowed: the table holds only what the registry lacks.
    assert [row.name for row in CLAUDE_TOOLS if row.name in registry] == []


def test_todowrite_and_task_calls_are_not_prompts_and_the_session_is_not_partial(tmp_path):
    path = write_transcript(tmp_path / "s.jsonl", [
        [("TodoWrite", TODOS)],
        [("Task", TASK), ("Task", {**TASK, "description": "read the tests"}), ("Agent", TASK)],
        [("BashOutput", {"bash_id": "bash_1"}), ("KillShell", {"shell_id": "bash_1"})],
        [("TodoWrite", TODOS)],
    ])
    r = replay_session(path)
    assert r.status == "ok" and r.problems == []
    # Claude Code's checkPermissions allows all of these: nobody is asked.
    assert outcomes(r) == ["allow"] * 7
    assert {c.decided_by for c in r.calls} >= {"tool: Claude Code's TodoWrite never asks", "tool: Claude Code's Agent never asks"}
    assert all(c.known_tool for c in r.calls)
    # TodoWrite is not concurrency-safe (alone); the three sub-agents are (one parallel batch);
    # BashOutput and KillShell (TaskStop) are both safe: one batch of two.
    assert [c.batch for c in r.calls] == [1, 2, 2, 2, 3, 3, 4]
    assert (r.batches, r.parallel_batches) == (4, 2)
    assert [c.read_only for c in r.calls] == [False, True, True, True, True, False, False]


def test_tools_claude_code_asks_for_still_ask_and_follow_modes_and_rules(tmp_path):
    path = write_transcript(tmp_path / "s.jsonl", [
        [("WebSearch", {"query": "python 3.13 changes"})],
        [("AskUserQuestion", {"questions": [{"question": "which one?"}]})],
        [("Skill", {"skill": "review-pr"})],
        [("ExitPlanMode", {"plan": "do it"})],
    ])
    assert outcomes(replay_session(path)) == ["prompt"] * 4
    # bypassPermissions lets WebSearch and the skill through; a question and leaving plan
    # mode need the person in every mode (requiresUserInteraction).
    assert outcomes(replay_session(path, Policy(mode="bypassPermissions"))) == ["allow", "prompt", "allow", "prompt"]
    ruled = replay_session(path, Policy(allow=("WebSearch", "Skill(review:*)", "AskUserQuestion")))
    assert outcomes(ruled) == ["allow", "prompt", "allow", "prompt"]
    assert ruled.calls[2].decided_by == "Skill(review:*) (python)"  # Claude Code's prefix form: review-pr matches
    denied = replay_session(path, Policy(deny=("Skill(review-pr)",)))
    assert denied.calls[2].outcome == "deny"
    assert outcomes(replay_session(path, Policy(mode="dontAsk"))) == ["deny"] * 4  # dontAsk turns every final ask into a deny


def test_old_file_tools_are_judged_by_their_paths(tmp_path):
    path = write_transcript(tmp_path / "s.jsonl", [
        [("LS", {"path": "/home/u/proj/src"}), ("NotebookRead", {"notebook_path": "/home/u/proj/a.ipynb"}),
         ("LS", {"path": "/etc"})],
        [("MultiEdit", {"file_path": "/home/u/proj/a.py", "edits": [{"old_string": "a", "new_string": "b"}]})],
    ])
    r = replay_session(path)
    assert r.status == "ok"
    assert outcomes(r) == ["allow", "allow", "prompt", "prompt"]  # a read outside the project asks; an edit asks
    assert [c.batch for c in r.calls] == [1, 1, 1, 2]
    assert outcomes(replay_session(path, Policy(mode="acceptEdits")))[3] == "allow"
    assert replay_session(path, Policy(deny=("Read(//etc)",))).calls[2].outcome == "deny"  # Read rules cover LS


def test_a_string_input_is_malformed_not_an_unknown_tool(tmp_path):
    path = write_transcript(tmp_path / "s.jsonl", [[("Bash", "ls -la")], [("NoSuchTool", {"x": 1})], [("TodoWrite", "fix it")]])
    r = replay_session(path)
    assert r.status == "partial"
    text = "\n".join(r.problems)
    assert "calls whose input is not an object (Bash x1 (a str), TodoWrite x1 (a str)): malformed" in text
    assert "does not have (NoSuchTool x1)" in text and "does not have (Bash" not in text and "TodoWrite x1)" not in text
    assert [c.known_tool for c in r.calls] == [True, False, True]


def test_the_aliases_are_the_references():
    # Reference §3.4: TaskStop <- KillShell, Agent <- Task, TaskOutput <- AgentOutputTool and
    # BashOutputTool, SendUserMessage <- Brief (BashOutput, an older tool of its own, has its row).
    for alias, name in (("KillShell", "TaskStop"), ("Task", "Agent"), ("AgentOutputTool", "TaskOutput"),
                        ("BashOutputTool", "TaskOutput"), ("Brief", "SendUserMessage")):
        found = claude_tool(alias)
        assert found is not None and found.name == name, alias
    # Reference §4.2, auto mode's safe list holds only tools that never need a rule to run, and the
    # two that need the person: a replay's table agrees on each that it has.
    for name in ("TodoWrite", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "TaskStop", "TaskOutput", "EnterPlanMode",
                 "TeamCreate", "TeamDelete", "SendMessage", "ListMcpResourcesTool", "ReadMcpResourceTool"):
        assert claude_tool(name).row.asks == "never", name
    assert claude_tool("AskUserQuestion").row.asks == claude_tool("ExitPlanMode").row.asks == "always"


def test_a_report_over_them_has_no_partial_sessions(tmp_path):
    for n in range(3):
        write_transcript(tmp_path / f"s{n}.jsonl", [[("TodoWrite", TODOS)], [("Task", TASK), ("Read", {"file_path": "/home/u/proj/a"})]])
    report = replay(tmp_path, workers=1, progress=False)
    assert report.summary().to_dicts()[1] == {"metric": "  replayed in full", "value": 3}
    assert report.totals().prompt == 0 and report.problems().rows == []


@pytest.mark.parametrize("name", sorted({row.name for row in CLAUDE_TOOLS}))
def test_every_row_replays_without_an_error(tmp_path, name):
    r = replay_session(write_transcript(tmp_path / "s.jsonl", [[(name, {})]]))
    assert r.status == "ok", r.problems
    assert r.calls[0].known_tool
