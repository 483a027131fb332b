"""Checkers for chapter 06 (partitioning and concurrency), and its pictures.

* ``check_partition``: Claude Code's ``partitionToolCalls`` (``toolOrchestration.ts``,
  reference §2.2): consecutive concurrency-safe calls share a batch, every other call is a
  batch of its own, nothing is reordered; a call whose tool does not exist, whose input
  does not parse, or whose ``isConcurrencySafe`` throws is unsafe.
* ``check_cap_fallback``: ``getMaxToolUseConcurrency`` (reference §2.1):
  ``parseInt(CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY || '', 10) || 10``, so an unset, empty,
  ``"0"`` or non-numeric value means 10.
* ``check_capped_all``: Claude Code's ``all(generators, cap)`` (``utils/generators.ts``,
  reference §2.6): at most ``cap`` generators running, started in list order, the next one
  starting the moment one finishes, items out in the order they are produced.

Each ``reference_*`` function is the rule its checker compares with; the tests
(``tests/teaching/test_partition.py``) check it against the library (``partition_tool_calls``,
``max_tool_use_concurrency``, ``merge_capped``). The ``all()`` checker runs the learner's
code on a simulated clock (an event loop whose time jumps to the next timer), so its cases
take no real time and come out the same on every machine.
"""

from __future__ import annotations

import asyncio
import html
import random
import re
import selectors
import threading
from typing import Any, AsyncIterator, Callable, Iterable, Sequence

import nbtoolsched as nts

from . import Edit, Glob, Grep, Picture, Read
from .checks import Verdict, run_check

__all__ = [
    "Moody", "probe_registry", "random_answer", "describe_call", "reference_partition", "check_partition",
    "reference_cap", "check_cap_fallback", "CAP_CASES",
    "reference_all", "random_generators", "run_capped", "check_capped_all",
    "slots_diagram", "fit_title",
]

SEED = 6


# -- the partition (reference §2.2) -------------------------------------------------------------
class Moody(nts.Tool):
    """A tool whose ``is_concurrency_safe`` raises: fail closed makes its calls unsafe."""

    name = "Moody"

    def is_concurrency_safe(self, input: Any) -> bool:
        raise RuntimeError("cannot tell")


@nts.tool(read_only=True, concurrency_safe=False)
def Screenshot() -> str:
    """Capture the one shared screen: it changes nothing (read-only), but two captures at once
    fight over the display, so it is not concurrency-safe."""
    return "screen.png"


def probe_registry() -> nts.ToolRegistry:
    """The teaching Grep, Read, Edit and Glob, Moody, Screenshot (read-only but not
    concurrency-safe) and the built-in Bash (safe only when read-only)."""
    from nbtoolsched.tools import BashTool

    return nts.ToolRegistry([Grep, Read, Edit, Glob, Moody(), Screenshot, BashTool()])


CHOICES: list[tuple[str, dict[str, Any]]] = [
    ("Grep", {"pattern": "x"}), ("Read", {"file_path": "a.py"}), ("Glob", {"pattern": "*.py"}),
    ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}),
    ("Grep", {"pattern": 42}),            # does not parse: pattern must be a string
    ("Moody", {}),                        # its is_concurrency_safe raises
    ("Nope", {}),                         # no such tool
    ("Bash", {"command": "ls -la"}),      # read-only: safe
    ("Bash", {"command": "mkdir out"}),   # writes: unsafe
    ("Screenshot", {}),                   # read-only, yet not concurrency-safe: unsafe
]


def random_answer(rng: random.Random, most: int = 9) -> list[dict[str, Any]]:
    """A model's answer: 0 to ``most`` tool_use blocks drawn from ``CHOICES``."""
    picks = [rng.choice(CHOICES) for _ in range(rng.randint(0, most))]
    return [{"type": "tool_use", "id": f"t{i}", "name": name, "input": dict(input)} for i, (name, input) in enumerate(picks)]


def _kind(block: dict[str, Any], registry: nts.ToolRegistry) -> tuple[bool, str]:
    """Is the call safe, and why, in words."""
    tool = registry.get(block["name"])
    if tool is None:
        return False, "no such tool"
    try:
        parsed = tool.input_model.model_validate(block["input"])
    except Exception:
        return False, "its input does not parse"
    try:
        safe = bool(tool.is_concurrency_safe(parsed))
    except Exception:
        return False, "its is_concurrency_safe raised"
    return safe, "concurrency-safe" if safe else "not concurrency-safe"


def _read_only(block: dict[str, Any], registry: nts.ToolRegistry) -> bool:
    """What ``is_read_only`` says of the call (failing closed): the question the partition does *not* ask."""
    tool = registry.get(block["name"])
    try:
        return tool is not None and bool(tool.is_read_only(tool.input_model.model_validate(block["input"])))
    except Exception:
        return False


def _asked_read_only(blocks: list[dict[str, Any]], registry: nts.ToolRegistry,
                     got: list[tuple[bool, list[str]]]) -> str | None:
    """The sentence for batches made with ``is_read_only`` instead of ``is_concurrency_safe``."""
    batches: list[tuple[bool, list[str]]] = []
    for block in blocks:
        safe = _read_only(block, registry)
        if safe and batches and batches[-1][0]:
            batches[-1][1].append(block["id"])
        else:
            batches.append((safe, [block["id"]]))
    if [(bool(s), b) for s, b in got] != batches:
        return None
    odd = next((b for b in blocks if _read_only(b, registry) != _kind(b, registry)[0]), None)
    if odd is None:
        return None
    return (f"your batches are the ones is_read_only gives: {describe_call(odd)} is read-only but not "
            f"concurrency-safe, and the partition asks is_concurrency_safe (a read-only tool may still "
            f"not run beside others)")


def describe_call(block: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in block["input"].items() if k in ("pattern", "file_path", "command"))
    return f"{block['id']} {block['name']}({args})"


def reference_partition(blocks: list[dict[str, Any]], registry: nts.ToolRegistry) -> list[tuple[bool, list[str]]]:
    """``[(safe, [tool_use_id, ...]), ...]``: Claude Code's ``partitionToolCalls``."""
    batches: list[tuple[bool, list[str]]] = []
    for block in blocks:
        safe, _ = _kind(block, registry)
        if safe and batches and batches[-1][0]:
            batches[-1][1].append(block["id"])
        else:
            batches.append((safe, [block["id"]]))
    return batches


def _normal(got: Any) -> list[tuple[bool, list[str]]] | None:
    """The learner's batches as ``[(bool, [ids])]``, or None when they have another shape."""
    if not isinstance(got, (list, tuple)):
        return None
    out = []
    for item in got:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], (list, tuple)):
            return None
        out.append((item[0], list(item[1])))
    return out


def _partition_problem(blocks: list[dict[str, Any]], registry: nts.ToolRegistry,
                       got: list[tuple[bool, list[str]]], want: list[tuple[bool, list[str]]]) -> str:
    answer = "[" + ", ".join(describe_call(b) for b in blocks) + "]"
    ids = [b["id"] for b in blocks]
    flat = [i for _, batch in got for i in batch]
    if flat != ids:
        return (f"answer {answer}: your batches hold the calls {flat}; every call appears once, in the "
                f"order the model wrote them ({ids}): the partition never drops or reorders a call")
    where_got = {i: n for n, (_, batch) in enumerate(got) for i in batch}
    where_want = {i: n for n, (_, batch) in enumerate(want) for i in batch}
    by_id = {b["id"]: b for b in blocks}
    failed = ("no such tool", "its input does not parse", "its is_concurrency_safe raised")
    fail_closed = "fail closed: anything that goes wrong while judging a call makes it unsafe"
    for n, i in enumerate(ids):
        safe, why = _kind(by_id[i], registry)
        note = f" ({fail_closed})" if why in failed else ""
        if n:
            prev = ids[n - 1]
            joined_got = where_got[i] == where_got[prev]
            joined_want = where_want[i] == where_want[prev]
            if joined_got and not joined_want:
                if not safe:
                    reason = (f"{describe_call(by_id[i])} is unsafe: {why}{note}, and an unsafe call is always "
                              "a batch of its own")
                else:
                    before, why_before = by_id[prev], _kind(by_id[prev], registry)[1]
                    reason = (f"{describe_call(before)} before it is unsafe ({why_before}): after an unsafe call "
                              "a new batch starts")
                return f"answer {answer}: you put {i} in the same batch as {prev}; {reason}. It should be {want}"
            if joined_want and not joined_got:
                return (f"answer {answer}: you started a new batch at {i}; it and {prev} are both concurrency-safe "
                        f"and consecutive, so they share a batch. It should be {want}")
        got_safe = got[where_got[i]][0]
        if bool(got_safe) != safe:
            said = "safe" if got_safe else "unsafe"
            rule = fail_closed if why in failed else f"its tool says {safe} for this input"
            return (f"answer {answer}: you marked the batch of {describe_call(by_id[i])} {said}; {why}, so it is "
                    f"{'safe' if safe else 'unsafe'}: {rule}")
    return f"answer {answer}: you gave {got}; it should be {want}"


def check_partition(fn: Callable[[list[dict[str, Any]], nts.ToolRegistry], Any], cases: int = 300) -> Verdict:
    """Compare ``fn(blocks, registry)`` with the rule on ``cases`` seeded random answers."""
    rng = random.Random(SEED)
    registry = probe_registry()
    answers = [random_answer(rng) for _ in range(cases)]

    def problems(blocks: list[dict[str, Any]]) -> list[str]:
        want = reference_partition(blocks, registry)
        raw = fn([dict(b, input=dict(b["input"])) for b in blocks], registry)
        got = _normal(raw)
        if got is None:
            return [f"answer [{', '.join(describe_call(b) for b in blocks)}]: your function gave {raw!r:.100}; it "
                    f"should give a list of (safe, [tool_use_id, ...]) pairs, here {want}"]
        if [(bool(s), b) for s, b in got] == want and all(isinstance(s, bool) for s, _ in got):
            return []
        if [(bool(s), b) for s, b in got] == want:
            return [f"answer [{', '.join(describe_call(b) for b in blocks)}]: the batches are right, but say safe "
                    f"with True or False, not {[s for s, _ in got]}"]
        mixed_up = _asked_read_only(blocks, registry, got)
        if mixed_up is not None:
            return [f"answer [{', '.join(describe_call(b) for b in blocks)}]: {mixed_up}. It should be {want}"]
        return [_partition_problem(blocks, registry, got, want)]

    return run_check("partition", answers, problems, agree="agree with Claude Code's partitionToolCalls")


# -- the cap's fallback (reference §2.1) --------------------------------------------------------
# Values on which Claude Code's parseInt(...) || 10 and nbtoolsched's int() agree. (They part on
# "4 tools" or "2.5", where parseInt reads the leading digits and nbtoolsched falls back to 10,
# and on negative numbers, which nbtoolsched also treats as 10.)
CAP_CASES: list[str | None] = [None, "", "0", "abc", "1", "3", "10", "16", "64", " 4", "007", "ten", "00"]


def reference_cap(raw: str | None) -> int:
    """``parseInt(raw || '', 10) || 10`` on the values of ``CAP_CASES``: a positive number, else 10."""
    text = (raw or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else 10


def check_cap_fallback(fn: Callable[[str | None], Any]) -> Verdict:
    """Compare ``fn(raw)`` (raw: the variable's text, None when unset) with Claude Code's rule."""

    def problems(raw: str | None) -> list[str]:
        want = reference_cap(raw)
        got = fn(raw)
        if isinstance(got, int) and not isinstance(got, bool) and got == want:
            return []
        shown = "unset" if raw is None else f"= {raw!r}"
        if want == 10 and raw is not None and raw.strip() not in ("", "10"):
            why = f"parseInt({raw!r}) is {'0' if raw.strip().isdigit() else 'NaN'}, and `|| 10` turns that into 10"
        elif raw is None or raw == "":
            why = "an unset or empty variable means the default, 10"
        else:
            why = f"parseInt reads the number {want}"
        return [f"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY {shown}: you gave {got!r}; the cap is {want}: {why}"]

    return run_check("cap_fallback", CAP_CASES, problems, agree="agree with getMaxToolUseConcurrency")


# -- the capped all() (reference §2.6), on a simulated clock ------------------------------------
class _Stuck(Exception):
    """Nothing left to run and nothing to wait for: the code under test waits forever."""


class _VirtualSelector:
    """A selector whose ``select(timeout)`` returns at once and moves the loop's clock on."""

    def __init__(self, loop: "_VirtualLoop", real: selectors.BaseSelector) -> None:
        self._loop, self._real = loop, real

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = self._real.select(0)
        if ready:
            return ready
        if timeout is None:
            self._loop.idle += 1
            if self._loop.idle > 200:
                raise _Stuck()
        elif timeout > 0:
            self._loop.now += timeout
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self.now = 0.0
        self.idle = 0
        real = selectors.DefaultSelector()
        super().__init__(real)
        self._selector = _VirtualSelector(self, real)  # answers as a selector does

    def time(self) -> float:
        return self.now


def _in_thread_loop(main: Callable[[], Any]) -> Any:
    """Run ``main()`` (a coroutine function) to the end on a fresh simulated-clock loop in a thread,
    so it works from a notebook cell whose own loop is running; its exception is re-raised."""
    box: dict[str, Any] = {}

    def target() -> None:
        loop = _VirtualLoop()
        try:
            box["value"] = loop.run_until_complete(main())
        except BaseException as error:  # handed to the caller
            box["error"] = error
        finally:
            try:
                left = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in left:
                    task.cancel()
                if left:
                    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            except BaseException:
                pass
            loop.close()

    thread = threading.Thread(target=target, name="capped-all-check")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


NAMES = "ABCDEFGH"


def reference_all(delays: Sequence[Sequence[float]], cap: int) -> dict[str, Any]:
    """What ``all()`` does with generators that sleep ``delays[k]`` seconds before each item:
    ``{"items": [...], "starts": {name: time}, "ends": {name: time}}``, items in the order made."""
    names = NAMES[:len(delays)]
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    made: list[tuple[float, int, str]] = []
    waiting = list(range(len(delays)))
    running: list[tuple[float, int]] = []  # (end time, generator)
    now = 0.0
    while waiting or running:
        while waiting and len(running) < cap:
            k = waiting.pop(0)
            starts[names[k]] = now
            t = now
            for i, d in enumerate(delays[k], 1):
                t += d
                made.append((t, k, f"{names[k]}{i}"))
            running.append((t, k))
        running.sort()
        now, k = running.pop(0)
        ends[names[k]] = now
    return {"items": [label for _, _, label in sorted(made)], "starts": starts, "ends": ends}


def random_generators(rng: random.Random) -> tuple[list[list[float]], int]:
    """1-6 generators of 0-3 items, whole seconds apart, and a cap; no two items made at the same moment."""
    while True:
        delays = [[float(rng.randint(1, 6)) for _ in range(rng.randint(0, 3))] for _ in range(rng.randint(1, 6))]
        cap = rng.choice([1, 2, 2, 3, 10])
        times = [t for t in _item_times(delays, cap)]
        if len(set(times)) == len(times):
            return delays, cap


def _item_times(delays: list[list[float]], cap: int) -> list[float]:
    plan = reference_all(delays, cap)
    out = []
    for k, ds in enumerate(delays):
        t = plan["starts"][NAMES[k]]
        for d in ds:
            t += d
            out.append(t)
    return out


def run_capped(fn: Callable[[list[AsyncIterator[str]], int], AsyncIterator[str]], delays: Sequence[Sequence[float]],
               cap: int) -> dict[str, Any]:
    """Run ``fn(generators, cap)`` on the simulated clock; what came out and when each generator ran."""

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        seen: dict[str, Any] = {"items": [], "starts": {}, "ends": {}, "order": [], "peak": 0}
        running = 0

        async def gen(name: str, ds: Sequence[float]) -> AsyncIterator[str]:
            nonlocal running
            seen["starts"][name] = loop.time()
            seen["order"].append(name)
            running += 1
            seen["peak"] = max(seen["peak"], running)
            try:
                for i, d in enumerate(ds, 1):
                    await asyncio.sleep(d)
                    yield f"{name}{i}"
            finally:
                running -= 1
                seen["ends"][name] = loop.time()

        gens = [gen(NAMES[k], ds) for k, ds in enumerate(delays)]
        merged = fn(gens, cap)

        async def drain() -> None:
            async for item in merged:
                seen["items"].append(item)

        await asyncio.wait_for(drain(), timeout=1000)
        return seen

    return _in_thread_loop(main)


def _describe_gens(delays: Sequence[Sequence[float]]) -> str:
    return " ".join(f"{NAMES[k]}:{[int(d) for d in ds]}" for k, ds in enumerate(delays))


def check_capped_all(fn: Callable[[list[AsyncIterator[str]], int], AsyncIterator[str]], cases: int = 60) -> Verdict:
    """Compare ``fn(generators, cap)`` (an async generator) with ``all()`` on seeded random generators.

    Each generator ``A:[2, 1]`` sleeps 2 s, yields ``A1``, sleeps 1 s, yields ``A2`` and ends
    (on a simulated clock: the checker takes no real time)."""
    rng = random.Random(SEED)
    plans = [random_generators(rng) for _ in range(cases)]

    def problems(case: tuple[list[list[float]], int]) -> list[str]:
        delays, cap = case
        want = reference_all(delays, cap)
        where = f"generators {_describe_gens(delays)} (seconds before each item), cap {cap}"
        try:
            got = run_capped(fn, delays, cap)
        except _Stuck:
            return [f"{where}: your capped_all never finished: it waits for something that never comes"]
        except asyncio.TimeoutError:
            return [f"{where}: your capped_all never finished: it was still waiting after 1000 simulated "
                    "seconds, long after every generator had ended"]
        except TypeError as error:
            if "async for" in str(error) or "__aiter__" in str(error):
                return [f"{where}: your capped_all gave something `async for` cannot read ({error}); "
                        "write it as an async generator (`async def` with `yield`)"]
            raise
        names = list(NAMES[:len(delays)])
        if got["peak"] > cap:
            return [f"{where}: {got['peak']} generators were running at once; at most {cap} may run together"]
        if got["order"] != [n for n in names if n in got["order"]]:
            return [f"{where}: you started the generators in the order {got['order']}; they start in list order, "
                    f"{names}"]
        missing = [n for n in names if n not in got["starts"]]
        if missing:
            return [f"{where}: {missing} never started; every generator runs, the next one when a slot frees"]
        for k, n in enumerate(names):
            if got["starts"][n] != want["starts"][n]:
                at = want["starts"][n]
                freed = [m for m in names[:k] if want["ends"][m] == at]
                if k < cap:
                    because = f"it is one of the first {cap} (the cap), so it starts at once"
                else:
                    empty = " (it had no items)" if freed and not delays[names.index(freed[-1])] else ""
                    because = (f"{freed[-1]} finished at {at:g} s{empty} and freed a slot; the next generator "
                               "starts the moment one finishes")
                return [f"{where}: {n} started at {got['starts'][n]:g} s; it should start at {at:g} s: {because}"]
        if got["items"] != want["items"]:
            lost = [i for i in want["items"] if i not in got["items"]]
            if lost:
                return [f"{where}: you gave {got['items']}; {lost} never came out. It should be {want['items']}"]
            return [f"{where}: you gave {got['items']}; items come out in the order they are produced: "
                    f"{want['items']}"]
        return []

    return run_check("capped_all", plans, problems, agree="agree with Claude Code's all()")


# -- pictures ---------------------------------------------------------------------------------
TITLE_CHAR = 8.0  # px per character of a 13 px bold title, generously


def fit_title(picture: Picture, margin: int = 24) -> Picture:
    """The same picture, made wide enough for its title (the SVG and its background grow)."""
    match = re.search(r'<svg[^>]*\bwidth="([\d.]+)"', picture.svg)
    if not match or not picture.title:
        return picture
    width = float(match.group(1))
    need = len(picture.title) * TITLE_CHAR + margin
    if need <= width:
        return picture
    svg = picture.svg.replace(f'width="{match.group(1)}"', f'width="{need:.0f}"', 2)  # the svg and its white rect
    return type(picture)(svg, picture.title)


def slots_diagram(log: Iterable[tuple[str, str]], cap: int, title: str = "") -> Picture:
    """``all()``'s slots filling and freeing, drawn from the order of events (no times).

    ``log`` holds ``("start", generator)``, ``("item", label)`` and ``("end", generator)`` in
    the order they happened; a generator takes the lowest free slot when it starts. Each
    slot is a lane; a bar runs from a generator's start to its end, dots are its items."""
    events = list(log)
    step, lane_h, left = 40, 34, 70
    top = 30 if title else 10
    width = max(left + step * len(events) + 30, 660)  # 660: the legend's width
    slot_of: dict[str, int] = {}
    busy: dict[int, str] = {}
    bars: list[tuple[int, int, int, str]] = []  # slot, start rank, end rank, name
    opened: dict[str, int] = {}
    marks: list[tuple[int, int, str]] = []
    for rank, (kind, what) in enumerate(events):
        if kind == "start":
            slot = min(s for s in range(len(events) + 1) if s not in busy)
            busy[slot], slot_of[what], opened[what] = what, slot, rank
        elif kind == "end":
            slot = slot_of[what]
            bars.append((slot, opened.pop(what), rank, what))
            busy.pop(slot, None)
        else:
            owner = re.sub(r"\d+$", "", what)
            marks.append((slot_of.get(owner, 0), rank, what))
    for name, rank in opened.items():
        bars.append((slot_of[name], rank, len(events) - 1, name))
    lanes = max([cap] + [s + 1 for s, *_ in bars])
    height = top + lanes * lane_h + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'font-family="DejaVu Sans, sans-serif" font-size="10">',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
    if title:
        out.append(f'<text x="8" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>')

    def x(rank: int) -> float:
        return left + step * rank + step / 2

    for lane in range(lanes):
        y = top + lane * lane_h + lane_h / 2
        colour = "#111827" if lane < cap else "#b91c1c"
        out.append(f'<text x="8" y="{y + 4}" font-size="11" fill="{colour}">slot {lane + 1}</text>')
        out.append(f'<line x1="{left}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#e5e7eb"/>')
    palette = ["#bfdbfe", "#fde68a", "#bbf7d0", "#fbcfe8", "#ddd6fe", "#fed7aa", "#c7d2fe", "#99f6e4"]
    for slot, a, b, name in bars:
        y = top + slot * lane_h + 7
        fill = palette[NAMES.find(name) % len(palette)] if name in NAMES else "#e5e7eb"
        out.append(f'<rect x="{x(a) - 12:.0f}" y="{y}" width="{x(b) - x(a) + 24:.0f}" height="{lane_h - 14}" rx="6" '
                   f'fill="{fill}" stroke="#1e3a8a"/>'
                   f'<text x="{x(a) - 8:.0f}" y="{y + lane_h / 2 - 3:.0f}" font-weight="bold">{html.escape(name)}</text>')
    for slot, rank, label in marks:
        y = top + slot * lane_h + lane_h / 2
        out.append(f'<circle cx="{x(rank):.0f}" cy="{y:.0f}" r="5" fill="#16a34a"/>'
                   f'<text x="{x(rank):.0f}" y="{y - 8:.0f}" text-anchor="middle">{html.escape(label)}</text>')
    for rank, (kind, what) in enumerate(events):
        if kind in ("start", "end"):
            out.append(f'<text x="{x(rank):.0f}" y="{top + lanes * lane_h + 12}" text-anchor="middle" fill="#6b7280" '
                       f'font-size="9">{"▶" if kind == "start" else "■"}{html.escape(what)}</text>')
    out.append(f'<text x="{left}" y="{height - 4}" fill="#6b7280">order of events \u2192 (bars: a generator holding '
               f'a slot, from ▶ start to ■ end; dots: its items as they come out)</text>')
    out.append("</svg>")
    return fit_title(Picture("".join(out), title))
