"""A notebook run: the scheduler's live handle plus its panel; ``await run`` gives the results."""

from __future__ import annotations

from typing import Any, Generator

from ..execution._pipeline import CallOutcome
from .._messages import ToolResultBlock
from ..scheduling._handle import RunHandle
from ..scheduling._timeline import render_svg_timeline, render_text_timeline
from ..scheduling._trace import Trace
from ..tool._abort import USER_ABORT, AbortSignal

__all__ = ["NotebookRun", "TimelineView"]


class TimelineView:
    """A run's timeline: SVG in a notebook, text elsewhere."""

    def __init__(self, trace: Trace | None, title: str = "") -> None:
        self.trace = trace if trace is not None else Trace()
        self.title = title

    def svg(self) -> str:
        return render_svg_timeline(self.trace, title=self.title)

    def text(self) -> str:
        return render_text_timeline(self.trace)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"image/svg+xml": self.svg(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


class NotebookRun:
    """What ``%%toolcall --name run`` binds: watch it, abort it, ``await run`` for results."""

    def __init__(self, handle: RunHandle, panel: Any, blocks: list[dict[str, Any]], label: str) -> None:
        self.handle = handle
        self.panel = panel
        self.blocks = blocks
        self.label = label

    # -- results ------------------------------------------------------------------------------------
    def __await__(self) -> Generator[Any, None, list[ToolResultBlock]]:
        return self.handle.__await__()

    def done(self) -> bool:
        return self.handle.done()

    @property
    def results(self) -> list[ToolResultBlock]:
        return self.handle.results

    @property
    def outcomes(self) -> list[CallOutcome]:
        if self.handle.outcomes is None:
            raise RuntimeError("the run has not finished; await it first")
        return self.handle.outcomes

    @property
    def states(self) -> dict[str, Any]:
        return self.handle.states

    @property
    def abort_signal(self) -> AbortSignal:
        return self.handle.abort_signal

    def summary(self) -> str:
        return self.handle.summary()

    def abort(self, reason: str = USER_ABORT) -> None:
        """Stop it: running tools are stopped, queued ones never start; every call gets a result."""
        self.handle.abort(reason)

    def timeline(self) -> TimelineView:
        return TimelineView(self.handle.trace, self.label)

    # -- display ---------------------------------------------------------------------------------------
    def text(self) -> str:
        return self.panel.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.panel._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = self.text()
        return bundle
