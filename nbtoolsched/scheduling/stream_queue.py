"""The queue between a run and a ``stream()`` consumer: bounded, and honest about what it dropped.

Progress arrives through a synchronous callback, so it cannot wait for a slow consumer
(no back-pressure is possible without blocking the tool). Instead at most ``cap``
progress events wait; past that the oldest waiting one is dropped, and a single
``ProgressEvent`` with data ``{"dropped": n}`` takes the place of a call's dropped
events, ahead of its surviving ones. Results, and the end marker, are never dropped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from ..messages import ProgressEvent

__all__ = ["StreamQueue", "STREAM_PROGRESS_CAP"]

STREAM_PROGRESS_CAP = 1000


class _Dropped:
    """Stands in the queue for one call's dropped progress events."""

    __slots__ = ("tool_use_id", "tool_name", "time", "count")

    def __init__(self, event: ProgressEvent) -> None:
        self.tool_use_id, self.tool_name, self.time, self.count = event.tool_use_id, event.tool_name, event.time, 0

    def event(self) -> ProgressEvent:
        return ProgressEvent(self.tool_use_id, self.tool_name, {"dropped": self.count}, self.time)


class StreamQueue:
    def __init__(self, cap: int = STREAM_PROGRESS_CAP) -> None:
        self.cap = cap
        self._items: deque[Any] = deque()
        self._progress = 0  # ProgressEvents waiting
        self._markers: dict[str, _Dropped] = {}  # the waiting marker of each call with drops
        self._ready = asyncio.Event()
        self.dropped = 0  # over the queue's life

    def __len__(self) -> int:
        return len(self._items)

    def put_progress(self, event: ProgressEvent) -> None:
        self._items.append(event)
        self._progress += 1
        if self._progress > self.cap:
            self._drop_oldest_progress()
        self._ready.set()

    def put(self, item: Any) -> None:
        """A result or the end marker: always kept."""
        self._items.append(item)
        self._ready.set()

    def _drop_oldest_progress(self) -> None:
        items = self._items
        index = next(i for i, item in enumerate(items) if type(item) is ProgressEvent)
        event = items[index]
        self._progress -= 1
        self.dropped += 1
        marker = self._markers.get(event.tool_use_id)
        if marker is None:  # the marker takes the dropped event's place
            marker = self._markers[event.tool_use_id] = _Dropped(event)
            items[index] = marker
        else:
            del items[index]
        marker.count += 1

    async def get(self) -> Any:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        if type(item) is ProgressEvent:
            self._progress -= 1
        elif isinstance(item, _Dropped):
            del self._markers[item.tool_use_id]
            return item.event()
        return item
