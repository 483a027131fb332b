"""``%speculate``: the session's model runs a suggestion in an overlay, via the Agent loop.

With an ``%%agent`` conversation, the speculation starts from that conversation and the
agent's tool context (its files read, its cwd), and accepting it continues the same
conversation: the suggestion becomes the user's message and the speculated turns
follow it, in memory and in the transcript file. When the run stopped at a boundary,
the conversation then ends with a user message, and the next ``%%agent`` cell (even
an empty one) asks the model to go on from there, as Claude Code runs a normal turn
after accepting such a speculation.
"""

from __future__ import annotations

from typing import Any

from ..speculation._loop import LoopRequest, RunLoop

__all__ = ["ContinuingSpeculation", "fresh", "model_loop", "start_view"]


def fresh(model: Any) -> Any:
    """A scripted model from the start of its script, so each %speculate plays it anew
    (a used-up ScriptedModel would otherwise answer "script finished" forever)."""
    import dataclasses

    from ..models._scripted import ScriptedModel

    if isinstance(model, ScriptedModel) and not callable(model.script):
        return dataclasses.replace(model)
    return model


def model_loop(model: Any) -> RunLoop:
    """A speculation loop driving ``model`` through the Agent (the agent layer does the turns)."""
    from ..agent._loop import Agent

    async def run(request: LoopRequest) -> None:
        agent = Agent(model, request.scheduler, messages=list(request.messages), max_turns=request.max_turns)
        known = len(agent.messages)
        try:
            await agent.run(None, abort=request.abort)
        finally:
            for message in agent.messages[known:]:
                request.emit(message)

    return run


class ContinuingSpeculation:
    """A speculation whose ``accept`` also hands the kept messages to the agent conversation.

    Everything else is the speculation's own (the diff view only calls its methods)."""

    def __init__(self, speculation: Any, conversation: Any) -> None:
        self._speculation = speculation
        self._conversation = conversation

    def __getattr__(self, name: str) -> Any:
        return getattr(self._speculation, name)

    async def accept(self, *, paths: Any = None) -> Any:
        """Accept it (only ``paths``, if given: the messages then say which files were
        left out) and continue the conversation with what it said and did."""
        result = await (self._speculation.accept() if paths is None else self._speculation.accept(paths=paths))
        self._conversation.accept_speculation(self._speculation.suggestion, result.messages)
        return result


def start_view(session: Any, suggestion: str, model: Any, conversation: Any = None) -> Any:
    """Start speculating now (a task on the kernel loop) and return its live diff view."""
    from ..speculation import start_speculation
    from ._diffview import DiffView

    messages: list[dict[str, Any]] = []
    scheduler = session.scheduler
    if conversation is not None:
        messages, scheduler = conversation.speculation_base()
    # A standalone %speculate replays a scripted model from its start each time; one from a
    # conversation goes on with the agent's own model, where the conversation left it.
    loop = model_loop(model if conversation is not None else fresh(model))
    spec = start_speculation(suggestion, loop, scheduler=scheduler, messages=messages)
    shown = ContinuingSpeculation(spec, conversation) if conversation is not None else spec
    view = DiffView(shown, pump=session.pump, handoff=session.handoff, tasks=session.tasks, mode=session.permissions.mode)
    session.diff_views.append(view)
    waiter = session.tasks.start(spec.wait(), name="nbtoolsched-speculation-wait")
    waiter.add_done_callback(lambda _t: session.pump.mark(view))
    session.pump.mark(view)
    return view
