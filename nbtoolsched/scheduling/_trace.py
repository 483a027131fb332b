"""The trace: a bounded record of a run.

Every run can record one. It feeds timelines drawn afterwards and replay (JSON lines on
disk); live views listen to the events directly. With no listener attached, a run
builds no event at all (emitters check ``if events:`` first).
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from .._events import (CallState, ContextEvent, ModelBlock, ProgressDropped, ProgressEvent, ResultEvent, event_from_dict,
                       event_to_dict)

__all__ = ["Trace", "PROGRESS_KEPT"]

PROGRESS_KEPT = 50  # per call, a trace keeps its first and its last this many progress events

class Trace:
    """A recorded run; attach with ``events.subscribe(trace.record)``.

    Bounded: of each call's progress events it keeps the first and the last
    ``keep_progress`` and, in between, one ``ProgressDropped`` that counts the rest
    (states still count them all). A command printing millions of lines costs a trace a
    hundred events, not millions. A finished call is kept as its status: the results
    belong to the run, and a trace does not hold them a second time.
    """

    def __init__(self, events: Iterable[Any] = (), *, keep_progress: int = PROGRESS_KEPT) -> None:
        self._events: list[Any] = list(events)
        self.keep_progress = keep_progress
        self._progress_seen: dict[str, int] = {}
        self._recent: dict[str, deque[ProgressEvent]] = {}  # progress past the first ones, not yet settled
        self._dropped: dict[str, int] = {}

    @property
    def events(self) -> list[Any]:
        if self._recent:
            for tool_use_id in list(self._recent):
                self._settle(tool_use_id)
        return self._events

    def record(self, event: Any) -> None:
        if isinstance(event, ProgressEvent):
            key = event.tool_use_id
            seen = self._progress_seen[key] = self._progress_seen.get(key, 0) + 1
            if seen > self.keep_progress:
                recent = self._recent.get(key)
                if recent is None:
                    recent = self._recent[key] = deque(maxlen=self.keep_progress)
                if len(recent) == self.keep_progress:
                    self._dropped[key] = self._dropped.get(key, 0) + 1
                recent.append(event)
                return
        elif isinstance(event, ResultEvent):
            if event.tool_use_id in self._recent:
                self._settle(event.tool_use_id)
            event = event.recorded()
        elif isinstance(event, ContextEvent):
            event = ContextEvent(None, event.batch, event.time)  # the context itself is for live listeners
        elif isinstance(event, ModelBlock) and event.input is not None:
            event = event.recorded()
        self._events.append(event)

    def _settle(self, key: str) -> None:
        """Put a call's held-back last progress events, and the count of the dropped ones, in ``events``."""
        recent = self._recent.pop(key)
        dropped = self._dropped.pop(key, 0)
        if dropped:
            first = recent[0]
            self._events.append(ProgressDropped(key, first.tool_name, first.batch, first.time, dropped))
        self._events.extend(recent)

    def __len__(self) -> int:
        return len(self.events)

    def of_kind(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]

    def states(self) -> list[CallState]:
        """One state per call (the reducer over its events), in the order calls appeared."""
        states: dict[str, CallState] = {}
        for event in self.events:
            key = getattr(event, "tool_use_id", "")
            if not key:
                continue
            state = states.get(key)
            if state is None:
                state = states[key] = CallState(key, event.tool_name)
            state.apply(event)
        return list(states.values())

    def to_jsonl(self) -> str:
        return "".join(json.dumps(event_to_dict(e), ensure_ascii=False) + "\n" for e in self.events)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    @classmethod
    def read(cls, path: str | Path) -> "Trace":
        """A trace written by ``write``; a ValueError names the first line that is not an event."""
        events = []
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                events.append(event_from_dict(json.loads(line)))
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}, line {number}: {err}") from None
        return cls(events)
