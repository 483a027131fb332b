"""The tool calls a transcript records: which call, in which answer, when it started, when it ended.

``read_transcript`` gives the conversation a model would see next (the chain that ends
at the last entry), which leaves out everything before a compaction and every abandoned
branch. A replay wants every call the session made, so it walks the entries in file
order instead: each assistant answer (Claude Code writes one entry per content block,
all with the answer's ``message.id``) is one turn, its tool_use blocks in order; each
``tool_result`` (in the user entries) closes its call and gives the time it came back.

What cannot be used is reported, one reason each, never raised: lines the reader
skipped, sidechain (subagent) entries left out, calls without a result, results for
calls the file never shows, repeated tool_use ids, timestamps that cannot be read.

What the file says about the person and about time is kept with each call, for the
replay's time estimates (``_replay``):

* the permission mode in force (``permissionMode``, which Claude Code writes on its user
  entries since about 2.1.20; None before), and the session's plan names (``slug``: its
  plan file is ``~/.claude/plans/<slug>.md``, which Claude Code lets it write unasked);
* ``stopped``: its result is Claude Code's rejection (the tool_result text "The user
  doesn't want to proceed with this tool use...", ``toolUseResult`` "User rejected tool
  use", ``toolDenialKind`` "user-rejected", or the subagent's "Permission for this tool use
  was denied"). Claude Code writes the same result when the person rejects the prompt and
  when they interrupt a running tool (reference §1.7), so it means one or the other;
* ``edited``: the person changed the edit in the prompt (``toolUseResult.userModified``);
* ``self_timed``: the tool's own measure of its run, which no prompt is part of
  (``toolUseResult.durationMs`` of Glob, Grep and WebFetch, ``totalDurationMs`` of
  Task/Agent, ``durationSeconds`` of WebSearch).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._session_log import Transcript

__all__ = ["RecordedCall", "RecordedSession", "recorded_session", "result_text"]


@dataclass(slots=True)
class RecordedCall:
    """One tool_use and its tool_result, as the transcript has them."""

    tool_use_id: str
    name: str
    input: Any  # as written (a dict for any well-formed call)
    turn: int  # 0-based index of the answer it belongs to
    line: int  # the line of its tool_use block
    used_at: float | None  # when the tool_use entry was written (epoch seconds)
    result_at: float | None = None  # when its tool_result entry was written
    is_error: bool | None = None
    result: Any = None  # the tool_result's content
    sidechain: bool = False
    mode: str | None = None  # the permission mode the file says was in force (None: it does not say)
    stopped: bool = False  # rejected at the prompt, or interrupted (Claude Code writes the same result)
    edited: bool = False  # the person changed the edit in the prompt (userModified)
    self_timed: float | None = None  # seconds the tool measured itself (no prompt in it)

    @property
    def answered(self) -> bool:
        return self.result_at is not None or self.is_error is not None


@dataclass
class RecordedSession:
    """A transcript's calls grouped by answer, with what could not be used."""

    session_id: str | None
    cwd: str | None
    turns: list[list[RecordedCall]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    slugs: set[str] = field(default_factory=set)  # the session's plan names (``slug``: its plan file is plans/<slug>.md)

    @property
    def calls(self) -> list[RecordedCall]:
        return [c for turn in self.turns for c in turn]


def _epoch(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def result_text(content: Any) -> str:
    """A tool_result's content as text (text blocks joined; other blocks named)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") if isinstance(b, dict) and b.get("type") == "text" else f"[{b.get('type', '?')}]"
                       if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else str(content)


# Claude Code's results for a call the person refused or stopped (reference §1.7).
_STOPPED_TEXTS = ("The user doesn't want to proceed with this tool use", "Permission for this tool use was denied")
_STOPPED_RESULT = "User rejected tool use"
# toolUseResult fields in which a tool reports how long it ran: (name, seconds per unit).
_SELF_TIMED = (("durationMs", 0.001), ("totalDurationMs", 0.001), ("durationSeconds", 1.0))


def _stopped(block: dict[str, Any], meta: Any, entry_data: dict[str, Any]) -> bool:
    if meta == _STOPPED_RESULT or entry_data.get("toolDenialKind") == "user-rejected":
        return True
    if not block.get("is_error"):
        return False
    return result_text(block.get("content")).lstrip().startswith(_STOPPED_TEXTS)


def _self_timed(meta: Any) -> float | None:
    if not isinstance(meta, dict):
        return None
    for key, unit in _SELF_TIMED:
        value = meta.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value) * unit
    return None


def recorded_session(transcript: Transcript, *, include_sidechains: bool = False) -> RecordedSession:
    """Every tool call of the file, in order, grouped into the answers that made them."""
    out = RecordedSession(transcript.session_id, transcript.cwd)
    out.problems.extend(str(p) for p in transcript.problems)
    turns: dict[Any, list[RecordedCall]] = {}
    by_id: dict[str, RecordedCall] = {}
    skipped: Counter[str] = Counter()
    orphans: list[str] = []
    bad_times = 0
    mode: str | None = None
    for entry in transcript.entries:
        recorded_mode = entry.data.get("permissionMode")
        if isinstance(recorded_mode, str) and not entry.is_sidechain:
            mode = recorded_mode
        slug = entry.data.get("slug")
        if isinstance(slug, str) and slug:
            out.slugs.add(slug)
        if entry.type not in ("assistant", "user"):
            continue
        message = entry.message
        content = message.get("content") if message is not None else None
        if not isinstance(content, list):
            continue
        if entry.is_sidechain and not include_sidechains:
            skipped["entries"] += 1
            skipped["calls"] += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            continue
        when = _epoch(entry.timestamp)
        if when is None:
            bad_times += 1
        if entry.type == "assistant":
            key = (entry.is_sidechain, entry.data.get("agentId"), message.get("id") if message and isinstance(message.get("id"), str) else f"line {entry.line}")
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                tool_use_id, name = block.get("id"), block.get("name")
                if not isinstance(tool_use_id, str) or not isinstance(name, str):
                    out.problems.append(f"line {entry.line}: a tool_use block without a string id and name; skipped")
                    continue
                if tool_use_id in by_id:
                    out.problems.append(f"line {entry.line}: tool_use {tool_use_id} repeats the one on line {by_id[tool_use_id].line}; skipped")
                    continue
                turn = turns.get(key)
                if turn is None:
                    turn = turns[key] = []
                call = RecordedCall(tool_use_id, name, block.get("input"), len(turns) - 1, entry.line, when, sidechain=entry.is_sidechain,
                                    mode=mode)
                turn.append(call)
                by_id[tool_use_id] = call
        else:
            results_here = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                answered = by_id.get(str(block.get("tool_use_id")))
                if answered is None:
                    orphans.append(str(block.get("tool_use_id")))
                    continue
                if answered.answered:
                    out.problems.append(f"line {entry.line}: a second tool_result for {answered.tool_use_id}; the first one counts")
                    continue
                answered.result_at = when
                answered.is_error = bool(block.get("is_error"))
                answered.result = block.get("content")
                # toolUseResult describes the entry's one result (an entry with several says nothing)
                meta = entry.data.get("toolUseResult") if results_here == 1 else None
                answered.stopped = _stopped(block, meta, entry.data)
                answered.edited = isinstance(meta, dict) and meta.get("userModified") is True
                answered.self_timed = None if answered.stopped else _self_timed(meta)
    out.turns = list(turns.values())
    if skipped:
        out.problems.append(f"{skipped['entries']} sidechain (subagent) entries with {skipped['calls']} tool calls left out "
                            "(include_sidechains=True replays them)")
    missing = [c for c in out.calls if not c.answered]
    if missing:
        names = ", ".join(f"{c.name} {c.tool_use_id}" for c in missing[:3]) + (" ..." if len(missing) > 3 else "")
        out.problems.append(f"{len(missing)} tool calls have no tool_result (the session ended or was cut first): {names}; "
                            "they are decided and partitioned, but have no duration")
    if orphans:
        out.problems.append(f"{len(orphans)} tool_results answer a tool_use the file does not hold "
                            f"({', '.join(orphans[:3])}{' ...' if len(orphans) > 3 else ''}); ignored")
    if bad_times:
        out.problems.append(f"{bad_times} entries have no readable timestamp; their calls have no duration")
    return out
