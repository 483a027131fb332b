"""A notebook run: the scheduler's live handle plus its panel; ``await run`` gives the results."""

from __future__ import annotations

import asyncio
import html
from typing import Any, Callable, Generator

from ..execution._pipeline import CallOutcome
from .._messages import ToolResultBlock
from ..scheduling._handle import RunHandle
from ..scheduling._timeline import render_svg_timeline, render_text_timeline
from ..scheduling._trace import Trace
from .._tool._abort import USER_ABORT, AbortSignal
from ._render import FG, clean_error, result_preview, timeline_html

__all__ = ["NotebookRun", "ResultList", "TimelineView"]


class ResultList(list[ToolResultBlock]):
    """The results of ``await run``: a plain list that shows as a readable table."""

    def text(self) -> str:
        lines = []
        for number, result in enumerate(self, 1):
            body = clean_error(result.text) if result.is_error else result.text
            first = body.strip().splitlines()[0] if body.strip() else "(no output)"
            more = len(body.strip().splitlines()) - 1
            lines.append(f"{number:>2}. {'error' if result.is_error else 'ok   '} {first[:100]}" + (f"  (+{more} lines)" if more > 0 else ""))
        return "\n".join(lines) or "(no results)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_html_(self) -> str:
        items = "".join(
            f"<details><summary style=\"cursor:pointer;color:{FG}\">#{n} {html.escape(r.tool_use_id)} "
            f"{'error' if r.is_error else 'ok'}</summary>{result_preview(r)}</details>"
            for n, r in enumerate(self, 1))
        return f'<div class="nts-results" style="font-size:12px;color:{FG}">{items}</div>'


class TimelineView:
    """A run's timeline: SVG in a notebook, text elsewhere."""

    def __init__(self, trace: Trace | None, title: str = "") -> None:
        self.trace = trace if trace is not None else Trace()
        self.title = title

    def svg(self) -> str:
        return render_svg_timeline(self.trace, title=self.title)

    def text(self) -> str:
        return render_text_timeline(self.trace)

    def html(self) -> str:
        """Theme-coloured bars with round ticks and a legend (what the panel shows)."""
        states = self.trace.states()
        title = f'<div style="font-size:12px;color:{FG}"><b>{html.escape(self.title)}</b></div>' if self.title else ""
        return title + timeline_html(states, [f"{s.tool_name} {s.tool_use_id[-8:]}" for s in states])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "image/svg+xml": self.svg(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


class NotebookRun:
    """What ``%%toolcall --name run`` binds: watch it, abort it, ``await run`` for results."""

    def __init__(self, handle: RunHandle, panel: Any, blocks: list[dict[str, Any]], label: str,
                 on_interrupt: Callable[[], None] | None = None) -> None:
        self.handle = handle
        self.panel = panel
        self.blocks = blocks
        self.label = label
        self.on_interrupt = on_interrupt
        self.origin: str | None = None  # the cell (or --name) that started it: a re-run replaces it
        self.await_interrupted = False  # the cell awaiting it was interrupted (shown as one short line)

    # -- results ------------------------------------------------------------------------------------
    def __await__(self) -> Generator[Any, None, ResultList]:
        try:
            results = yield from self.handle.__await__()
        except asyncio.CancelledError:
            # A kernel interrupt cancels the awaiting cell: stop the runs, and let the
            # session's handler show one line instead of a CancelledError traceback.
            self.await_interrupted = True
            if self.on_interrupt is not None:
                self.on_interrupt()
            raise
        return ResultList(results)

    def done(self) -> bool:
        return self.handle.done()

    @property
    def results(self) -> ResultList:
        return ResultList(self.handle.results)

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

    def abort(self, reason: str = USER_ABORT, by: str = "run.abort()") -> None:
        """Stop it: running tools are stopped, queued ones never start; every call gets a result."""
        if not self.handle.done() and getattr(self.panel, "stopped_by", "") is None:
            self.panel.stopped_by = by
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

    def _ipython_display_(self) -> None:
        """Shown with a display id, so the output can become the final record when it ends."""
        self.panel.record.show()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.panel.record.bundle()
