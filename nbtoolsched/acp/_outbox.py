"""Session updates on their way to the client: one at a time, in the order they were made.

The scheduler's listeners are plain synchronous callables, and a run must never wait on
a slow client, so an update is only queued where it is made (``put``); one task sends
them. Whoever must be sure the client has seen everything so far (a permission request
names a tool call the client must already know; a prompt's answer comes after all its
updates) awaits ``flush``. A client that went away makes the rest of the queue moot: it
is dropped, and nothing waits on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING

from .._tasks import TaskOwner

if TYPE_CHECKING:
    from acp.helpers import SessionUpdate
    from acp.interfaces import Client

__all__ = ["Outbox"]

log = logging.getLogger(__name__)


class Outbox:
    """The session's ordered stream of ``session/update`` notifications."""

    def __init__(self, client: Client, session_id: str, tasks: TaskOwner) -> None:
        self.client = client
        self.session_id = session_id
        self._tasks = tasks  # the session's: closing the session ends the sender
        self._queue: deque[tuple[SessionUpdate, str | None]] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._sender: asyncio.Task[None] | None = None
        self.broken = False  # the client stopped taking updates

    def put(self, update: SessionUpdate, *, replaces: str | None = None) -> None:
        """Queue ``update``; it is sent after everything queued before it.

        ``replaces``: a key for updates where only the latest counts (a running command's
        output so far): one still waiting last in the queue under the same key is replaced,
        so a flood of output never outruns the client."""
        if self.broken:
            return
        if replaces is not None and self._queue and self._queue[-1][1] == replaces:
            self._queue[-1] = (update, replaces)
            return
        self._queue.append((update, replaces))
        self._idle.clear()
        self._wake.set()
        if self._sender is None or self._sender.done():
            self._sender = self._tasks.start(self._send_all(), name=f"acp updates {self.session_id}")

    async def flush(self) -> None:
        """Return once everything queued so far was sent (or can no longer be)."""
        sender = self._sender
        if self._idle.is_set() or sender is None or sender.done():
            return
        waiter = self._tasks.start(self._idle.wait(), name="acp flush")
        try:
            await asyncio.wait([waiter, sender], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()

    async def _send_all(self) -> None:
        while True:
            while self._queue:
                update, _ = self._queue.popleft()
                try:
                    await self.client.session_update(session_id=self.session_id, update=update)
                except Exception as err:  # noqa: BLE001 - a client that is gone takes nothing more
                    log.warning("session %s: the client took no more updates (%s)", self.session_id, err)
                    self.broken = True
                    self._queue.clear()
            self._idle.set()
            self._wake.clear()
            await self._wake.wait()
