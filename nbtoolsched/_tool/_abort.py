"""Abort signals that form a tree: query -> sibling group -> one tool.

A child is aborted whenever an ancestor is, with the ancestor's reason, but aborting a
child leaves its parent alone unless the child was told to bubble. Children are checked
lazily (walking up the chain), so a run of 10,000 calls leaves no listeners behind.
"""

from __future__ import annotations

from .._errors import NbtoolschedError

import asyncio
from typing import Callable

__all__ = ["AbortSignal", "AbortError", "SIBLING_ERROR", "INTERRUPT", "USER_ABORT", "STREAMING_FALLBACK"]

# Reasons with a meaning to the scheduler; any other string is allowed too.
SIBLING_ERROR = "sibling_error"
INTERRUPT = "interrupt"  # a new user message, sent while every running tool is "cancel" (else it waits)
USER_ABORT = "user_abort"  # Esc, Ctrl+C, a kernel interrupt, a rejected prompt
STREAMING_FALLBACK = "streaming_fallback"


class AbortError(NbtoolschedError):
    """Raised inside a tool when its signal aborted and it chose to stop."""


class AbortSignal:
    """One node of the abort tree (an AbortController and its signal in one object)."""

    __slots__ = ("_reason", "_parent", "_callbacks", "_bubble")

    def __init__(self, parent: "AbortSignal | None" = None, *, bubble: Callable[[str], None] | None = None) -> None:
        self._reason: str | None = None
        self._parent = parent
        self._callbacks: list[Callable[[str], None]] | None = None
        self._bubble = bubble

    def child(self, *, bubble: Callable[[str], None] | None = None) -> "AbortSignal":
        return AbortSignal(self, bubble=bubble)

    @property
    def aborted(self) -> bool:
        node: AbortSignal | None = self
        while node is not None:
            if node._reason is not None:
                return True
            node = node._parent
        return False

    @property
    def reason(self) -> str | None:
        """This node's reason, or the nearest aborted ancestor's."""
        node: AbortSignal | None = self
        while node is not None:
            if node._reason is not None:
                return node._reason
            node = node._parent
        return None

    def abort(self, reason: str = USER_ABORT) -> None:
        """Abort this node and its children; bubble to the parent if told to. A node already
        aborted, by itself or through an ancestor, ignores it (as an AbortController whose
        parent's abort reached it does): its reason stays, and nothing bubbles."""
        if self.aborted:
            return
        self._reason = reason
        self._fire(reason)
        if self._bubble is not None:
            self._bubble(reason)

    def _fire(self, reason: str) -> None:
        callbacks, self._callbacks = self._callbacks, None
        for callback in callbacks or ():
            callback(reason)

    def on_abort(self, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(reason)`` once when this node or an ancestor aborts.

        Returns a function that unregisters it; call it when done so nothing leaks.
        If already aborted, the callback runs at once.
        """
        reason = self.reason
        if reason is not None:
            callback(reason)
            return _noop
        registered: list[tuple[AbortSignal, Callable[[str], None]]] = []
        fired = False

        def once(why: str) -> None:
            nonlocal fired
            if not fired:
                fired = True
                remove()
                callback(why)

        def remove() -> None:
            for node, cb in registered:
                if node._callbacks and cb in node._callbacks:
                    node._callbacks.remove(cb)
            registered.clear()

        node: AbortSignal | None = self
        while node is not None:
            if node._callbacks is None:
                node._callbacks = []
            node._callbacks.append(once)
            registered.append((node, once))
            node = node._parent
        return remove

    async def wait(self) -> str:
        """Sleep until aborted; returns the reason."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        def settle(why: str) -> None:
            if not future.done():
                future.set_result(why)

        remove = self.on_abort(settle)
        try:
            return await future
        finally:
            remove()

    def raise_if_aborted(self) -> None:
        if self.aborted:
            raise AbortError(self.reason or USER_ABORT)

    def __repr__(self) -> str:
        return f"AbortSignal(reason={self.reason!r})"


def _noop() -> None:
    return None
