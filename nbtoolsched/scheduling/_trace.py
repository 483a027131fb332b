"""The trace: a bounded record of a run.

Every run can record one. It feeds timelines drawn afterwards and replay (JSON lines on
disk); live views listen to the events directly. With no listener attached, a run
builds no event at all (emitters check ``events.listening`` first).
"""

from __future__ import annotations

import dataclasses
import json
import operator
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar, cast

from .._events import (
    EVENT_TYPES,
    CallState,
    ContextEvent,
    Event,
    ModelBlock,
    ProgressDropped,
    ProgressEvent,
    ResultEvent,
    event_from_dict,
    event_to_dict,
)

__all__ = ["Trace", "PROGRESS_KEPT"]

PROGRESS_KEPT = 50  # per call, a trace keeps its first and its last this many progress events
E = TypeVar("E", bound=Event)

class Trace:
    """A recorded run; attach with ``events.subscribe(trace.record)``.

    Bounded: of each call's progress events it keeps the first and the last
    ``keep_progress`` and, in between, one ``ProgressDropped`` that counts the rest
    (states still count them all). A command printing millions of lines costs a trace a
    hundred events, not millions. A finished call is kept as its status: the results
    belong to the run, and a trace does not hold them a second time.
    """

    def __init__(self, events: Iterable[Event] = (), *, keep_progress: int = PROGRESS_KEPT) -> None:
        # Each event is kept as a row of plain values (a tuple), not as an object: a
        # 10,000-call run keeps 30,000 rows the garbage collector need not walk, and reads
        # build the events again on demand.
        self._rows: list[tuple[Any, ...]] = [_pack(e) for e in events]
        self.keep_progress = keep_progress
        self._progress_seen: dict[str, int] = {}
        self._recent: dict[str, deque[ProgressEvent]] = {}  # progress past the first ones, not yet settled
        self._dropped: dict[str, int] = {}

    @property
    def events(self) -> list[Event]:
        """The recorded events, in order (built afresh on each read)."""
        self._settle_all()
        return [_unpack(row) for row in self._rows]

    def record(self, event: Event) -> None:
        cls = type(event)  # events are final classes: an exact type test is the cheap dispatch
        if cls in _KEPT_AS_IS:  # most events: one row, no questions
            self._rows.append(_PACKERS[cls](event))
            return
        # The rest are bounded or trimmed (``type(event) is`` again: it narrows for type checkers).
        if type(event) is ProgressEvent:
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
        elif type(event) is ResultEvent:
            if event.tool_use_id in self._recent:
                self._settle(event.tool_use_id)
            self._rows.append(_pack_result(event))  # the status, not the result itself
            return
        elif type(event) is ContextEvent:
            event = ContextEvent(None, event.batch, event.time)  # the context itself is for live listeners
        elif type(event) is ModelBlock and event.input is not None:
            event = event.recorded()  # the block's input is for live listeners
        self._rows.append(_PACKERS[cls](event))

    def _settle_all(self) -> None:
        if self._recent:
            for tool_use_id in list(self._recent):
                self._settle(tool_use_id)

    def _settle(self, key: str) -> None:
        """Put a call's held-back last progress events, and the count of the dropped ones, in the trace."""
        recent = self._recent.pop(key)
        dropped = self._dropped.pop(key, 0)
        if dropped:
            first = recent[0]
            self._rows.append(_pack(ProgressDropped(key, first.tool_name, first.batch, first.time, dropped)))
        self._rows.extend(_pack(e) for e in recent)

    def __len__(self) -> int:
        self._settle_all()
        return len(self._rows)

    def of_kind(self, kind: str) -> list[Event]:
        """The events of one ``kind`` (``"call_started"``), in order; ``of_type`` for a typed list."""
        code = _CODES_BY_KIND[kind]
        self._settle_all()
        return [_unpack(row) for row in self._rows if row[0] == code]

    def of_type(self, cls: type[E]) -> list[E]:
        """The events of one class (``trace.of_type(CallStarted)``), in order."""
        return cast("list[E]", self.of_kind(cls.kind))

    def states(self) -> list[CallState]:
        """One state per call (the reducer over its events), in the order calls appeared."""
        states: dict[str, CallState] = {}
        for event in self.events:
            key = getattr(event, "tool_use_id", "")
            if not key:
                continue
            state = states.get(key)
            if state is None:
                state = states[key] = CallState(key, getattr(event, "tool_name", ""))
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


# -- rows --------------------------------------------------------------------------------------
_TYPES: list[type[Any]] = list(EVENT_TYPES.values())
_CODES: dict[type[Any], int] = {cls: i for i, cls in enumerate(_TYPES)}
_CODES_BY_KIND: dict[str, int] = {cls.kind: i for i, cls in enumerate(_TYPES)}
_FIELDS: dict[type[Any], tuple[str, ...]] = {cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in _TYPES}
_GETTERS: dict[type[Any], Callable[[Any], tuple[Any, ...]]] = {cls: operator.attrgetter(*names) for cls, names in _FIELDS.items()}
_RESULT = _CODES[ResultEvent]
_LISTS: dict[type[Any], frozenset[str]] = {
    cls: frozenset(f.name for f in dataclasses.fields(cls) if f.default_factory is list) for cls in _TYPES
}


def _packer(cls: type[Any]) -> Callable[[Any], tuple[Any, ...]]:
    """How one event class becomes a row: its code, then its fields (lists kept as tuples)."""
    code, getter, single = _CODES[cls], _GETTERS[cls], len(_FIELDS[cls]) == 1
    if _LISTS[cls]:
        def pack_lists(event: Any) -> tuple[Any, ...]:
            values = (getter(event),) if single else getter(event)
            return (code, *[tuple(v) if type(v) is list else v for v in values])
        return pack_lists
    if single:
        return lambda event: (code, getter(event))
    return lambda event: (code, *getter(event))


_PACKERS: dict[type[Any], Callable[[Any], tuple[Any, ...]]] = {cls: _packer(cls) for cls in _TYPES}
# What ``Trace.record`` keeps exactly as it came (the rest are bounded or trimmed first).
_KEPT_AS_IS = frozenset(_TYPES) - {ProgressEvent, ResultEvent, ContextEvent, ModelBlock}


def _pack(event: Any) -> tuple[Any, ...]:
    return _PACKERS[type(event)](event)


def _pack_result(e: ResultEvent) -> tuple[Any, ...]:
    """A finished call as a trace keeps it: its status, never its result or outcome."""
    return (_RESULT, e.tool_use_id, e.tool_name, None, e.status, (), e.prevent_continuation, e.stop_reason,
            e.time, e.batch, e.is_error, None)


def _unpack(row: tuple[Any, ...]) -> Any:
    cls = _TYPES[row[0]]
    values = list(row[1:])
    lists = _LISTS[cls]
    if lists:
        for i, name in enumerate(_FIELDS[cls]):
            if name in lists:
                values[i] = list(values[i])
    return cls(*values)
