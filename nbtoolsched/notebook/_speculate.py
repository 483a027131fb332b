"""``%speculate``: the session's model runs a suggestion in an overlay, via the Agent loop."""

from __future__ import annotations

from typing import Any

from ..speculation._loop import LoopRequest, RunLoop

__all__ = ["fresh", "model_loop", "start_view"]


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


def start_view(session: Any, suggestion: str, model: Any) -> Any:
    """Start speculating now (a task on the kernel loop) and return its live diff view."""
    import asyncio

    from ..speculation import start_speculation
    from ._diffview import DiffView

    spec = start_speculation(suggestion, model_loop(fresh(model)), scheduler=session.scheduler, messages=())
    view = DiffView(spec, pump=session.pump, handoff=session.handoff, mode=session.permissions.mode)
    session.diff_views.append(view)
    waiter = asyncio.ensure_future(spec.wait())
    waiter.add_done_callback(lambda _t: session.pump.mark(view))
    view._waiter = waiter  # keep a strong reference until it is done
    session.pump.mark(view)
    return view
