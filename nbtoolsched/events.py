"""The events of a run and of an agent session: one typed model, matched on the class.

    from nbtoolsched import events

    async for event in sched.stream(blocks):
        match event:
            case events.ProgressEvent(): ...
            case events.ResultEvent(): ...

``Scheduler.stream`` yields ``ProgressEvent``, ``ProgressDropped``, ``ResultEvent`` and
``ContextEvent`` (``SchedulerEvent``); a listener (``Scheduler.events.subscribe``,
``RunHandle.subscribe``, ``Agent(on_event=...)``) gets every event (``Event``), the very
objects a stream yields. ``kind`` is the class name in snake case, for JSON lines
(``event_to_dict``, ``event_from_dict``) and ``Trace.of_kind``. ``CallState`` folds one
call's events into what a panel row or a timeline bar shows.
"""

from ._events import (
    EVENT_TYPES,
    AgentFinished,
    AgentStarted,
    ApprovalAnswered,
    ApprovalAsked,
    CallEvent,
    CallQueued,
    CallStarted,
    CallState,
    ContextEvent,
    Event,
    Listener,
    ModelBlock,
    ModelFallback,
    ModelFinished,
    ProgressDropped,
    ProgressEvent,
    ResultEvent,
    RunEvents,
    RunFinished,
    RunStarted,
    SchedulerEvent,
    StreamFailed,
    TextDelta,
    TurnFinished,
    TurnStarted,
    event_from_dict,
    event_to_dict,
)
from ._exports import publish

__all__ = [
    # a run
    "RunStarted", "CallQueued", "CallStarted", "ApprovalAsked", "ApprovalAnswered", "ProgressEvent",
    "ProgressDropped", "ResultEvent", "ContextEvent", "RunFinished",
    # an agent session
    "AgentStarted", "TurnStarted", "TextDelta", "ModelBlock", "ModelFinished", "StreamFailed", "ModelFallback",
    "TurnFinished", "AgentFinished",
    # what they are together, and what is done with them
    "Event", "CallEvent", "SchedulerEvent", "CallState", "Listener", "RunEvents",
    "EVENT_TYPES", "event_to_dict", "event_from_dict",
]

publish(__name__, __all__, globals())
