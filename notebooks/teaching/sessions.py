"""Checkers for chapters 10-13: the learner's version against the rule, on seeded random inputs.

* ``check_completed_calls`` (chapter 10): when a call streamed in OpenAI's Chat Completions
  chunks is complete (a later ``index`` starts, or the choice finishes).
* ``check_is_deferred`` (chapter 11): Claude Code's ``isDeferredTool`` order (reference §7):
  ``alwaysLoad`` first, then MCP, then ToolSearch itself, then the tool's ``shouldDefer``.
* ``check_main_chain`` (chapter 12): the conversation a JSONL transcript holds, the
  ``parentUuid`` chain that ends at its last user or assistant entry.
* ``check_makespan`` (chapter 13): how long one batch takes when its calls start in order,
  at most ``cap`` at a time.

Each ``reference_*`` function is the rule the checker compares with; the tests check it
against the library (``ChunkTranslator``, ``ToolRegistry.is_deferred``, ``read_transcript``,
the replay's batch time).
"""

from __future__ import annotations

import base64
import heapq
import json
import random
import re
from typing import Any, Callable

from . import Picture, svg_to_png
from .checks import Verdict, run_check

__all__ = [
    "check_completed_calls", "reference_completed_calls", "random_chunks", "describe_chunks",
    "check_is_deferred", "reference_is_deferred", "random_tools",
    "check_main_chain", "reference_main_chain", "random_transcript", "messages_of",
    "check_makespan", "reference_makespan", "ChartPicture", "chart_picture",
]

SEED = 25


# -- chapter 10: when is a streamed OpenAI tool call complete? ---------------------------------
def reference_completed_calls(chunks: list[dict[str, Any]]) -> list[tuple[int, str, str, str]]:
    """``(chunk number, id, name, arguments)`` for each call, in the order the calls become complete."""
    done: list[tuple[int, str, str, str]] = []
    calls: dict[int, dict[str, Any]] = {}
    open_index: int | None = None
    for number, chunk in enumerate(chunks):
        choice = chunk["choices"][0]
        for delta in choice["delta"].get("tool_calls") or []:
            index = delta["index"]
            if index not in calls:
                if open_index is not None:
                    call = calls[open_index]
                    done.append((number, call["id"], call["name"], call["arguments"]))
                calls[index] = {"id": delta.get("id", ""), "name": "", "arguments": ""}
                open_index = index
            function = delta.get("function") or {}
            calls[index]["name"] += function.get("name") or ""
            calls[index]["arguments"] += function.get("arguments") or ""
        if choice.get("finish_reason"):
            if open_index is not None:
                call = calls[open_index]
                done.append((number, call["id"], call["name"], call["arguments"]))
            break
    return done


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def random_chunks(rng: random.Random) -> list[dict[str, Any]]:
    """One answer as Chat Completions chunks: some text, then 0-4 calls, arguments in pieces."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if rng.random() < 0.6:
        chunks += [_chunk({"content": word}) for word in rng.choice([["Let me ", "look."], ["Checking."]])]
    names = ["Grep", "Read", "Glob", "Bash", "Edit"]
    for index in range(rng.randint(0, 4)):
        name = rng.choice(names)
        args = json.dumps({"pattern": rng.choice(["load", "def ", "TODO"])} if name != "Read" else {"file_path": "app.py"})
        cut = sorted(rng.sample(range(1, len(args)), min(len(args) - 1, rng.randint(0, 3))))
        pieces = [args[a:b] for a, b in zip([0, *cut], [*cut, len(args)])]
        first = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": ""}}
        if rng.random() < 0.3 and chunks[-1]["choices"][0]["delta"].get("tool_calls"):
            chunks[-1]["choices"][0]["delta"]["tool_calls"].append(first)  # the same chunk ends one call, starts the next
        else:
            chunks.append(_chunk({"tool_calls": [first]}))
        for piece in pieces:
            chunks.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    finish = "tool_calls" if any(c["choices"][0]["delta"].get("tool_calls") for c in chunks) else "stop"
    if rng.random() < 0.5 and len(chunks) > 1:
        chunks[-1]["choices"][0]["finish_reason"] = finish  # the last piece and the finish in one chunk
    else:
        chunks.append(_chunk({}, finish))
    return chunks


def describe_chunks(chunks: list[dict[str, Any]]) -> str:
    """A short line per stream: what each chunk carries."""
    parts = []
    for number, chunk in enumerate(chunks):
        choice = chunk["choices"][0]
        bits = []
        if choice["delta"].get("content"):
            bits.append("text")
        for d in choice["delta"].get("tool_calls") or []:
            bits.append(f"index {d['index']} starts ({d['function']['name']})" if d.get("id") else f"index {d['index']} args")
        if choice.get("finish_reason"):
            bits.append(f"finish_reason={choice['finish_reason']}")
        parts.append(f"{number}: " + (" + ".join(bits) or "role"))
    return "[" + "; ".join(parts) + "]"


def check_completed_calls(fn: Callable[[list[dict[str, Any]]], Any], cases: int = 150) -> Verdict:
    """Compare ``fn(chunks)`` with the rule on ``cases`` seeded random streams."""
    rng = random.Random(SEED)
    streams = [random_chunks(rng) for _ in range(cases)]

    def problems(chunks: list[dict[str, Any]]) -> list[str]:
        want = reference_completed_calls(chunks)
        got = fn(chunks)
        got = [tuple(item) for item in got] if isinstance(got, (list, tuple)) else got
        if got == want:
            return []
        stream = describe_chunks(chunks)
        if not isinstance(got, list) or any(len(item) != 4 for item in got):
            return [f"stream {stream}: your function gave {got!r:.120}; it should give a list of "
                    f"(chunk, id, name, arguments) tuples, here {want}"]
        if [g[1] for g in got] != [w[1] for w in want]:
            return [f"stream {stream}: you named the calls {[g[1] for g in got]} (in that order); "
                    f"the calls completed are {[w[1] for w in want]}"]
        for g, w in zip(got, want):
            if g[0] != w[0]:
                deltas = chunks[w[0]]["choices"][0]["delta"].get("tool_calls") or []
                later_starts = any(d.get("id") and d["index"] != _index_of(chunks, w[1]) for d in deltas)
                why = "a later index starts there" if later_starts else "the choice finishes there (finish_reason)"
                early = (" (too early: until something else begins, another piece of its arguments may still come)"
                         if g[0] < w[0] else "")
                return [f"stream {stream}: you said {w[1]} is complete at chunk {g[0]}{early}; it is complete "
                        f"at chunk {w[0]}, because {why}"]
            if g[1:] != w[1:]:
                return [f"stream {stream}: {w[1]} came out as name {g[2]!r}, arguments {g[3]!r}; "
                        f"the pieces joined give name {w[2]!r}, arguments {w[3]!r}"]
        return [f"stream {stream}: you gave {got}; it should be {want}"]

    return run_check("completed_calls", streams, problems, agree="agree with the rule")


def _index_of(chunks: list[dict[str, Any]], call_id: str) -> int | None:
    for chunk in chunks:
        for d in chunk["choices"][0]["delta"].get("tool_calls") or []:
            if d.get("id") == call_id:
                return d["index"]
    return None


# -- chapter 11: which tools are deferred (Claude Code's isDeferredTool, §7) -------------------
def reference_is_deferred(tool: dict[str, Any]) -> bool:
    """Claude Code's order: alwaysLoad, then MCP, then ToolSearch itself, then shouldDefer."""
    if tool.get("always_load") is True:
        return False
    if tool.get("is_mcp"):
        return True
    if tool["name"] == "ToolSearch":
        return False
    return tool.get("should_defer") is True


def random_tools(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Tools as small dicts: built-ins from §7's lists and MCP tools, with and without alwaysLoad."""
    builtins = [("Read", False), ("Edit", False), ("Bash", False), ("Grep", False), ("ToolSearch", False),
                ("WebFetch", True), ("TodoWrite", True), ("NotebookEdit", True), ("AskUserQuestion", True)]
    out: list[dict[str, Any]] = []
    for _ in range(count):
        if rng.random() < 0.5:
            server, action = rng.choice(["git", "db", "slack"]), rng.choice(["status", "query", "send", "log"])
            tool = {"name": f"mcp__{server}__{action}", "is_mcp": True, "should_defer": False}
        else:
            name, defer = rng.choice(builtins)
            tool = {"name": name, "is_mcp": False, "should_defer": defer}
        roll = rng.random()
        if roll < 0.35:
            tool["always_load"] = True
        elif roll < 0.5:
            tool["always_load"] = False
        out.append(tool)
    return out


# ToolSearch with shouldDefer true (no built-in says so, but a tool object may): the ToolSearch
# step comes before shouldDefer, so these stay loaded; without them that step is never tested.
TOOLSEARCH_CASES: list[dict[str, Any]] = [
    {"name": "ToolSearch", "is_mcp": False, "should_defer": True},
    {"name": "ToolSearch", "is_mcp": False, "should_defer": True, "always_load": False},
]


def _tool_words(tool: dict[str, Any]) -> str:
    bits = ["MCP" if tool.get("is_mcp") else "built-in", f"shouldDefer {str(bool(tool.get('should_defer'))).lower()}"]
    if "always_load" in tool:
        bits.append(f"alwaysLoad {str(tool['always_load']).lower()}")
    return f"{tool['name']} ({', '.join(bits)})"


def check_is_deferred(fn: Callable[[dict[str, Any]], Any], cases: int = 120) -> Verdict:
    """Compare ``fn(tool)`` with Claude Code's ``isDeferredTool`` on seeded random tools."""
    tools = random_tools(random.Random(SEED), cases) + [dict(t) for t in TOOLSEARCH_CASES]

    def problems(tool: dict[str, Any]) -> list[str]:
        want, got = reference_is_deferred(tool), fn(dict(tool))
        if got is want or (isinstance(got, bool) and got == want):
            return []
        if not isinstance(got, bool):
            return [f"{_tool_words(tool)}: your function gave {got!r}, not True or False; it should give {want}"]
        if tool.get("always_load") is True:
            why = "alwaysLoad is checked first: its schema is always sent"
        elif tool.get("is_mcp"):
            why = "an MCP tool without alwaysLoad is deferred whatever its shouldDefer says"
        elif tool["name"] == "ToolSearch":
            why = ("ToolSearch, the way to load the others, is never deferred: that step comes before "
                   "shouldDefer" if tool.get("should_defer") else
                   "ToolSearch, the way to load the others, is never deferred")
        else:
            why = "a built-in is deferred exactly when its shouldDefer is true"
        said = "deferred" if got else "not deferred (schema sent)"
        should = "deferred" if want else "not deferred (schema sent)"
        return [f"{_tool_words(tool)}: you said {said}; Claude Code says {should}: {why}"]

    return run_check("is_deferred", tools, problems, agree="agree with Claude Code's isDeferredTool")


# -- chapter 12: the conversation a transcript holds -------------------------------------------
def reference_main_chain(entries: list[dict[str, Any]]) -> list[str]:
    """The uuids of the user and assistant entries on the chain ending at the last of them, oldest first."""
    talk = [e for e in entries if e.get("type") in ("user", "assistant") and not e.get("isSidechain")]
    if not talk:
        return []
    by_uuid = {e["uuid"]: e for e in entries if e.get("uuid")}
    chain: list[str] = []
    current: dict[str, Any] | None = talk[-1]
    seen: set[str] = set()
    while current is not None and current["uuid"] not in seen:
        seen.add(current["uuid"])
        if current.get("type") in ("user", "assistant") and not current.get("isSidechain"):
            chain.append(current["uuid"])
        parent = current.get("parentUuid")
        current = by_uuid.get(parent) if parent else None
    return chain[::-1]


def random_transcript(rng: random.Random) -> list[dict[str, Any]]:
    """Entries in file order: a main chain, side branches (a retried answer), system entries, a sidechain."""
    entries: list[dict[str, Any]] = []
    count = 0

    def add(kind: str, parent: str | None, **extra: Any) -> str:
        nonlocal count
        count += 1
        uuid = f"u{count:02}"
        entries.append({"type": kind, "uuid": uuid, "parentUuid": parent, **extra})
        return uuid

    tip = add("user", None)
    for step in range(rng.randint(2, 7)):
        kind = "assistant" if step % 2 == 0 else "user"
        if rng.random() < 0.3:  # an abandoned branch off the current tip
            branch = add("assistant", tip)
            if rng.random() < 0.5:
                add("user", branch)
        if rng.random() < 0.2:
            tip = add("system", tip)
        if rng.random() < 0.15:
            add("user", None, isSidechain=True)
        tip = add(kind, tip)
    if rng.random() < 0.25:  # a subagent's entries written after the main chain's last one
        side = add("user", None, isSidechain=True)
        if rng.random() < 0.5:
            add("assistant", side, isSidechain=True)
    if rng.random() < 0.3:
        add("summary", None)  # written after the chain's last entry, but no message
    return entries


def messages_of(entries: list[dict[str, Any]], uuids: list[str]) -> list[dict[str, Any]]:
    """The API messages of the entries named (in that order): one message per role run, blocks merged."""
    by_uuid = {e["uuid"]: e for e in entries if e.get("uuid")}
    merged: list[dict[str, Any]] = []
    for uuid in uuids:
        message = by_uuid[uuid]["message"]
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if merged and merged[-1]["role"] == message["role"]:
            previous = merged[-1]["content"]
            merged[-1]["content"] = ([{"type": "text", "text": previous}] if isinstance(previous, str) else previous) + blocks
        else:
            merged.append({"role": message["role"], "content": content if isinstance(content, str) else blocks})
    return merged


def _turn_parts(trace: Any, turn: int) -> tuple[Any, list[tuple[float, str]], float | None, float | None]:
    """One turn of an agent's trace: its calls' events, when each call's block was complete,
    when the turn's answer started and finished streaming."""
    from nbtoolsched.events import ModelBlock, ModelFinished, TurnStarted
    from nbtoolsched import Trace

    events = trace.events
    arrivals = [(e.time, e.tool_use_id) for e in events
                if isinstance(e, ModelBlock) and e.turn == turn and e.tool_use_id]
    ids = {i for _, i in arrivals}
    start = next((e.time for e in events if isinstance(e, TurnStarted) and e.turn == turn), None)
    end = next((e.time for e in events if isinstance(e, ModelFinished) and e.turn == turn), None)
    calls = Trace(e for e in events if getattr(e, "tool_use_id", None) in ids and not isinstance(e, ModelBlock))
    return calls, arrivals, start, end


def turn_timeline(trace: Any, turn: int, title: str = "") -> Picture:
    """One turn of an ``%%agent`` cell as a timeline: the answer streaming above (a tick when
    each tool_use block was complete), its calls below, batches as that turn numbered them."""
    from . import timeline

    calls, arrivals, start, end = _turn_parts(trace, turn)
    return timeline(calls, title or f"turn {turn}", arrivals=arrivals, stream_start=start, stream_end=end)


def turn_facts(trace: Any, turn: int) -> str:
    """What a turn's timeline shows that does not depend on timing."""
    calls, arrivals, _, _ = _turn_parts(trace, turn)
    states = {s.tool_use_id: s for s in calls.states()}
    lines = [f"turn {turn}:"]
    for when, tool_use_id in arrivals:
        s = states[tool_use_id]
        after = s.started_at is not None and s.started_at >= when
        lines.append(f"  {s.tool_name:5} batch {s.batch}  {s.status:9}  started after its own block was complete: {after}")
    return "\n".join(lines)


def _entry_words(entry: dict[str, Any]) -> str:
    parent = f"parent {entry['parentUuid']}" if entry.get("parentUuid") else "no parent"
    side = ", sidechain" if entry.get("isSidechain") else ""
    return f"{entry['uuid']} ({entry['type']}, {parent}{side})"


def check_main_chain(fn: Callable[[list[dict[str, Any]]], Any], cases: int = 120) -> Verdict:
    """Compare ``fn(entries)`` with the chain rule on seeded random transcripts."""
    rng = random.Random(SEED)
    files = [random_transcript(rng) for _ in range(cases)]

    def problems(entries: list[dict[str, Any]]) -> list[str]:
        want = reference_main_chain(entries)
        got = fn([dict(e) for e in entries])
        got = list(got) if isinstance(got, (list, tuple)) else got
        if got == want:
            return []
        shape = ", ".join(_entry_words(e) for e in entries if e.get("uuid"))
        if not isinstance(got, list):
            return [f"entries [{shape}]: your function gave {got!r:.80}; it should give the uuids {want}"]
        extra = [u for u in got if u not in want]
        missing = [u for u in want if u not in got]
        if extra:
            kinds = {e["uuid"]: e for e in entries if e.get("uuid")}
            what = kinds.get(extra[0], {})
            why = ("a system entry: on the chain, but not a message" if what.get("type") == "system"
                   else "a sidechain (subagent) entry" if what.get("isSidechain")
                   else "on a branch the conversation left (not an ancestor of the last message)")
            return [f"entries [{shape}]: you kept {extra[0]}, which is {why}; the chain is {want}"]
        if missing:
            return [f"entries [{shape}]: you left out {missing[0]}; the chain ending at {want[-1]} is {want}"]
        return [f"entries [{shape}]: you gave {got}; oldest first it is {want}"]

    return run_check("main_chain", files, problems, agree="agree with the parentUuid chain")


# -- chapter 13: the report's charts as pictures, and how long one batch takes --------------------
class ChartPicture(Picture):
    """A report chart (``nbtoolsched.scale`` ``BarChart``) as SVG with a PNG copy.

    The chart's SVG follows JupyterLab's theme through CSS variables with fallbacks
    (``var(--jp-layout-color0, #ffffff)``), which cairosvg cannot read; the PNG is drawn
    from a copy with each variable replaced by its fallback colour."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"image/svg+xml": self.svg, "text/plain": repr(self)}
        png = svg_to_png(re.sub(r"var\(--[\w-]+,\s*([^()]+?)\s*\)", r"\1", self.svg))
        if png is not None:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle


def chart_picture(chart: Any, title: str | None = None) -> ChartPicture:
    """``report.prompts_chart()`` (or any of the report's charts) as a picture."""
    return ChartPicture(chart.to_svg(), title or chart.title)



def reference_makespan(times: list[float], cap: int) -> float:
    """Calls started in order, at most ``cap`` at a time, each in the first slot that frees."""
    if not times:
        return 0.0
    slots = [0.0] * max(1, min(cap, len(times)))
    heapq.heapify(slots)
    for t in times:
        heapq.heappush(slots, heapq.heappop(slots) + t)
    return max(slots)


def check_makespan(fn: Callable[[list[float], int], Any], cases: int = 200) -> Verdict:
    """Compare ``fn(times, cap)`` with the rule on seeded random batches (durations in tenths of a second)."""
    rng = random.Random(SEED)
    batches = [([rng.randint(1, 40) / 10 for _ in range(rng.randint(0, 7))], rng.choice([1, 1, 2, 3, 10])) for _ in range(cases)]

    def problems(case: tuple[list[float], int]) -> list[str]:
        times, cap = case
        want = reference_makespan(times, cap)
        got = fn(list(times), cap)
        if isinstance(got, (int, float)) and abs(got - want) < 1e-9:
            return []
        if not isinstance(got, (int, float)):
            return [f"times {times} with cap {cap}: your function gave {got!r}; it should give a number, {want:g}"]
        hint = ""
        if abs(got - sum(times)) < 1e-9 and cap > 1:
            hint = " (that equals the sum of all the times: the batch with cap 1)"
        elif times and abs(got - max(times)) < 1e-9:
            # the batch never takes less than its longest call: here some call waits for a slot
            hint = (f" (that equals the longest call's time, {max(times):g}; here the cap ({cap}) makes "
                    f"some call wait for a slot, so the batch ends later)")
        return [f"times {times} with cap {cap}: you gave {got:g}{hint}; started in order, each in the "
                f"first slot that frees, the batch takes {want:g}"]

    return run_check("makespan", batches, problems, agree="agree with the replay's rule")
