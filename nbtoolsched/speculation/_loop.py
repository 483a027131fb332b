"""The small interface between speculation and whatever agent loop runs the turns.

A loop is an async callable taking a ``LoopRequest``: it runs turns on the given
conversation with the given scheduler (the sandboxed one), reports every new message
through ``emit`` as soon as it exists, stops when ``abort`` fires, and runs at most
``max_turns`` turns. ``scripted_loop`` is a complete loop over pre-written turns, for
tests, teaching and benchmarks; ``agent_loop`` adapts an Agent-style object.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol, Sequence

from ..scheduling._scheduler import Scheduler
from .._tool._abort import AbortSignal

__all__ = ["AgentFactory", "LoopRequest", "RunLoop", "ScriptedTurn", "agent_loop", "scripted_loop", "sleep_unless_aborted"]


@dataclass(slots=True)
class LoopRequest:
    messages: list[dict[str, Any]]  # the conversation so far, ending with user(suggestion)
    scheduler: Scheduler  # sandboxed: its permission gate is the speculation's
    abort: AbortSignal
    max_turns: int
    emit: Callable[[dict[str, Any]], None]  # every new assistant / user message, in order


class RunLoop(Protocol):
    def __call__(self, request: LoopRequest) -> Awaitable[Any]: ...


@dataclass(slots=True)
class ScriptedTurn:
    """One assistant message, written in advance, and how long the model takes to say it."""

    content: list[dict[str, Any]]
    delay: float = 0.0


async def sleep_unless_aborted(seconds: float, abort: AbortSignal) -> bool:
    """Sleep; True if the abort fired first."""
    if seconds <= 0:
        return abort.aborted
    try:
        await asyncio.wait_for(abort.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True


def scripted_loop(turns: Sequence[ScriptedTurn | Sequence[dict[str, Any]]], *, turn_delay: float = 0.0) -> RunLoop:
    """A loop that answers with ``turns`` in order and runs their tool calls for real.

    It stops after a turn with no tool_use, at ``max_turns``, or when aborted (the
    tool_result message of an aborted turn is still emitted: every call is answered).
    """
    script = [t if isinstance(t, ScriptedTurn) else ScriptedTurn(list(t), turn_delay) for t in turns]

    async def run(request: LoopRequest) -> None:
        for turn in script[: request.max_turns]:
            if await sleep_unless_aborted(turn.delay, request.abort):
                return
            request.emit({"role": "assistant", "content": [dict(b) for b in turn.content]})
            uses = [b for b in turn.content if b.get("type") == "tool_use"]
            if not uses:
                return
            result = await request.scheduler.run_outcomes(uses, abort=request.abort)
            request.emit({"role": "user", "content": [o.result.to_dict() for o in result.outcomes]})
            if request.abort.aborted:
                return

    return run


# (scheduler, messages, max_turns) -> an agent: ``.messages`` (the live transcript, a
# list it appends to), ``.subscribe(listener) -> unsubscribe`` and
# ``async .run(prompt, abort=...)`` answering ``messages`` when ``prompt`` is None.
AgentFactory = Callable[[Scheduler, list[dict[str, Any]], int], Any]


def agent_loop(make_agent: AgentFactory) -> RunLoop:
    """A loop backed by an agent, e.g. ``lambda s, m, n: Agent(model, s, messages=m, max_turns=n)``.

    The speculation layer sits below the agent layer, so the agent is built by the
    caller's factory. New messages are reported after every finished turn (when they
    can no longer change) and once more at the end.
    """

    async def run(request: LoopRequest) -> Any:
        agent = make_agent(request.scheduler, list(request.messages), request.max_turns)
        sent = len(request.messages)

        def flush(event: Any = None) -> None:
            nonlocal sent
            if event is not None and getattr(event, "kind", None) != "turn_finished":
                return
            messages = agent.messages
            for message in messages[sent:]:
                request.emit(message)
            sent = len(messages)

        unsubscribe = agent.subscribe(flush)
        try:
            return await agent.run(None, abort=request.abort)
        finally:
            unsubscribe()
            flush()

    return run
