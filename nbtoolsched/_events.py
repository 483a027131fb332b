"""One event model: what happens in a run and in an agent session, as typed records.

The engine, the agent loop, the trace, ``Scheduler.stream``, run handles, timelines and
the notebook panel all speak it. Match on the class (``case CallStarted():``); ``kind``
is the class name in snake case (``CallStarted.kind == "call_started"``), for JSON lines
and quick filters. One reducer, ``CallState.apply``, turns one call's events into what a
panel row or a timeline shows. Users import all of it from ``nbtoolsched.events``.

Events are cheap, slotted dataclasses, built only when someone listens (emitters check
``events.listening`` on the ``RunEvents`` fan-out first).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Mapping, Sequence, Union

if TYPE_CHECKING:  # named in annotations only (the layers below import this module)
    from ._messages import TextBlock, ToolResultBlock
    from ._tool._context import ToolContext
    from .agent._loop import AgentResult
    from .execution._pipeline import CallOutcome

__all__ = [
    "AgentFinished",
    "AgentStarted",
    "ApprovalAnswered",
    "ApprovalAsked",
    "CallEvent",
    "CallQueued",
    "CallStarted",
    "CallState",
    "ContextEvent",
    "Event",
    "EVENT_TYPES",
    "Listener",
    "ModelBlock",
    "ModelFallback",
    "ModelFinished",
    "ProgressDropped",
    "ProgressEvent",
    "ResultEvent",
    "RunEvents",
    "RunFinished",
    "RunStarted",
    "SchedulerEvent",
    "StreamFailed",
    "TextDelta",
    "TurnFinished",
    "TurnStarted",
    "event_from_dict",
    "event_to_dict",
]


# -- a run -------------------------------------------------------------------------------
@dataclass(slots=True)
class RunStarted:
    """The engine began a run (a batch, or one streamed answer)."""

    kind: ClassVar[str] = "run_started"
    time: float = 0.0


@dataclass(slots=True)
class RunFinished:
    """Every call of the run has its result; ``counts`` is calls per final status."""

    kind: ClassVar[str] = "run_finished"
    time: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)


# -- one call --------------------------------------------------------------------------------
@dataclass(slots=True)
class CallQueued:
    """A tool_use block arrived; ``safe`` says whether it may run beside others."""

    kind: ClassVar[str] = "call_queued"
    tool_use_id: str
    tool_name: str
    batch: int = 0
    time: float = 0.0
    safe: bool = False


@dataclass(slots=True)
class CallStarted:
    kind: ClassVar[str] = "call_started"
    tool_use_id: str
    tool_name: str
    batch: int = 0
    time: float = 0.0


@dataclass(slots=True)
class ApprovalAsked:
    """The call waits for a person (or an approval policy)."""

    kind: ClassVar[str] = "approval_asked"
    tool_use_id: str
    tool_name: str
    batch: int = 0
    time: float = 0.0


@dataclass(slots=True)
class ApprovalAnswered:
    kind: ClassVar[str] = "approval_answered"
    tool_use_id: str
    tool_name: str
    batch: int = 0
    time: float = 0.0
    answer: str = ""


@dataclass(slots=True)
class ProgressEvent:
    """A tool said something while running; delivered at once, never held back.

    ``data`` is whatever the tool passed to ``ctx.progress()``: each tool has its own shape.
    """

    kind: ClassVar[str] = "progress_event"
    tool_use_id: str
    tool_name: str
    data: Any = None
    time: float = 0.0
    batch: int = 0


@dataclass(slots=True)
class ProgressDropped:
    """``count`` progress events of a call were left out: the only way progress goes missing.

    A trace keeps a call's first and last progress events and counts those in between; a
    reader of ``Scheduler.stream`` (or of a streaming executor) that falls far behind gets
    this, ahead of the progress still kept, instead of the oldest events. Either way it
    comes right before the gap's end, with the ``time`` of the first event kept after it."""

    kind: ClassVar[str] = "progress_dropped"
    tool_use_id: str
    tool_name: str
    batch: int = 0
    time: float = 0.0
    count: int = 0


@dataclass(slots=True)
class ResultEvent:
    """A call is finished: its one tool_result and whatever travels with it.

    A recorded trace keeps only the status: ``result`` and ``outcome`` are for live
    listeners (the run's own results hold them once; a trace never holds them twice).
    """

    kind: ClassVar[str] = "result_event"
    tool_use_id: str
    tool_name: str
    result: ToolResultBlock | None = None  # None in a recorded trace
    status: str = "completed"
    attachments: Sequence[TextBlock] = ()
    prevent_continuation: bool = False
    stop_reason: str | None = None
    time: float = 0.0
    batch: int = 0
    is_error: bool = False
    outcome: CallOutcome | None = None  # None in a recorded trace


@dataclass(slots=True)
class ContextEvent:
    """Context modifiers changed the shared tool context (after ``batch``).

    ``Scheduler.stream`` yields the very object its run's listeners get."""

    kind: ClassVar[str] = "context_event"
    context: ToolContext | None = None  # None in a recorded trace
    batch: int = 0
    time: float = 0.0


CallEvent = Union[CallQueued, CallStarted, ApprovalAsked, ApprovalAnswered, ProgressEvent, ProgressDropped, ResultEvent]
SchedulerEvent = Union[ProgressEvent, ProgressDropped, ResultEvent, ContextEvent]  # what Scheduler.stream yields


# -- an agent session --------------------------------------------------------------------
@dataclass(slots=True)
class AgentStarted:
    kind: ClassVar[str] = "agent_started"
    time: float = 0.0
    prompt: bool = False  # a prompt was given (else the transcript is answered as it is)
    messages: int = 0


@dataclass(slots=True)
class TurnStarted:
    kind: ClassVar[str] = "turn_started"
    time: float = 0.0
    turn: int = 0


@dataclass(slots=True)
class TextDelta:
    """Assistant text as it streams in (block ``index`` of turn ``turn``)."""

    kind: ClassVar[str] = "text_delta"
    time: float = 0.0
    turn: int = 0
    index: int = 0
    text: str = ""


@dataclass(slots=True)
class ModelBlock:
    """A content block finished streaming (``input``: a tool_use's input, for live listeners only)."""

    kind: ClassVar[str] = "model_block"
    time: float = 0.0
    turn: int = 0
    index: int = 0
    type: str = ""
    tool_use_id: str = ""
    tool_name: str = ""
    input: dict[str, Any] | None = None

    def recorded(self) -> "ModelBlock":
        """The form a trace keeps: which block, not its (possibly large) input."""
        return ModelBlock(self.time, self.turn, self.index, self.type, self.tool_use_id, self.tool_name)


@dataclass(slots=True)
class ModelFinished:
    """The answer finished streaming: the model's stop reason (Anthropic's words, whatever the
    model: ``OpenAIModel`` maps ``finish_reason``), its block count, and the tokens it reported
    (``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``... as the model sent them)."""

    kind: ClassVar[str] = "model_finished"
    time: float = 0.0
    turn: int = 0
    stop_reason: str | None = None
    blocks: int = 0
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class StreamFailed:
    kind: ClassVar[str] = "stream_failed"
    time: float = 0.0
    turn: int = 0
    error_kind: str = ""
    message: str = ""
    will_retry: bool = False


@dataclass(slots=True)
class ModelFallback:
    """The model was overloaded (or kept failing): the turn starts again on the fallback model.

    The abandoned answer's calls are answered in the transcript file and left out of the
    conversation; the fallback model answers the rest of this run."""

    kind: ClassVar[str] = "model_fallback"
    time: float = 0.0
    turn: int = 0
    from_model: str = ""
    to_model: str = ""
    reason: str = ""


@dataclass(slots=True)
class TurnFinished:
    kind: ClassVar[str] = "turn_finished"
    time: float = 0.0
    turn: int = 0
    stop: str | None = None  # why the session stops after this turn; None when it goes on


@dataclass(slots=True)
class AgentFinished:
    kind: ClassVar[str] = "agent_finished"
    time: float = 0.0
    stop_reason: str = ""
    turns: int = 0
    result: AgentResult | None = None  # for live listeners (None in a recorded trace)


Event = Union[
    RunStarted, RunFinished, CallQueued, CallStarted, ApprovalAsked, ApprovalAnswered, ProgressEvent,
    ProgressDropped, ResultEvent, ContextEvent, AgentStarted, TurnStarted, TextDelta, ModelBlock,
    ModelFinished, StreamFailed, ModelFallback, TurnFinished, AgentFinished,
]
EVENT_TYPES: dict[str, type[Event]] = {cls.kind: cls for cls in Event.__args__}  # type: ignore[attr-defined]
_LIVE_ONLY = frozenset({"result", "outcome", "context", "attachments", "input"})  # not written to JSON lines


def event_to_dict(event: Event) -> dict[str, Any]:
    """One JSON line of a trace: ``kind`` and the fields that are plain data."""
    out: dict[str, Any] = {"kind": event.kind}
    for f in dataclasses.fields(event):
        if f.name not in _LIVE_ONLY:
            out[f.name] = _jsonable(getattr(event, f.name))
    return out


def event_from_dict(raw: Mapping[str, Any]) -> Event:
    """The event a JSON line describes; a ValueError names an unknown kind or a bad field."""
    kind = raw.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}; known: {', '.join(sorted(EVENT_TYPES))}")
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{k: v for k, v in raw.items() if k in names})
    except TypeError as err:
        raise ValueError(f"bad {kind} event: {err}") from None


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)


# -- passing events on --------------------------------------------------------------------
Listener = Callable[[Event], None]


class RunEvents:
    """Fan-out of events to whoever listens (a Trace, a panel, a stream), with the run's clock."""

    __slots__ = ("_listeners", "clock", "listening")

    def __init__(self, listeners: Iterable[Listener] = (), clock: Callable[[], float] | None = None) -> None:
        # A tuple, replaced on (un)subscribe: an emit iterates it without copying, and a
        # listener that subscribes or leaves during an emit changes only later emits.
        self._listeners: tuple[Listener, ...] = tuple(listeners)
        self.clock = clock if clock is not None else time.monotonic
        # Whether anyone listens: a plain attribute, because emitters test it several times
        # per call and a ``__bool__`` call would cost more than the test is worth.
        self.listening = bool(self._listeners)

    @property
    def listeners(self) -> list[Listener]:
        return list(self._listeners)

    def __bool__(self) -> bool:
        return self.listening

    def emit(self, event: Event) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken viewer must never break a run
                pass

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners = (*self._listeners, listener)
        self.listening = True

        def unsubscribe() -> None:
            if listener in self._listeners:
                kept = list(self._listeners)
                kept.remove(listener)
                self._listeners = tuple(kept)
                self.listening = bool(kept)

        return unsubscribe



# -- the reducer ---------------------------------------------------------------------------
FINAL_STATUSES = frozenset({"completed", "error", "denied", "cancelled", "deferred"})


@dataclass(slots=True)
class CallState:
    """What is known about one call, from its events: a panel row, a timeline bar.

    ``status``: queued, awaiting_approval, executing, then completed, error, denied,
    cancelled or deferred.
    """

    tool_use_id: str
    tool_name: str
    input: dict[str, Any] = field(default_factory=dict)
    batch: int = 0
    status: str = "queued"
    safe: bool | None = None
    queued_at: float | None = None
    started_at: float | None = None
    asked_at: float | None = None
    answered_at: float | None = None
    finished_at: float | None = None
    answer: str | None = None
    progress_count: int = 0
    last_progress: Any = None  # the last ProgressEvent's data
    is_error: bool = False
    outcome: CallOutcome | None = None

    def apply(self, event: Event) -> None:
        """Fold one event of this call into the state."""
        batch: int = getattr(event, "batch", 0)
        if batch:
            self.batch = batch
        match event:
            case CallQueued():
                self.queued_at, self.safe = event.time, event.safe
            case CallStarted():
                self.started_at, self.status = event.time, "executing"
            case ApprovalAsked():
                self.asked_at, self.status = event.time, "awaiting_approval"
            case ApprovalAnswered():
                self.answered_at, self.answer, self.status = event.time, event.answer, "executing"
            case ProgressEvent():
                self.progress_count += 1
                self.last_progress = event.data
            case ProgressDropped():
                self.progress_count += event.count
            case ResultEvent():
                self.finished_at, self.status, self.is_error = event.time, event.status, event.is_error
                if event.outcome is not None:
                    self.outcome = event.outcome

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def waited(self) -> float | None:
        """Seconds spent waiting for a person (None if never asked)."""
        if self.asked_at is None:
            return None
        end = self.answered_at if self.answered_at is not None else self.finished_at
        return None if end is None else end - self.asked_at

    @property
    def duration(self) -> float | None:
        """Seconds from start to finish, the wait for approval included."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    @property
    def elapsed(self) -> float | None:
        """Seconds since the start, live while running (the wait for approval included)."""
        if self.started_at is None:
            return None
        end = self.finished_at if self.finished_at is not None else time.monotonic()
        return end - self.started_at

    @property
    def ran(self) -> float | None:
        """Seconds of work: the duration without the wait for approval."""
        duration = self.duration
        return None if duration is None else duration - (self.waited or 0.0)
