"""The checkers of chapters 10-13 (``teaching.sessions``): a wrong answer is named, the right one passes.

Each reference rule is also checked against the library it stands for.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from teaching import sessions
from teaching.sessions import (check_completed_calls, check_is_deferred, check_main_chain, check_makespan,
                               reference_completed_calls, reference_main_chain, reference_makespan)


def unwritten(*args: Any) -> Any:
    raise NotImplementedError


# -- chapter 10 ----------------------------------------------------------------------------------
def completed_at_last_piece(chunks: list[dict[str, Any]]) -> list[tuple[int, str, str, str]]:
    """Wrong: a call is 'complete' at its last argument piece, which nobody can know while streaming."""
    calls: dict[int, list[Any]] = {}
    for number, chunk in enumerate(chunks):
        for d in chunk["choices"][0]["delta"].get("tool_calls") or []:
            call = calls.setdefault(d["index"], [number, d.get("id", ""), "", ""])
            call[0] = number
            call[2] += d["function"].get("name") or ""
            call[3] += d["function"].get("arguments") or ""
    return sorted(tuple(c) for c in calls.values())  # type: ignore[misc]


def test_completed_calls_wrong_answer_is_named() -> None:
    verdict = check_completed_calls(completed_at_last_piece)
    assert not verdict.ok
    text = str(verdict)
    assert "is complete at chunk" in text and "too early" in text


def test_completed_calls_right_answer_passes() -> None:
    verdict = check_completed_calls(reference_completed_calls)
    assert verdict.ok, str(verdict)
    assert str(verdict).startswith("✓ completed_calls: all 150 cases agree")


def test_completed_calls_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_completed_calls(unwritten))


def test_completed_calls_reference_matches_chunk_translator() -> None:
    from nbtoolsched.models._openai import ChunkTranslator

    rng = random.Random(7)
    for _ in range(200):
        chunks = sessions.random_chunks(rng)
        translator = ChunkTranslator()
        starts: dict[int, str] = {}
        stopped: list[tuple[int, str]] = []
        for number, chunk in enumerate(chunks):
            for event in translator.feed(json.loads(json.dumps(chunk))):
                if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
                    starts[event["index"]] = event["content_block"]["id"]
                if event["type"] == "content_block_stop" and event["index"] in starts:
                    stopped.append((number, starts[event["index"]]))
        assert stopped == [(n, i) for n, i, _, _ in reference_completed_calls(chunks)]


# -- chapter 11 ----------------------------------------------------------------------------------
def seeds_rule(tool: dict[str, Any]) -> bool:
    """Wrong (seed 5.2.4's pseudocode): MCP or shouldDefer, alwaysLoad never looked at."""
    return bool(tool.get("is_mcp") or tool.get("should_defer"))


def test_is_deferred_wrong_answer_is_named() -> None:
    verdict = check_is_deferred(seeds_rule)
    assert not verdict.ok
    text = str(verdict)
    assert "alwaysLoad is checked first" in text and "you said deferred" in text


def no_toolsearch_step(tool: dict[str, Any]) -> bool:
    """Wrong: alwaysLoad, MCP and shouldDefer, but the ToolSearch step dropped."""
    if tool.get("always_load") is True:
        return False
    if tool.get("is_mcp"):
        return True
    return tool.get("should_defer") is True


def test_is_deferred_dropping_the_toolsearch_step_is_caught() -> None:
    verdict = check_is_deferred(no_toolsearch_step)
    text = str(verdict)
    assert not verdict.ok
    assert "ToolSearch (built-in, shouldDefer true" in text
    assert "is never deferred: that step comes before shouldDefer" in text


def test_is_deferred_right_answer_passes() -> None:
    verdict = check_is_deferred(sessions.reference_is_deferred)
    assert verdict.ok, str(verdict)


def test_is_deferred_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_is_deferred(unwritten))


def test_is_deferred_reference_matches_the_registry() -> None:
    from nbtoolsched import ToolRegistry
    from nbtoolsched.tools import McpTool, default_registry

    registry = default_registry()
    for name in ["Read", "Edit", "Bash", "Grep", "ToolSearch", "WebFetch", "NotebookEdit"]:
        tool = registry.get(name)
        assert tool is not None
        info = {"name": name, "is_mcp": False, "should_defer": tool.should_defer, "always_load": tool.always_load}
        assert registry.is_deferred(tool) == sessions.reference_is_deferred(info), name

    class Server:
        name = "db"

    for meta in [None, {}, {"anthropic/alwaysLoad": True}, {"anthropic/alwaysLoad": False}, {"anthropic/alwaysLoad": "yes"}]:
        info: dict[str, Any] = {"name": "query", "inputSchema": {"type": "object", "properties": {}}}
        if meta is not None:
            info["_meta"] = meta
        tool = McpTool(Server(), info)  # type: ignore[arg-type]
        plain = {"name": tool.name, "is_mcp": True, "should_defer": True,
                 **({"always_load": (meta or {}).get("anthropic/alwaysLoad")} if meta else {})}
        assert ToolRegistry([tool]).is_deferred(tool) == sessions.reference_is_deferred(plain), meta


# -- chapter 12 ----------------------------------------------------------------------------------
def every_talk_entry(entries: list[dict[str, Any]]) -> list[str]:
    """Wrong: every user and assistant entry in file order, branches included."""
    return [e["uuid"] for e in entries if e["type"] in ("user", "assistant") and not e.get("isSidechain")]


def test_main_chain_wrong_answer_is_named() -> None:
    verdict = check_main_chain(every_talk_entry)
    assert not verdict.ok
    assert "on a branch the conversation left" in str(verdict)


def test_main_chain_keeping_system_entries_is_named() -> None:
    def with_system(entries: list[dict[str, Any]]) -> list[str]:
        by = {e["uuid"]: e for e in entries if e.get("uuid")}
        talk = [e for e in entries if e["type"] in ("user", "assistant") and not e.get("isSidechain")]
        out, current = [], talk[-1]
        while current:
            out.append(current["uuid"])
            current = by.get(current.get("parentUuid"))
        return out[::-1]

    assert "a system entry" in str(check_main_chain(with_system))


def from_the_last_talk_entry(entries: list[dict[str, Any]]) -> list[str]:
    """Wrong: the chain ending at the last user/assistant entry, sidechain entries included."""
    by = {e["uuid"]: e for e in entries if e.get("uuid")}
    talk = [e for e in entries if e["type"] in ("user", "assistant")]
    out: list[str] = []
    current = talk[-1] if talk else None
    while current:
        if current["type"] in ("user", "assistant"):
            out.append(current["uuid"])
        current = by.get(current.get("parentUuid"))
    return out[::-1]


def test_main_chain_ending_at_a_sidechain_entry_is_caught() -> None:
    verdict = check_main_chain(from_the_last_talk_entry)
    assert not verdict.ok
    assert "a sidechain (subagent) entry" in str(verdict)


def test_main_chain_right_answer_passes() -> None:
    verdict = check_main_chain(reference_main_chain)
    assert verdict.ok, str(verdict)


def test_main_chain_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_main_chain(unwritten))


def test_main_chain_reference_matches_read_transcript(tmp_path: Path) -> None:
    from nbtoolsched import read_transcript

    rng = random.Random(3)
    for n in range(100):
        entries = sessions.random_transcript(rng)
        for e in entries:
            if e["type"] in ("user", "assistant"):
                e["message"] = {"role": e["type"], "content": [{"type": "text", "text": e["uuid"]}]}
        path = tmp_path / f"t{n}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        want = read_transcript(path).messages
        assert sessions.messages_of(entries, reference_main_chain(entries)) == want


# -- chapter 13 ----------------------------------------------------------------------------------
def longest_call(times: list[float], cap: int) -> float:
    """Wrong: a batch takes its longest call, whatever the cap."""
    return max(times, default=0.0)


def batches_of_cap(times: list[float], cap: int) -> float:
    """Wrong: calls in fixed groups of ``cap``, each group waiting for the one before."""
    return sum(max(times[i:i + cap]) for i in range(0, len(times), cap))


def test_makespan_wrong_answers_are_named() -> None:
    text = str(check_makespan(longest_call))
    assert "that equals the longest call's time" in text and "first slot that frees" in text
    assert not check_makespan(batches_of_cap).ok


def test_makespan_a_lower_bound_is_not_told_it_took_the_longest_call() -> None:
    """max(total / cap, longest) is not "the longest call alone": the hint names only what the value equals."""
    verdict = check_makespan(lambda times, cap: max(sum(times) / cap, max(times, default=0.0)))
    assert not verdict.ok
    assert all("the longest call alone" not in p and "true only when" not in p for p in verdict.problems)
    assert any("that equals the longest call's time" in p and "makes some call wait for a slot" in p
               for p in verdict.problems)


def test_makespan_right_answer_passes() -> None:
    verdict = check_makespan(reference_makespan)
    assert verdict.ok, str(verdict)


def test_makespan_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_makespan(unwritten))


@pytest.mark.parametrize("cap", [1, 2, 3, 10])
def test_makespan_reference_matches_the_replay(cap: int) -> None:
    from nbtoolsched.scale import _replay

    rng = random.Random(cap)
    for _ in range(100):
        times = [rng.randint(1, 40) / 10 for _ in range(rng.randint(0, 7))]
        assert reference_makespan(times, cap) == pytest.approx(_replay._makespan(times, cap))

