"""What a ``%%agent`` cell shows while the session runs, and after.

In the order things happen: the assistant's text rendered as Markdown as it streams,
each turn's tool calls in the same panel ``%%toolcall`` uses (rows, batches, progress,
inline approvals), and a notice whenever the session itself changes course (a model
switch, an answer dropped and asked again, an interrupt, a pause for approval). A Stop
button, in the header row as in ``%%toolcall``'s panel, ends the turn cleanly.

Things are said once: the view's header carries the cell's state in plain words (the
agent's raw stop reason stays in a tooltip and a ``data-`` attribute), so a turn's panel
shows no Stop, no style block and no frame of its own while it runs. ``snapshot_html()``
is the view's state now as static HTML; once the cell is over it is the final record.

The view only turns the agent's events into widgets. Events arrive on the loop thread;
the view records them in plain Python and marks itself dirty, and the session's UI
pump renders at most about ten times a second (one message per changed widget).
Widgets are made by the pump too, never by an event: a tool starts the moment its
block is complete, and building a panel must not stand in its way. A turn's calls
reach the tool panel through ``TurnHandle``: a run handle whose calls join as their
tool_use blocks finish streaming.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable

import ipywidgets as widgets

from .._events import (AgentFinished, CallQueued, CallState, ModelBlock, ModelFallback, ModelFinished, ResultEvent,
                       RunEvents, StreamFailed, TextDelta, TurnFinished, TurnStarted)
from ..agent import _texts as agent_texts
from ..permissions._approvals import ApprovalBroker
from ..scheduling._handle import RunHandle
from .._tool._abort import AbortSignal
from ._markdown import markdown_html
from ._panel import RunPanel
from ._record import GONE_HTML, PANEL_CSS, Record
from ._render import BORDER, FG, FG2
from ._pump import UIPump

__all__ = ["AgentView", "TurnHandle", "stop_words"]

_RENDERS_KEPT = 500  # text lengths kept per text block (what a person saw, for tests and debugging)
# The agent's stop reasons (AgentResult.stop_reason) in the words a person reads.
_STOPS = {
    "end_turn": "finished",
    "max_turns": "stopped at the turn limit (--max-turns)",
    "max_messages": "stopped at the message limit",
    "aborted_streaming": "stopped while the model was answering",
    "aborted_tools": "stopped while tools were running",
    "hook_stopped": "stopped by a hook",
    "model_error": "stopped: the model request failed",
    "approval_deferred": "paused: an approval was deferred",
    "not started": "stopped before it started",
}
# The last answer's own stop reason (the model's), where it says more than "finished".
_MODEL_STOPS = {
    "max_tokens": "stopped: the model hit its output limit",
    "model_context_window_exceeded": "stopped: the conversation is too long for the model",
    "refusal": "stopped: the model declined to answer",
    "pause_turn": "stopped: the model paused its answer",
}
# A turn's panel is nested (``RunPanel(nested=True)``): no Stop, style block or frame of its
# own, the view's serve it. A text block's outer paragraph margins (1em each side) would double every gap.
_AGENT_CSS = """<style>
.nts-agent .nts-md > :first-child { margin-top: 2px; }
.nts-agent .nts-md > :last-child { margin-bottom: 2px; }
</style>"""
_SNAPSHOT_NOTE = "saved while the cell was running: what it had said and done by then"


def stop_words(stop_reason: str | None, model_stop: str | None = None, status: str = "finished") -> str:
    """How a cell that is over ended, in plain words (never the raw reason)."""
    if stop_reason == "end_turn" and model_stop in _MODEL_STOPS:
        return _MODEL_STOPS[model_stop]
    if stop_reason in _STOPS:
        return _STOPS[stop_reason]
    return "failed" if status == "failed" else ("finished" if status == "finished" else "stopped")


class TurnHandle(RunHandle):
    """One model turn's tool calls, as a run handle a ``RunPanel`` can watch.

    A batch run knows its calls up front; an agent turn learns them as their blocks
    finish streaming, so each call's row is added when its ``CallQueued`` arrives (with
    the input its ``ModelBlock`` carried)."""

    def __init__(self, turn: int, abort: AbortSignal) -> None:
        super().__init__([], abort, RunEvents())
        self.turn = turn
        self._inputs: dict[str, Any] = {}
        self._outcomes: list[Any] = []

    def _on_event(self, event: Any) -> None:
        if isinstance(event, ModelBlock):
            if event.tool_use_id:
                self._inputs[event.tool_use_id] = event.input
            return
        if isinstance(event, CallQueued) and event.tool_use_id not in self.states:
            data = self._inputs.pop(event.tool_use_id, None)
            self.states[event.tool_use_id] = CallState(event.tool_use_id, event.tool_name, data if isinstance(data, dict) else {})
            self.order.append(event.tool_use_id)
        elif isinstance(event, ResultEvent) and event.outcome is not None:
            self._outcomes.append(event.outcome)
        super()._on_event(event)

    @property
    def finished_outcomes(self) -> list[Any]:
        """The outcomes of the calls finished so far."""
        return list(self._outcomes)

    def close(self) -> None:
        """The turn is over (or its answer was dropped): every call has its result."""
        if not self.done():
            self.finish(list(self._outcomes), None, None)


@dataclass
class _Text:
    text: str = ""
    dirty: bool = True
    dropped: bool = False
    renders: list[int] = field(default_factory=list)  # the length shown at each render
    widget: widgets.HTML | None = None


@dataclass
class _Tools:
    handle: TurnHandle
    title: str
    widget: RunPanel | None = None


@dataclass
class _Notice:
    text: str
    level: str  # info, warning, error
    widget: widgets.HTML | None = None


class AgentView(widgets.VBox):
    """A ``%%agent`` cell's live output; ``on_event`` is the agent's listener."""

    def __init__(
        self,
        title: str,
        *,
        pump: UIPump,
        handoff: Callable[..., None],
        broker: ApprovalBroker | None,
        abort: AbortSignal,
        on_stop: Callable[[], None],
        cwd: str = ".",
    ) -> None:
        self.title = title  # "%%agent NAME" with --name NAME, else "%%agent #N"
        self.pump = pump
        self._handoff = handoff
        self.broker = broker
        self._abort = abort
        self.cwd = cwd  # the session's, as its tools use it: a diff's paths are shown relative to it
        self.status = "waiting"  # waiting, running, then finished / stopped / failed
        self.model = ""
        self.turn = 0
        self.stop_reason: str | None = None  # the agent's, raw (shown only in a tooltip and data-stop-reason)
        self.model_stop: str | None = None  # the last answer's own stop reason (the model's), raw
        self.failure: str | None = None
        self._segments: list[Any] = []  # _Text, _Tools and _Notice, in the order they happened
        self._texts: dict[tuple[int, int, int], _Text] = {}
        self._handle: TurnHandle | None = None
        self._owners: dict[str, TurnHandle] = {}  # tool_use_id -> its turn's handle (results may come after a turn is dropped)
        self._attempt = 0  # answers dropped so far (their text stays, struck through)
        self._closed = False
        self.header = widgets.HTML()
        self.stop_button = _stop_button()
        self.stop_button.on_click(lambda _b: self._handoff(on_stop))
        # the header row, as in %%toolcall's panel: the title line, then its button, one row
        self.header_row = widgets.HBox([self.header, self.stop_button],
                                       layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        self.body = widgets.VBox()
        self.footer = widgets.HTML()
        # the saved notebook's copy: the state now while it runs, a true record once it is over
        self.record = Record(self, self.text, self.snapshot_html)
        self.style_html = widgets.HTML(PANEL_CSS + _AGENT_CSS + GONE_HTML)
        super().__init__([self.style_html, self.header_row, self.body, self.footer],
                         layout=widgets.Layout(border=f"1px solid {BORDER}", padding="4px"))
        self.add_class("nts-agent")
        self.add_class("nts-panel")  # the panel's CSS: a view whose kernel is gone says so
        self.add_class(f"nts-live-{self.record.key}")  # while it is drawn, its snapshot output hides
        self.render()

    # -- events (loop thread) ---------------------------------------------------------------------
    def start(self, model: str) -> None:
        self.status, self.model = "running", model
        self.pump.mark(self)

    def on_event(self, event: Any) -> None:
        match event:
            case TextDelta():
                self._text_for(event.turn, event.index).text += event.text
                self._texts[(self._attempt, event.turn, event.index)].dirty = True
            case TurnStarted():
                self.turn = event.turn
            case ModelBlock() if event.tool_use_id:
                handle = self._owners[event.tool_use_id] = self._turn_handle()
                handle.events.emit(event)
            case StreamFailed():
                self._stream_failed(event)
            case ModelFallback():
                self._notice(agent_texts.model_switched(event.from_model, event.to_model, event.reason), "warning")
            case ModelFinished():
                self.model_stop = event.stop_reason
                return  # nothing shown changes until the session ends on it
            case TurnFinished():
                self._close_turn()
            case AgentFinished():
                self._finished(event)
            case _ if getattr(event, "tool_use_id", "") in self._owners:
                self._owners[event.tool_use_id].events.emit(event)
            case _:
                return
        self.pump.mark(self)

    def _text_for(self, turn: int, index: int) -> _Text:
        key = (self._attempt, turn, index)
        segment = self._texts.get(key)
        if segment is None:
            segment = self._texts[key] = _Text()
            self._segments.append(segment)
        return segment

    def _turn_handle(self) -> TurnHandle:
        if self._handle is None:
            self._handle = TurnHandle(self.turn, self._abort)
            self._segments.append(_Tools(self._handle, f"turn {self.turn}: tool calls"))
        return self._handle

    def _tools(self) -> list[_Tools]:
        return [s for s in self._segments if isinstance(s, _Tools)]

    @property
    def panels(self) -> list[RunPanel]:
        """The tool panels rendered so far, one per turn that called tools."""
        return [s.widget for s in self._tools() if s.widget is not None]

    def _close_turn(self) -> None:
        if self._handle is not None:
            self._handle.close()
            tools = self._tools()[-1]
            if tools.widget is not None:
                self.pump.mark(tools.widget)
            self._handle = None

    def _stream_failed(self, event: StreamFailed) -> None:
        if not event.will_retry:
            self._notice(f"The model could not answer ({event.error_kind}: {event.message}).", "error")
            return
        for key, segment in self._texts.items():  # what was said so far is dropped from the conversation
            if key[0] == self._attempt and key[1] == event.turn:
                segment.dropped = segment.dirty = True
        if self._handle is not None:
            tools = self._tools()[-1]
            tools.title = f"turn {event.turn}: tool calls of the dropped answer"
            if tools.widget is not None:
                tools.widget.title = tools.title
        self._close_turn()
        self._attempt += 1
        self._notice(f"The answer failed while streaming ({event.error_kind}: {event.message}); "
                     "it was dropped and the turn starts again.", "warning")

    def _finished(self, event: AgentFinished) -> None:
        self._close_turn()
        self.stop_reason = event.stop_reason
        self.status = "stopped" if event.stop_reason.startswith("aborted") else "finished"
        if event.stop_reason.startswith("aborted"):  # the header says it stopped; this says what that leaves
            self._notice("Every tool call has its result and the transcript is valid: "
                         "the next %%agent cell continues from here.", "info")
        elif event.stop_reason == "approval_deferred":
            waiting = [o for t in self._tools() for o in t.handle.outcomes or [] if o.status == "deferred"]
            names = ", ".join(f"{o.tool_name} ({o.tool_use_id})" for o in waiting) or "a call"
            self._notice(f"Paused: the approval policy deferred {names}. Allow it (for example "
                         "%toolsched allow RULE, or %toolsched policy ask) and continue in a new %%agent cell.", "warning")
        # model_error: the StreamFailed notice before it already said what failed, in its place

    def _notice(self, text: str, level: str) -> None:
        self._segments.append(_Notice(text, level))

    def fail(self, message: str) -> None:
        """The session itself failed (a bug, a model that is not one): shown, never hung on."""
        self._close_turn()
        self.status, self.failure = "failed", message
        self.pump.mark(self)

    def not_started(self) -> None:
        self.status, self.stop_reason = "stopped", "not started"
        self._notice("It was stopped before its turn came: nothing was sent to the model.", "info")
        self.pump.mark(self)

    # -- what the pump calls ----------------------------------------------------------------------
    def live(self) -> bool:
        return self.status in ("waiting", "running") and not self._closed

    def render(self) -> None:
        if self._closed:
            return
        self._render_live()
        if self.live():
            self.record.refresh()  # the saved notebook's copy follows (at most once a second)
        elif self.record.final is None:
            self.record.finish(self.snapshot_html(), self.text())

    def _ipython_display_(self) -> None:
        self.record.show()

    def snapshot_html(self) -> str:
        """The view's state now as static HTML: the text streamed so far, each turn's calls
        and their states, which call waits for approval, how it ended. Once the cell is over
        this is its final record. Loop thread (it may make a turn's panel on first need)."""
        parts = []
        live_turn = False
        for segment in self._segments:
            if isinstance(segment, _Text):
                parts.append(markdown_html(segment.text, muted=segment.dropped))
            elif isinstance(segment, _Tools):
                panel = self._panel(segment)
                if panel.live():
                    live_turn = True
                    parts.append(panel.snapshot_html())
                else:
                    parts.append(panel.record_html())
            else:
                parts.append(_notice_html(segment))
        live = self.live()
        note = ""
        if live and not live_turn:  # a running turn's panel says it for itself
            note = f'<div class="nts-agent-snapshot-note" style="font-size:12px;color:{FG2}">{_SNAPSHOT_NOTE}</div>'
        kind = "nts-agent-snapshot" if live else "nts-agent-record"
        return (f'<div class="nts-record {kind}" data-live="{str(live).lower()}" '
                f'style="color:{FG};border:1px solid {BORDER};padding:4px">'
                f'{self._header_html(saved=live)}{note}{"".join(parts)}{self._footer_html()}</div>')

    def record_html(self) -> str:
        """The finished cell as static HTML (``snapshot_html`` of a cell that is over)."""
        return self.snapshot_html()

    def _render_live(self) -> None:
        for segment in self._segments:
            if segment.widget is None:
                segment.widget = self._make_widget(segment)
            if isinstance(segment, _Text) and segment.dirty:
                segment.dirty = False
                segment.widget.value = markdown_html(segment.text, muted=segment.dropped)
                if len(segment.renders) < _RENDERS_KEPT:
                    segment.renders.append(len(segment.text))
        children = tuple(s.widget for s in self._segments)
        if children != tuple(self.body.children):
            self.body.children = children
        _set(self.header, self._header_html())
        live = self.live()
        if self.stop_button.disabled == live:
            with self.stop_button.hold_sync():
                self.stop_button.disabled = not live
                self.stop_button.layout.display = "" if live else "none"
        _set(self.footer, self._footer_html())

    def _panel(self, segment: _Tools) -> RunPanel:
        """A turn's tool panel, made on first need (off the tools' path)."""
        if segment.widget is None:
            segment.widget = self._make_widget(segment)
        return segment.widget

    def _make_widget(self, segment: Any) -> Any:
        if isinstance(segment, _Text):
            widget = widgets.HTML()
            widget.add_class("nts-agent-text")
            return widget
        if isinstance(segment, _Tools):
            panel = RunPanel(segment.handle, pump=self.pump, handoff=self._handoff, broker=self.broker,
                             title=segment.title, cwd=self.cwd, nested=True)
            panel.outcomes.update({o.tool_use_id: o for o in segment.handle.finished_outcomes})  # before it listened
            panel.add_class("nts-agent-turn")
            return panel
        return widgets.HTML(_notice_html(segment))

    def waiting_for_approval(self) -> list[str]:
        """The tool_use ids of this cell's calls that wait for a person now."""
        if self.broker is None:
            return []
        pending = self.broker.pending
        return [key for key in self._owners if key in pending]

    def state_words(self) -> str:
        """The cell's state in plain words: running, waiting for approval, finished, stopped: ..."""
        if self.status == "running":
            waiting = len(self.waiting_for_approval())
            if waiting:
                return "waiting for approval" + (f" ({waiting} calls)" if waiting > 1 else "")
            return "running"
        if self.status in ("waiting", "failed"):
            return self.status
        return stop_words(self.stop_reason, self.model_stop, self.status)

    def _header_html(self, saved: bool = False) -> str:
        """``saved``: the header of the saved copy of a live view, whose state is the one it
        had when the notebook was saved."""
        parts = [f"<b>{html.escape(self.title)}</b>"]
        if self.model:
            parts.append(html.escape(self.model))
        if self.turn:
            over = not self.live()
            parts.append(f"{self.turn} turn{'s' if self.turn != 1 else ''}" if over else f"turn {self.turn}")
        attrs = f' data-status="{html.escape(self.status)}"'
        if self.stop_reason is not None and not self.live():  # the raw reasons: for a tooltip and tests only
            tip = f"stop reason: {self.stop_reason}"
            attrs += f' data-stop-reason="{html.escape(self.stop_reason)}"'
            if self.model_stop:
                tip += f"; the model's last answer: {self.model_stop}"
                attrs += f' data-model-stop="{html.escape(self.model_stop)}"'
            attrs += f' title="{html.escape(tip)}"'
        words = self.state_words() + (" when saved" if saved else "")
        parts.append(f'<span class="nts-agent-status"{attrs}>{html.escape(words)}</span>')
        return (f'<div class="nts-agent-header" style="font-size:12px;color:{FG};margin-right:8px">'
                f'{" · ".join(parts)}</div>')

    def _footer_html(self) -> str:
        if not self.failure:
            return ""
        return (f'<div class="nts-agent-failure" style="font-size:12px;color:{FG};'
                f'border-left:4px solid var(--jp-error-color1, #d32f2f);padding-left:4px">{html.escape(self.failure)}</div>')

    # -- text for nbval, consoles and the history -------------------------------------------------------
    @property
    def texts(self) -> list[str]:
        """The assistant's text blocks so far, in order (dropped answers left out)."""
        return [s.text for s in self._segments if isinstance(s, _Text) and not s.dropped]

    def text(self) -> str:
        lines = [f"{self.title}: {self.state_words()}"]
        for segment in self._segments:
            if isinstance(segment, _Text):
                mark = "  [dropped] " if segment.dropped else "  "
                lines += [mark + line for line in segment.text.splitlines() or [""]]
            elif isinstance(segment, _Tools):
                lines += ["  " + line for line in self._panel(segment).text().splitlines()]
            else:
                lines.append(f"  ! {segment.text}")
        if self.failure:
            lines.append(f"  failed: {self.failure}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def close(self) -> None:
        self._closed = True
        for segment in self._segments:
            if segment.widget is not None:
                segment.widget.close()
        super().close()


def _notice_html(segment: Any) -> str:
    """A notice: the text in the theme's colour, its level as a coloured edge."""
    edge = {"warning": "var(--jp-warn-color1, #ef6c00)", "error": "var(--jp-error-color1, #d32f2f)"}.get(
        segment.level, "var(--jp-border-color1, #8c959f)")
    return (f'<div class="nts-agent-notice nts-{segment.level}" style="font-size:12px;color:{FG};'
            f'border-left:4px solid {edge};padding-left:4px;margin:2px 0">{html.escape(segment.text)}</div>')


def _stop_button() -> widgets.Button:
    """The view's Stop, made as %%toolcall's header buttons are: small, theme-coloured (the
    panel's CSS gives ``nts-btn-danger`` a red edge; ipywidgets' ``button_style="danger"``
    would put white text on a light red)."""
    button = widgets.Button(description="Stop", icon="stop",
                            tooltip="End the turn now: every tool call still gets a result, and the next %%agent cell continues",
                            layout=widgets.Layout(width="auto", height="24px", margin="0 4px 0 0"))
    button.add_class("nts-agent-stop")
    button.add_class("nts-btn-danger")
    return button


def _set(widget: widgets.HTML, value: str) -> None:
    if widget.value != value:
        widget.value = value
