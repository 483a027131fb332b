"""Checkers for chapters 07 and 09: the streaming executor's rules, on seeded random states.

* ``check_process_queue`` (chapter 07): which queued calls start now (Claude Code's
  ``canExecuteTool`` and ``processQueue``, reference §1.4).
* ``check_completed_results`` (chapter 07): what ``getCompletedResults`` may hand out now:
  progress at once, results in block order up to a still-running unsafe call (§1.9).
* ``check_sibling_cancellation`` (chapter 07): which calls get the sibling-error text when
  a call's result is an error, and that text (only a Bash error cancels siblings, §1.5, §1.7).
* ``check_bubbling`` (chapter 09): which nodes of the abort tree end aborted, with which
  reason, when some of them are aborted (§1.1, §1.5, §1.8).

Each ``reference_*`` function is the rule the checker compares with; the tests check it
against the library (``StreamingToolExecutor`` and ``AbortSignal``). Pictures that depend
on no time: ``order_picture`` (finished vs handed-out order) and ``outcome_picture``
(what each call of one answer got).
"""

from __future__ import annotations

import html
import random
from typing import Any, Callable, Iterator

from . import Picture
from .checks import Verdict, run_check

__all__ = [
    "check_process_queue", "reference_process_queue", "random_runs",
    "check_completed_results", "reference_completed_results",
    "check_sibling_cancellation", "reference_sibling_cancellation", "claude_code_description", "random_answers",
    "check_bubbling", "reference_bubbling", "random_abort_cases", "bubbling_steps",
    "order_picture", "outcome_picture", "describe_tools",
]

SEED = 7
SAFE_WORD = {True: "safe", False: "unsafe"}


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """``[0 safe executing, 1 unsafe queued (progress 2)]``: one state in a line."""
    parts = []
    for i, t in enumerate(tools):
        extra = f" (progress {t['progress']})" if t.get("progress") else ""
        parts.append(f"{i} {SAFE_WORD[t['safe']]} {t['status']}{extra}")
    return "[" + ", ".join(parts) + "]"


# -- chapter 07: which queued calls start now (§1.4) ------------------------------------------
def reference_process_queue(tools: list[dict[str, Any]]) -> list[int]:
    """The indexes Claude Code's ``processQueue`` starts now, in order.

    Walk the calls in block order, skipping any that is not queued. A call may start when
    nothing is executing, or when it is safe and every executing call is safe (those it
    started a moment ago in this walk count). A queued *unsafe* call that may not start
    stops the walk (nothing may jump past it); a queued safe one that may not is skipped.
    """
    executing = [t["safe"] for t in tools if t["status"] == "executing"]
    started: list[int] = []
    for i, t in enumerate(tools):
        if t["status"] != "queued":
            continue
        if not executing or (t["safe"] and all(executing)):
            started.append(i)
            executing.append(t["safe"])
        elif not t["safe"]:
            break
    return started


def random_runs(rng: random.Random, runs: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """States a real executor passes through: ``(what just happened, state)``.

    Calls arrive one by one (a few are answered at once, as Claude Code answers a call to
    an unknown tool), executing calls finish in a random order and report progress, and
    drains hand results out. Each state is the one right before the executor acts
    (``"add"``/``"finish"``: before the walk; ``"drain"``: before a drain).
    """
    for _ in range(runs):
        total = rng.randint(1, 7)
        tools: list[dict[str, Any]] = []
        while True:
            executing = [i for i, t in enumerate(tools) if t["status"] == "executing"]
            moves = (["add"] if len(tools) < total else []) + (["finish", "progress"] if executing else [])
            moves += ["drain"] if any(t["status"] == "completed" or t["progress"] for t in tools) else []
            if not moves:
                break
            move = rng.choice(moves)
            if move == "add":
                if rng.random() < 0.12:  # an unknown tool: answered at once, counted safe
                    tools.append({"safe": True, "status": "completed", "progress": 0})
                    continue
                tools.append({"safe": rng.random() < 0.6, "status": "queued", "progress": 0})
            elif move == "finish":
                tools[rng.choice(executing)]["status"] = "completed"
            elif move == "progress":
                tools[rng.choice(executing)]["progress"] += rng.randint(1, 2)
                continue
            else:
                yield "drain", [dict(t) for t in tools]
                for kind, i in reference_completed_results(tools):
                    if kind == "result":
                        tools[i]["status"] = "yielded"
                    else:
                        tools[i]["progress"] = 0
                continue
            yield move, [dict(t) for t in tools]
            for i in reference_process_queue(tools):
                tools[i]["status"] = "executing"


def check_process_queue(fn: Callable[[list[dict[str, Any]]], Any], runs: int = 60) -> Verdict:
    """Compare ``fn(tools)`` (the indexes it starts now) with §1.4 on seeded random states."""
    rng = random.Random(SEED)
    states = [tools for move, tools in random_runs(rng, runs) if move != "drain"]

    def problems(tools: list[dict[str, Any]]) -> list[str]:
        want = reference_process_queue(tools)
        got = fn([dict(t) for t in tools])
        got = list(got) if isinstance(got, (list, tuple)) else got
        if got == want:
            return []
        state = describe_tools(tools)
        if not isinstance(got, list) or not all(isinstance(i, int) for i in got):
            return [f"calls {state}: your function gave {got!r:.80}; it should give the indexes that start now, {want}"]
        return [f"calls {state}: you started {got}; Claude Code starts {want}: {_why_start(tools, got, want)}"]

    return run_check("process_queue", states, problems, agree="agree with Claude Code's processQueue")


def _why_start(tools: list[dict[str, Any]], got: list[int], want: list[int]) -> str:
    executing = [i for i, t in enumerate(tools) if t["status"] == "executing"]
    for i in sorted(set(got) | set(want)):
        if i in want and i not in got:
            if tools[i]["status"] != "queued":
                break
            return f"call {i} may start now (nothing that runs stops it)"
        if i in got and i not in want:
            t = tools[i]
            if t["status"] != "queued":
                return f"call {i} is {t['status']}, not queued: only queued calls start"
            earlier = [j for j in want if j < i]
            running = executing + earlier
            blocked = next((j for j in range(i) if tools[j]["status"] == "queued" and not tools[j]["safe"]
                            and j not in want), None)
            if blocked is not None:
                return (f"call {blocked} is unsafe and cannot start yet, so the walk stops there: "
                        f"call {i}, after it, may not jump past it")
            note = f" (calls {earlier} started a moment ago in this same walk)" if earlier else ""
            if not t["safe"] and running:
                return f"call {i} is unsafe: it starts only when nothing runs, and calls {sorted(running)} run{note}"
            unsafe = [j for j in sorted(running) if not tools[j]["safe"]]
            if t["safe"] and unsafe:
                return (f"call {i} is safe, but unsafe call {unsafe[0]} is running{note}: "
                        "a safe call starts only beside safe ones")
            break
    return f"the indexes differ (you: {got}, Claude Code: {want})"


# -- chapter 07: what getCompletedResults hands out now (§1.9) ----------------------------------
def reference_completed_results(tools: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """``("progress", i)`` once per waiting progress message and ``("result", i)``, in the
    order Claude Code's ``getCompletedResults`` yields them.

    Walk in block order: a call's waiting progress always comes out; a call already yielded
    is passed; a completed one's result comes out (it becomes yielded); an executing
    *unsafe* call stops the walk (after its own progress). An executing safe call does not
    stop it: a later call's finished result overtakes it.
    """
    out: list[tuple[str, int]] = []
    for i, t in enumerate(tools):
        out += [("progress", i)] * t.get("progress", 0)
        if t["status"] == "yielded":
            continue
        if t["status"] == "completed":
            out.append(("result", i))
        elif t["status"] == "executing" and not t["safe"]:
            break
    return out


def check_completed_results(fn: Callable[[list[dict[str, Any]]], Any], runs: int = 80) -> Verdict:
    """Compare ``fn(tools)`` with §1.9 on seeded random states a real executor passes through."""
    rng = random.Random(SEED + 1)
    states = [tools for move, tools in random_runs(rng, runs) if move == "drain"]

    def problems(tools: list[dict[str, Any]]) -> list[str]:
        want = reference_completed_results(tools)
        got = fn([dict(t) for t in tools])
        got = [tuple(item) for item in got] if isinstance(got, (list, tuple)) else got
        if got == want:
            return []
        state = describe_tools(tools)
        if not isinstance(got, list) or any(len(g) != 2 for g in got):
            return [f"calls {state}: your function gave {got!r:.80}; it should give (kind, index) pairs, here {want}"]
        return [f"calls {state}: you handed out {_items(got)}; Claude Code hands out {_items(want)}: "
                f"{_why_order(tools, got, want)}"]

    return run_check("completed_results", states, problems, agree="agree with Claude Code's getCompletedResults")


def _items(items: list[tuple[str, int]]) -> str:
    return "[" + ", ".join(f"{k} {i}" for k, i in items) + "]" if items else "nothing"


def _why_order(tools: list[dict[str, Any]], got: list[tuple[str, int]], want: list[tuple[str, int]]) -> str:
    barrier = next((i for i, t in enumerate(tools) if t["status"] == "executing" and not t["safe"]), None)
    for item in want:
        if item not in got:
            kind, i = item
            if kind == "progress":
                if i == barrier:
                    return f"call {i}'s own progress comes out before the walk stops at it"
                return f"call {i}'s progress comes out at once, even before earlier calls' results"
            running_safe = [j for j in range(i) if tools[j]["status"] == "executing" and tools[j]["safe"]]
            if running_safe:
                return (f"call {i} has finished; call {running_safe[0]} before it is safe and still running, "
                        "and only a running *unsafe* call holds later results back")
            queued = [j for j in range(i) if tools[j]["status"] == "queued"]
            if queued:
                return f"call {i} has finished; call {queued[0]} before it is only queued, which holds nothing back"
            return f"call {i} has finished and nothing running and unsafe comes before it"
    for item in got:
        if item not in want:
            kind, i = item
            if tools[i]["status"] == "yielded" and kind == "result":
                return f"call {i} was already handed out (yielded): it is passed over"
            if barrier is not None and i > barrier:
                return f"call {barrier} is unsafe and still running: the walk stops there, nothing after it comes out"
            if kind == "result":
                return f"call {i} is {tools[i]['status']}: it has no result yet"
            return f"call {i} has no such progress waiting"
    return "the same items, in another order: walk the calls in block order, each call's progress before its result"


# -- chapter 07: sibling cancellation (§1.5, §1.7) -------------------------------------------------
def claude_code_description(name: str, input: dict[str, Any]) -> str:
    """Claude Code's ``getToolDescription``: ``Bash(npm test)``, the summary cut to 40 characters plus '…'."""
    summary = next((input[k] for k in ("command", "file_path", "pattern") if input.get(k) is not None), "")
    if isinstance(summary, str) and summary:
        return f"{name}({summary[:40] + chr(0x2026) if len(summary) > 40 else summary})"
    return name


def reference_sibling_cancellation(calls: list[dict[str, Any]], failed: int) -> dict[int, str]:
    """The calls that get Claude Code's sibling-error text when ``calls[failed]``'s result is an
    error, and that text (``<tool_use_error>Cancelled: parallel tool call Bash(...) errored</tool_use_error>``).

    Only a Bash error cancels siblings. Then every *other* call still queued (it gets the text
    when it comes to start, and never runs) or executing (at its next update it stops) gets
    it; calls already completed or yielded keep their results; the failed call keeps its own.
    """
    if calls[failed]["name"] != "Bash":
        return {}
    desc = claude_code_description("Bash", calls[failed]["input"])
    msg = f"Cancelled: parallel tool call {desc} errored" if desc else "Cancelled: parallel tool call errored"
    text = f"<tool_use_error>{msg}</tool_use_error>"
    return {i: text for i, c in enumerate(calls) if i != failed and c["status"] in ("queued", "executing")}


COMMANDS = ["cat missing.txt", "mkdir out && cp build/app.js out/", "npm test", "ls /nowhere",
            "python -m pytest tests/unit/test_scheduler.py -x -q --maxfail=1", "git push origin main", ""]


def _random_call(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "Bash":
        command = rng.choice(COMMANDS)
        return {"name": name, "input": {"command": command} if command else {}}  # {}: an InputValidationError
    if name in ("Read", "Edit", "Write"):
        return {"name": name, "input": {"file_path": rng.choice(["app.py", "src/scheduler/engine/executor_streaming.py"])}}
    if name in ("Grep", "Glob"):
        return {"name": name, "input": {"pattern": rng.choice(["TODO", "*.py"])}}
    return {"name": name, "input": {"url": "https://example.com", "prompt": "summary"}}


def random_answers(rng: random.Random, count: int) -> list[tuple[list[dict[str, Any]], int]]:
    """Answers of 2-5 calls at the moment one of them (executing) returns an error result."""
    names = ["Bash", "Bash", "Read", "Grep", "Glob", "WebFetch", "Edit", "Write"]
    cases = []
    for _ in range(count):
        calls = [_random_call(rng, rng.choice(names)) for _ in range(rng.randint(2, 5))]
        failed = rng.randrange(len(calls))
        if rng.random() < 0.6:
            calls[failed] = _random_call(rng, "Bash")
        for i, c in enumerate(calls):
            c["status"] = "executing" if i == failed else rng.choice(["queued", "executing", "completed", "yielded"])
        cases.append((calls, failed))
    return cases


def _call_words(calls: list[dict[str, Any]], failed: int) -> str:
    parts = []
    for i, c in enumerate(calls):
        what = "ERRORED" if i == failed else c["status"]
        parts.append(f"{i} {claude_code_description(c['name'], c['input'])} {what}")
    return "[" + ", ".join(parts) + "]"


def check_sibling_cancellation(fn: Callable[[list[dict[str, Any]], int], Any], cases: int = 150) -> Verdict:
    """Compare ``fn(calls, failed)`` (``{index: text}``) with §1.5 on seeded random answers."""
    answers = random_answers(random.Random(SEED + 2), cases)

    def problems(case: tuple[list[dict[str, Any]], int]) -> list[str]:
        calls, failed = case
        want = reference_sibling_cancellation(calls, failed)
        got = fn([dict(c, input=dict(c["input"])) for c in calls], failed)
        if got == want:
            return []
        shown = _call_words(calls, failed)
        if not isinstance(got, dict):
            return [f"answer {shown}: your function gave {got!r:.80}; it should give a dict index -> text, here {want}"]
        name = calls[failed]["name"]
        if not want and name == "Bash":  # a Bash failure whose siblings had all finished already
            return [f"answer {shown}: you cancelled {sorted(got)}; Claude Code cancels nothing here: a Bash error "
                    f"cancels only the siblings still queued or running, and finished calls (completed or "
                    f"yielded) keep their results; the failed call keeps its own error"]
        if not want:
            return [f"answer {shown}: you cancelled {sorted(got)}; Claude Code cancels nothing: only a Bash error "
                    f"cancels siblings (bash commands form implicit chains; a failed {name} is independent of the rest)"]
        missing = [i for i in want if i not in got]
        extra = [i for i in got if i not in want]
        if missing:
            i = missing[0]
            how = ("it was still queued: it gets the text when it comes to start, and never runs"
                   if calls[i]["status"] == "queued" else "it was running: at its next update it stops with the text")
            return [f"answer {shown}: call {i} should get the sibling error ({how})"]
        if extra:
            i = extra[0]
            why = ("it is the call that failed: it keeps its own error" if i == failed
                   else f"it had already {calls[i]['status']}: its result stands")
            return [f"answer {shown}: call {i} gets no sibling error: {why}"]
        i = next(i for i in want if got[i] != want[i])
        hint = ""
        desc = claude_code_description("Bash", calls[failed]["input"])
        if desc.endswith("\u2026)"):
            hint = " (the summary is cut to 40 characters, then '…')"
        elif desc == "Bash":
            hint = " (this Bash call had no command: the description is the name alone)"
        return [f"answer {shown}: call {i}'s text is {got[i]!r:.140}; it should be {want[i]!r}{hint}"]

    return run_check("sibling_cancellation", answers, problems, agree="agree with Claude Code's executor")


# -- chapter 09: the abort tree's bubbling (§1.1, §1.5, §1.8) --------------------------------------
def _tree_walk(tools: list[str], aborts: list[tuple[str, str]], discarded: bool
               ) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    below: dict[str, list[str]] = {"query": ["siblings"], "siblings": list(tools)}
    reasons: dict[str, str] = {}
    steps: list[tuple[str, str, str]] = []

    def abort(node: str, why: str, how: str) -> None:
        if node in reasons:  # an aborted controller stays as it is
            return
        reasons[node] = why
        steps.append((node, why, how))
        for child in below.get(node, []):  # a child aborts with its parent's reason
            abort(child, why, f"from {node}")
        if node in tools and why != "sibling_error" and "query" not in reasons and not discarded:
            abort("query", why, f"bubbled up from {node}")

    for node, why in aborts:
        abort(node, why, "aborted")
    return reasons, steps


def reference_bubbling(tools: list[str], aborts: list[tuple[str, str]], discarded: bool = False) -> dict[str, str]:
    """Every node that ends aborted, with its reason, in Claude Code's tree query -> siblings -> tools.

    Aborting a node aborts everything below it with that reason; a node already aborted
    stays as it is. A tool's abort reaches the query (toolUseContext.abortController), and
    from there everything, only when its reason is not ``sibling_error``, the query is not
    aborted already and the executor was not discarded. The siblings node never bubbles.
    """
    return _tree_walk(tools, aborts, discarded)[0]


def bubbling_steps(tools: list[str], aborts: list[tuple[str, str]], discarded: bool = False) -> list[tuple[str, str, str]]:
    """``(node, reason, how)`` in the order the nodes abort: for a picture of the bubbling."""
    return _tree_walk(tools, aborts, discarded)[1]


def random_abort_cases(rng: random.Random, count: int) -> list[tuple[list[str], list[tuple[str, str]], bool]]:
    """Trees of 1-4 tools; 1-3 aborts (the query: Esc or an interrupt; the siblings node: a
    sibling error, the only reason Claude Code gives it; a tool: a rejected prompt, now and
    then another reason); sometimes after ``discard()``."""
    cases = []
    for _ in range(count):
        tools = [f"t{i}" for i in range(1, rng.randint(1, 4) + 1)]
        aborts = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.2:
                aborts.append(("query", rng.choice(["user_abort", "interrupt"])))
            elif roll < 0.45:
                aborts.append(("siblings", "sibling_error"))
            else:
                aborts.append((rng.choice(tools), rng.choice(["user_abort", "user_abort", "sibling_error", "timeout"])))
        cases.append((tools, aborts, rng.random() < 0.2))
    return cases


def check_bubbling(fn: Callable[[list[str], list[tuple[str, str]], bool], Any], cases: int = 200) -> Verdict:
    """Compare ``fn(tools, aborts, discarded)`` (``{node: reason}``) with the rule on seeded random trees."""
    trees = random_abort_cases(random.Random(SEED + 3), cases)

    def problems(case: tuple[list[str], list[tuple[str, str]], bool]) -> list[str]:
        tools, aborts, discarded = case
        want = reference_bubbling(tools, aborts, discarded)
        got = fn(list(tools), list(aborts), discarded)
        if got == want:
            return []
        shown = (f"tools {tools}, aborts {aborts}" + (", after discard()" if discarded else ""))
        if not isinstance(got, dict):
            return [f"{shown}: your function gave {got!r:.80}; it should give a dict node -> reason, here {want}"]
        return [f"{shown}: you gave {got}; it should be {want}: {_why_tree(tools, aborts, discarded, got, want)}"]

    return run_check("bubbling", trees, problems, agree="agree with Claude Code's abort tree")


def _why_tree(tools: list[str], aborts: list[tuple[str, str]], discarded: bool,
              got: dict[str, str], want: dict[str, str]) -> str:
    if "query" in got and "query" not in want:
        for k, (node, why) in enumerate(aborts):
            if node not in tools or why == "sibling_error":
                continue
            before = reference_bubbling(tools, aborts[:k], discarded)
            if node in before:
                return (f"{node} was already aborted ({before[node]}) when it was aborted again with {why}: "
                        "an aborted controller ignores a second abort, so nothing bubbles")
            if discarded:
                return "after discard() nothing bubbles up: the answer is being thrown away"
        return ("sibling_error never reaches the query: it stops this answer's calls (the siblings node), "
                "and the turn goes on")
    if "query" in want and "query" not in got:
        tool = next(n for n, r in aborts if n in tools and r != "sibling_error")
        return (f"{tool}'s abort (reason {want['query']}) bubbles up to the query, as any reason but sibling_error "
                "does, and the query aborts everything below it")
    for node in ["query", "siblings", *tools]:
        if node in want and node not in got:
            up = "siblings" if node in tools else "query"
            return f"{node} is below {up}, which is aborted ({want[up]}): a child aborts with its parent"
        if node in got and node not in want:
            return f"{node} is not aborted: aborting a node reaches only what is below it (and a tool's, the query)"
        if node in want and got.get(node) != want[node]:
            return (f"{node} ends with {want[node]!r}: a node keeps the reason it first aborted with "
                    "(a later abort of an aborted node changes nothing; a child takes its parent's reason)")
    return "the nodes differ"


# -- pictures (no times: only orders and states) -------------------------------------------------
def _svg(width: float, height: float) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'font-family="DejaVu Sans, sans-serif" font-size="11">',
            f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']


def order_picture(finished: list[str], yielded: list[str], title: str = "",
                  labels: dict[str, str] | None = None) -> Picture:
    """Two rows of the same calls: the order they finished, the order they were handed out;
    a line joins each call's two places (a crossing line: a result that was held back)."""
    labels = labels or {}
    box_w, gap, left, top = 96, 14, 92, 34 if title else 10
    n = max(len(finished), len(yielded))
    width = max(left + n * (box_w + gap) + 10, 8 * len(title) + 20)
    row = {"finished": top, "handed out": top + 78}
    out = _svg(width, top + 78 + 44 + 8)
    if title:
        out.append(f'<text x="8" y="20" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    where: dict[str, dict[str, float]] = {}
    for name, order in (("finished", finished), ("handed out", yielded)):
        y = row[name]
        out.append(f'<text x="8" y="{y + 22}" font-weight="bold">{name}</text>')
        for i, key in enumerate(order):
            x = left + i * (box_w + gap)
            where.setdefault(key, {})[name] = x + box_w / 2
            out.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="34" rx="5" fill="#dbeafe" stroke="#1e3a8a"/>'
                       f'<text x="{x + box_w / 2}" y="{y + 15}" text-anchor="middle">{html.escape(key)}</text>'
                       f'<text x="{x + box_w / 2}" y="{y + 28}" text-anchor="middle" font-size="9" fill="#374151">'
                       f'{html.escape(labels.get(key, ""))}</text>')
    for key, xs in where.items():
        if len(xs) == 2:
            moved = finished.index(key) != yielded.index(key) if key in yielded else False
            colour = "#dc2626" if moved else "#6b7280"
            out.append(f'<line x1="{xs["finished"]:.0f}" y1="{row["finished"] + 34}" x2="{xs["handed out"]:.0f}" '
                       f'y2="{row["handed out"]}" stroke="{colour}" stroke-width="{2 if moved else 1}"/>')
    out.append("</svg>")
    return Picture("".join(out), title)


OUTCOME_COLOURS = {"error": "#fecaca", "cancelled": "#e5e7eb", "completed": "#bbf7d0", "denied": "#fed7aa"}


def outcome_picture(rows: list[tuple[str, str, str, str]], title: str = "") -> Picture:
    """One row per call of an answer: ``(call, its state when the failure came, what it got, a note)``."""
    top, row_h = 34 if title else 10, 30
    col = [8, 230, 350, 460]
    note_w = max((len(r[3]) for r in rows), default=10) * 6.2
    width = max(col[3] + note_w + 16, 8 * len(title) + 20)
    out = _svg(width, top + 20 + row_h * len(rows) + 6)
    if title:
        out.append(f'<text x="8" y="20" font-size="13" font-weight="bold">{html.escape(title)}</text>')
    for x, head in zip(col, ["call", "when it failed", "got", "what the model reads"]):
        out.append(f'<text x="{x}" y="{top + 12}" font-weight="bold" fill="#374151">{head}</text>')
    for k, (call, before, status, note) in enumerate(rows):
        y = top + 20 + k * row_h
        fill = OUTCOME_COLOURS.get(status, "#f3f4f6")
        out.append(f'<rect x="4" y="{y}" width="{width - 8:.0f}" height="{row_h - 4}" rx="4" fill="{fill}"/>')
        for x, text in zip(col, [call, before, status, note]):
            out.append(f'<text x="{x + 4}" y="{y + 17}">{html.escape(text)}</text>')
    out.append("</svg>")
    return Picture("".join(out), title)
