"""The event trace: what happened to each call, when, in which batch.

Every run can record one. It feeds live views (a listener per event), timelines drawn
afterwards, and replay (JSON lines on disk). With no listener attached, emitting costs
one attribute check.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

__all__ = ["TraceEvent", "RunEvents", "Trace", "EVENT_KINDS", "PROGRESS_KEPT"]

PROGRESS_KEPT = 50  # per call, a trace keeps its first and its last this many progress events

EVENT_KINDS = (
    "queued",
    "started",
    "progress",
    "progress_dropped",  # data: {"count": n}, the progress events a trace did not keep
    "permission_asked",
    "permission_answered",
    "finished",
    "context",
    "run_started",
    "run_finished",
)

Listener = Callable[["TraceEvent"], None]


@dataclass(slots=True)
class TraceEvent:
    kind: str
    time: float  # time.monotonic()
    tool_use_id: str = ""
    tool_name: str = ""
    batch: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    outcome: Any = None  # the CallOutcome on "finished" events, for live consumers; not serialised

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "time": self.time, "tool_use_id": self.tool_use_id, "tool_name": self.tool_name,
                "batch": self.batch, "data": _jsonable(self.data)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "TraceEvent":
        return cls(raw["kind"], float(raw["time"]), raw.get("tool_use_id", ""), raw.get("tool_name", ""),
                   int(raw.get("batch", 0)), dict(raw.get("data") or {}))


class RunEvents:
    """Fan-out of trace events to whoever listens (a Trace, a panel, a stream)."""

    __slots__ = ("listeners", "clock")

    def __init__(self, listeners: Iterable[Listener] = (), clock: Callable[[], float] | None = None) -> None:
        self.listeners: list[Listener] = list(listeners)
        self.clock = clock if clock is not None else time.monotonic

    def __bool__(self) -> bool:
        return bool(self.listeners)

    def emit(self, kind: str, tool_use_id: str = "", tool_name: str = "", batch: int = 0, outcome: Any = None, **data: Any) -> None:
        if not self.listeners:
            return
        event = TraceEvent(kind, self.clock(), tool_use_id, tool_name, batch, data, outcome)
        for listener in tuple(self.listeners):
            try:
                listener(event)
            except Exception:  # a broken viewer must never break a run
                pass

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None


class Trace:
    """A recorded run; attach with ``events.subscribe(trace.record)``.

    Bounded: of each call's progress events it keeps the first and the last
    ``keep_progress`` and, in between, one ``progress_dropped`` event that counts the
    rest (spans still count them all). A command printing millions of lines costs a
    trace a hundred events, not millions. The last ones are settled into ``events``
    when the call finishes, or when the trace is read.
    """

    def __init__(self, events: Iterable[TraceEvent] = (), *, keep_progress: int = PROGRESS_KEPT) -> None:
        self._events: list[TraceEvent] = list(events)
        self.keep_progress = keep_progress
        self._progress_seen: dict[str, int] = {}
        self._recent: dict[str, deque[TraceEvent]] = {}  # progress past the first ones, not yet settled
        self._dropped: dict[str, int] = {}

    @property
    def events(self) -> list[TraceEvent]:
        if self._recent:
            for tool_use_id in list(self._recent):
                self._settle(tool_use_id)
        return self._events

    def record(self, event: TraceEvent) -> None:
        key = event.tool_use_id
        if event.kind == "progress" and key:
            seen = self._progress_seen[key] = self._progress_seen.get(key, 0) + 1
            if seen > self.keep_progress:
                recent = self._recent.get(key)
                if recent is None:
                    recent = self._recent[key] = deque(maxlen=self.keep_progress)
                if len(recent) == self.keep_progress:
                    self._dropped[key] = self._dropped.get(key, 0) + 1
                recent.append(event)
                return
        elif event.kind == "finished" and key in self._recent:
            self._settle(key)
        self._events.append(event)

    def _settle(self, key: str) -> None:
        """Put a call's held-back last progress events, and the count of the dropped ones, in ``events``."""
        recent = self._recent.pop(key)
        dropped = self._dropped.pop(key, 0)
        if dropped:
            first = recent[0]
            self._events.append(TraceEvent("progress_dropped", first.time, key, first.tool_name, first.batch, {"count": dropped}))
        self._events.extend(recent)

    def __len__(self) -> int:
        return len(self.events)

    def of_kind(self, kind: str) -> list[TraceEvent]:
        return [e for e in self.events if e.kind == kind]

    def spans(self) -> list["Span"]:
        """One span per call: queued, asked, started, finished times and final status."""
        spans: dict[str, Span] = {}
        for e in self.events:
            if not e.tool_use_id:
                continue
            span = spans.setdefault(e.tool_use_id, Span(e.tool_use_id, e.tool_name, e.batch))
            span.absorb(e)
        return list(spans.values())

    def to_jsonl(self) -> str:
        return "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in self.events)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    @classmethod
    def read(cls, path: str | Path) -> "Trace":
        text = Path(path).read_text(encoding="utf-8")
        return cls(TraceEvent.from_dict(json.loads(line)) for line in text.splitlines() if line.strip())


@dataclass(slots=True)
class Span:
    tool_use_id: str
    tool_name: str
    batch: int
    queued: float | None = None
    asked: float | None = None
    answered: float | None = None
    started: float | None = None
    finished: float | None = None
    status: str = "queued"
    progress: int = 0

    def absorb(self, e: TraceEvent) -> None:
        if e.batch:
            self.batch = e.batch
        if e.kind == "queued":
            self.queued = e.time
        elif e.kind == "started":
            self.started = e.time
            self.status = "executing"
        elif e.kind == "permission_asked":
            self.asked = e.time
            self.status = "awaiting_approval"
        elif e.kind == "permission_answered":
            self.answered = e.time
            self.status = "executing"
        elif e.kind == "progress":
            self.progress += 1
        elif e.kind == "progress_dropped":
            self.progress += int(e.data.get("count", 0))
        elif e.kind == "finished":
            self.finished = e.time
            self.status = str(e.data.get("status", "completed"))

    @property
    def duration(self) -> float | None:
        if self.started is None or self.finished is None:
            return None
        return self.finished - self.started


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, dict):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_jsonable(v) for v in value]
        return repr(value)
