"""The live run panel: a line per call, one prompt at a time, a header to act on all, a record.

The panel only renders what the run handle and the approval broker already know; it
never schedules anything. It works for any ``RunHandle`` (a ``%%toolcall`` cell, one
turn of an agent): ``RunPanel(handle, pump=..., handoff=..., broker=...)``.

From the top: the header (title, counts, Approve all, Deny all, Stop, timeline); the
prompt of the first call that waits for a person, right under the header, so its
buttons stay in one place from one prompt to the next (the others wait their turn:
"1 of 3 waiting"); then one line per call, on one grid. A click on a finished line opens
its result. The keyboard answers the prompt as Claude Code's does (``_keys``).

When the run ends the panel collapses to a summary line (tqdm-style) and its outputs
become static HTML of the final state; while it runs, the saved notebook's copy of it
says the state it has now (``_record``).
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Any, Callable

import ipywidgets as widgets

from .._events import Event, ResultEvent
from ..permissions._approvals import ApprovalAnswer, ApprovalBroker, BrokerEvent
from ..scheduling._handle import RunHandle
from ._approval_row import ApprovalRow, reason_text
from ._blocking import follow_frontend_routing
from ._keys import PanelKeys
from ._pump import UIPump
from ._record import GONE_HTML, PANEL_CSS, Record
from ._render import (
    BORDER,
    FG,
    FG2,
    FINAL_STATES,
    RowView,
    clean_error,
    counts_text,
    result_preview,
    row_text,
    rows_html,
    timeline_html,
)

__all__ = ["RunPanel"]

_SIBLING = "parallel call"


class RunPanel(widgets.VBox):
    """What a ``%%toolcall`` cell (or an agent's turn) shows while and after its calls run."""

    def __init__(
        self,
        handle: RunHandle,
        *,
        pump: UIPump,
        handoff: Callable[..., None],
        broker: ApprovalBroker | None = None,
        title: str = "toolcall",
        cwd: str = ".",
        max_concurrency: int | None = None,
        nested: bool = False,
    ) -> None:
        """``nested``: a panel inside another view (an agent's turn) that says nothing the view
        says: no Stop (the view's ends the same run), no style block of its own, no frame."""
        self.handle = handle
        self.nested = nested
        self.broker = broker
        self.pump = pump
        self._handoff = handoff
        self.title = title
        self.cwd = cwd
        self.max_concurrency = max_concurrency
        self.failure: str | None = None  # a bug in the run itself, shown instead of hanging
        self.notice: str | None = None  # e.g. "replaced by a new run of the cell"
        self.stopped_by: str | None = None  # what stopped the run (Stop button, kernel interrupt...)
        self.allow_rest = False  # Approve all: every later ask of this run is allowed too
        self._closed = False
        self.finished = False
        self.opened: str | None = None  # the call whose result is open under the rows
        self.saved: list[str] = []  # what Always allow saved (or could not), as the permissions said it
        self._settled: tuple[Any, ...] = ()  # the states the saved copy was last sent with
        self.record = Record(self, self.text, self.snapshot_html)
        self.style_html = widgets.HTML("" if nested else PANEL_CSS + GONE_HTML)
        self.header = widgets.HTML()
        self.approve_all_button = _header_button("Approve all", "check", "nts-approve-all", "success",
                                                 "Allow every call of this run that waits, and every later one that asks")
        self.deny_all_button = _header_button("Deny all", "times", "nts-deny-all", "danger",
                                              "Deny every call of this run that waits; the run stops")
        self.stop_button = _header_button("Stop", "stop", "nts-stop", "danger",
                                          "Stop the run: running calls stop, queued ones never start; every call still gets a result")
        self.approve_all_button.on_click(lambda _b: self._handoff(self._approve_all))
        self.deny_all_button.on_click(lambda _b: self._handoff(self._deny_all))
        self.stop_button.on_click(lambda _b: self._handoff(self.stop, "the Stop button"))
        self.timeline_toggle = widgets.ToggleButton(description="timeline", icon="chart-bar", tooltip="when each call ran",
                                                    layout=widgets.Layout(width="auto", height="24px", flex="0 0 auto"))
        self.timeline_toggle.add_class("nts-timeline-toggle")
        self.timeline_toggle.observe(lambda _c: self._handoff(self.pump.mark, self), names="value")
        follow_frontend_routing(self.approve_all_button, self.deny_all_button, self.stop_button, self.timeline_toggle)
        self.keyboard = PanelKeys(on_open=lambda key: self._handoff(self.open_result, key))
        self.header.layout = widgets.Layout(flex="1 1 auto", min_width="0")
        top = widgets.HBox([self.header, self.approve_all_button, self.deny_all_button, self.stop_button, self.timeline_toggle,
                            self.keyboard], layout=widgets.Layout(align_items="center", flex_flow="row nowrap"))
        self.notice_html = widgets.HTML()
        self.prompt_box = widgets.VBox()
        self.rows_view = widgets.HTML()
        self.rows_view.add_class("nts-rows-view")
        self.preview = widgets.HTML()
        self.timeline = widgets.HTML()
        self.summary = widgets.HTML()
        self._asking: dict[str, ApprovalRow] = {}
        self._live_children = (self.style_html, top, self.notice_html, self.prompt_box, self.rows_view, self.preview, self.timeline)
        if nested:
            self.style_html.layout.display = "none"
        frame = widgets.Layout(border="none", padding="0") if nested else widgets.Layout(border=f"1px solid {BORDER}", padding="4px")
        super().__init__(list(self._live_children), layout=frame)
        self.add_class("nts-panel")
        self.add_class(f"nts-live-{self.record.key}")
        self.outcomes: dict[str, Any] = {}
        self._unsubscribe = [handle.subscribe(self._on_event)]
        if broker is not None:
            self._unsubscribe.append(broker.subscribe(self._on_broker))
        if handle.task is not None:
            handle.task.add_done_callback(lambda _t: self.pump.mark(self))
        self.render()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ResultEvent) and event.outcome is not None:
            self.outcomes[event.tool_use_id] = event.outcome
        self.pump.mark(self)

    def _on_broker(self, event: BrokerEvent) -> None:
        """Loop thread (the broker notifies where it is asked)."""
        mine = event.request.tool_use_id in self.handle.states
        if mine and event.kind == "saved" and event.note:
            self.saved.append(event.note)  # "saved touch to .claude/settings.local.json", or why it could not
        if mine and event.kind == "added" and self.allow_rest and self.broker is not None:
            self.broker.answer(event.request.tool_use_id, ApprovalAnswer.allow())  # Approve all covers later asks
        self.pump.mark(self)

    # -- what the pump calls ----------------------------------------------------------------------
    def live(self) -> bool:
        return not self.handle.done() and self.failure is None and not self._closed

    def states(self) -> list[Any]:
        return [self.handle.states[key] for key in self.handle.order]

    def rows(self) -> list[RowView]:
        states = self.states()
        rows = []
        for number, state in enumerate(states, 1):
            note, label = self._note(number, state, states)
            rows.append(RowView.from_state(number, state, note, label))
        return rows

    def _note(self, number: int, state: Any, states: list[Any]) -> tuple[str, str]:
        """Why a call ended as it did, or what a queued one waits for; and its one word."""
        status = state.status
        if status == "queued":
            return self._waits_for(state, states), ""
        if status not in FINAL_STATES or status == "completed":
            return "", ""
        text = _result_text(self.outcomes.get(state.tool_use_id) or state.outcome)
        if status == "error":
            return clean_error(text), ""
        if status == "denied":
            return _denied_why(text), ""
        if status == "deferred":
            return "waits for an answer given later (the defer policy); resume the run with it", ""
        started = state.started_at is not None and ("interrupted" in text.lower())
        if _SIBLING in text:  # cancelled because a parallel shell call failed
            failed = [n for n, s in enumerate(states, 1) if s.status == "error" and s.batch == state.batch and n != number]
            who = f"#{failed[0]}" if failed else "a parallel call"
            return f"cancelled because {who} failed (a failing shell command stops its parallel siblings)", "cancelled"
        if self.stopped_by:
            return (f"interrupted by {self.stopped_by}" if started else f"not started: the run was stopped by {self.stopped_by}",
                    "interrupted" if started else "skipped")
        denied = [n for n, s in enumerate(states, 1) if s.status == "denied" and n != number and _user_stop(self.outcomes.get(s.tool_use_id) or s.outcome)]
        if denied:
            return f"the run stopped when #{denied[0]} was denied", "skipped"
        return ("interrupted while running" if started else "not started: the run was stopped"), ("interrupted" if started else "skipped")

    def _waits_for(self, state: Any, states: list[Any]) -> str:
        if not state.batch:
            return ""
        blockers = [n for n, s in enumerate(states, 1) if s.batch and s.batch < state.batch and s.status not in FINAL_STATES]
        if blockers:
            shown = ", ".join(f"#{n}" for n in blockers[:3]) + (" …" if len(blockers) > 3 else "")
            return f"waits for {shown}"
        if any(s.batch == state.batch and s.status in ("executing", "awaiting_approval") for s in states):
            cap = f" (at most {self.max_concurrency} at once)" if self.max_concurrency else ""
            return f"waits for a free slot{cap}"
        return ""

    def pending(self) -> dict[str, Any]:
        """This run's calls that wait for a person right now, in the order of the calls."""
        if self.broker is None:
            return {}
        waiting = self.broker.pending
        return {key: waiting[key] for key in self.handle.order if key in waiting}

    def render(self) -> None:
        """Loop thread only: bring every widget up to date (one message per changed widget)."""
        if self._closed or self.finished:
            return
        if not self.live():
            self._finish()
            return
        rows, pending = self.rows(), self.pending()
        _set(self.header, self._header_html(rows))
        _set(self.notice_html, self._notice_html())
        self._render_prompt(rows, pending)
        _set(self.rows_view, rows_html(rows, header=True))
        self._render_buttons(len(pending))
        if self.opened is not None:
            _set(self.preview, self._result_html(self.opened))
        if self.timeline_toggle.value:
            _set(self.timeline, timeline_html(self.states(), [f"#{r.number} {r.name}" for r in rows]))
        else:
            _set(self.timeline, "")
        settled = (tuple(r.shown_state for r in rows), tuple(pending), tuple(self.saved), self.notice)
        self.record.refresh(force=settled != self._settled)  # a state change is saved at once; progress at most once a second
        self._settled = settled

    def _header_html(self, rows: list[RowView], state: str = "running") -> str:
        if self.failure:
            state = f"failed: {html.escape(self.failure)}"
        notice = f' · <span class="nts-notice">{html.escape(self.notice)}</span>' if self.notice else ""
        counts = counts_text(r.shown_state for r in rows)
        whole = f"{self.title} · {len(rows)} calls · {state} · {counts}"
        return (f'<div class="nts-header" title="{html.escape(whole)}" style="font-size:12px;color:{FG};margin-right:8px;'
                f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis"><b>{html.escape(self.title)}</b>'
                f' · {len(rows)} call{"s" if len(rows) != 1 else ""} · <span class="nts-run-state">{state}</span>'
                f' · <span class="nts-summary">{html.escape(counts)}</span>{notice}</div>')

    def _notice_html(self) -> str:
        if not self.saved:
            return ""
        lines = "".join(f"<div>✓ {html.escape(text)}</div>" for text in self.saved[-3:])
        return f'<div class="nts-saved" style="font-size:12px;color:{FG2};margin:2px 0">{lines}</div>'

    def _render_prompt(self, rows: list[RowView], pending: dict[str, Any]) -> None:
        numbers = {r.tool_use_id: r.number for r in rows}
        for key, request in pending.items():
            if key not in self._asking:
                self._asking[key] = ApprovalRow(request, self._handoff, self._answer, self.cwd, numbers.get(key, 0))
        for key in [k for k in self._asking if k not in pending]:
            self._asking.pop(key).close()
        first = next(iter(pending), None)
        shown = (self._asking[first],) if first is not None else ()
        if first is not None:
            self._asking[first].set_waiting(1, len(pending))
        if tuple(self.prompt_box.children) != shown:
            self.prompt_box.children = shown
        wanted = str(numbers.get(first, "")) if first is not None else ""
        if self.keyboard.prompt != wanted:
            self.keyboard.prompt = wanted

    def _render_buttons(self, waiting: int) -> None:
        for button, show in ((self.approve_all_button, waiting >= 1), (self.deny_all_button, waiting >= 1),
                             (self.stop_button, not self.nested)):
            with button.hold_sync():
                button.layout.display = "" if show else "none"
                button.disabled = not show
        self.approve_all_button.description = "Approve all"
        self.approve_all_button.tooltip = (f"Allow the {waiting} waiting call{'s' if waiting != 1 else ''} of this run, "
                                           "and every later one that asks")
        self.deny_all_button.description = f"Deny all {waiting}" if waiting > 1 else "Deny all"

    # -- results ------------------------------------------------------------------------------------
    def open_result(self, tool_use_id: str) -> None:
        """Loop thread: a click on a finished row opens its result under the rows (again: closes)."""
        self.opened = None if self.opened == tool_use_id else tool_use_id
        if self.opened is None:
            _set(self.preview, "")
        self.pump.mark(self)

    def _result_html(self, tool_use_id: str) -> str:
        outcome = self.outcomes.get(tool_use_id)
        if outcome is None:
            return ""
        number = self.handle.order.index(tool_use_id) + 1 if tool_use_id in self.handle.order else 0
        head = (f'<div style="font-size:12px;color:{FG2};margin-top:2px">result of #{number} {html.escape(outcome.tool_name)}'
                f" (click its row again to close)</div>")
        return f'<div class="nts-opened" data-id="{html.escape(tool_use_id)}">{head}{result_preview(outcome.result)}</div>'

    # -- the end: a summary line and a true record ---------------------------------------------------
    def _finish(self) -> None:
        self.finished = True
        for row in self._asking.values():
            row.close()
        self._asking.clear()
        final_html = self.record_html()
        self.summary.value = final_html
        drawn: tuple[Any, ...] = ()
        if self.nested or not self.record.display_ids:
            drawn = (self.style_html, self.summary)  # the view it is part of (or a bare widget) shows the record
        else:
            # Shown by its record: the record's own output now says the final state, so the
            # widget draws nothing (its output is emptied next) and stops hiding that output.
            self.remove_class(f"nts-live-{self.record.key}")
            self.layout.border, self.layout.padding = "none", "0"
        self.children = drawn
        self.record.finish(final_html, self.text())

    def record_html(self) -> str:
        """The final state as static HTML: a summary line that opens to the calls (each opens
        its result), and the timeline."""
        rows = self.rows()
        total = _span(self.states())
        counts = counts_text(r.shown_state for r in rows)
        trouble = any(r.state not in ("completed",) for r in rows) or self.failure is not None
        mark = "✗" if self.failure else ("!" if trouble else "✓")
        state = f"failed: {self.failure}" if self.failure else "finished"
        extra = html.escape(f" · {self.notice}") if self.notice else ""
        extra += "".join(f' · <span class="nts-saved">✓ {html.escape(text)}</span>' for text in self.saved)  # on the line, seen
        summary = (f'<summary style="cursor:pointer;color:{FG}"><b>{mark} {html.escape(self.title)}</b> · {len(rows)} call'
                   f'{"s" if len(rows) != 1 else ""} · <span class="nts-run-state">{html.escape(state)}</span> · '
                   f'<span class="nts-summary">{html.escape(counts)}</span>{html.escape(total)}{extra}</summary>')
        results = {r.tool_use_id: self._preview_of(r) for r in rows if r.final}
        timeline = (f'<details class="nts-record-timeline" style="margin-top:4px"><summary style="cursor:pointer;color:{FG2}">timeline</summary>'
                    f'{timeline_html(self.states(), [f"#{r.number} {r.name}" for r in rows])}</details>')
        return (f'<div class="nts-record" style="font-size:12px;color:{FG};border:1px solid {BORDER};padding:4px">'
                f'<details{" open" if trouble else ""}>{summary}{rows_html(rows, header=True, results=results)}'
                f"{timeline}</details></div>")

    def snapshot_html(self) -> str:
        """The state now, as static HTML (what a notebook saved while the run goes on shows)."""
        if self.finished and self.record.final is not None:
            return self.record.final["text/html"]
        rows = self.rows()
        waiting = self.pending()
        asks = "".join(
            f'<div class="nts-snapshot-ask" style="border-left:4px solid var(--jp-warn-color2, #ffb74d);padding-left:6px;margin:2px 0">'
            f"⚠ #{self.handle.order.index(key) + 1} {html.escape(request.tool_name)} waited for approval: "
            f"{html.escape(reason_text(request, self.cwd))}</div>" for key, request in waiting.items())
        rows = [row if row.final else replace(row, time="") for row in rows]  # no clock that stopped when saved
        state = "waiting for approval when saved" if waiting else "running when saved"
        note = "" if self.nested else (f'<div style="color:{FG2}">This is the run as it was when the notebook was saved; its kernel '
                                       "is what could finish it. Run the cell again to start over.</div>")
        frame = "" if self.nested else f";border:1px solid {BORDER};padding:4px"
        return (f'<div class="nts-record nts-snapshot" style="font-size:12px;color:{FG}{frame}">'
                f"{self._header_html(rows, state)}{note}{self._notice_html()}{asks}"
                f"{rows_html(rows, header=True, results={r.tool_use_id: self._preview_of(r) for r in rows if r.final})}</div>")

    def _preview_of(self, row: RowView) -> str:
        outcome = self.outcomes.get(row.tool_use_id) or self.handle.states[row.tool_use_id].outcome
        return result_preview(outcome.result) if outcome is not None else f'<i style="color:{FG2}">no result</i>'

    # -- actions (loop thread, via the handoff) ---------------------------------------------------
    def _answer(self, tool_use_id: str, answer: ApprovalAnswer) -> None:
        if self.broker is not None and tool_use_id in self.broker.pending:
            self.broker.answer(tool_use_id, answer)
        self.pump.mark(self)

    def _approve_all(self) -> None:
        """This run's waiting calls are allowed, and so is every later ask of the run."""
        self.allow_rest = True
        pending = list(self.pending())
        if self.broker is not None and pending:
            self.broker.answer_many(pending, ApprovalAnswer.allow())
        self.pump.mark(self)

    def _deny_all(self) -> None:
        pending = list(self.pending())
        if self.broker is not None and pending:
            self.broker.answer_many(pending, ApprovalAnswer.deny())
        self.pump.mark(self)

    def stop(self, by: str = "the Stop button") -> None:
        """Abort the run (loop thread); its rows then say what stopped it."""
        if self.handle.done():
            return
        self.stopped_by = self.stopped_by or by
        self.handle.abort()
        self.pump.mark(self)

    # -- buttons for code and tests -----------------------------------------------------------------
    def approval_row(self, tool_use_id: str) -> ApprovalRow:
        """The prompt of a waiting call (after the pump rendered it); KeyError if it does not wait."""
        return self._asking[tool_use_id]

    def close(self) -> None:
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for row in self._asking.values():
            row.close()
        self.keyboard.close()
        super().close()

    # -- display -------------------------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        self.record.show()

    def text(self) -> str:
        rows = self.rows()
        lines = [f"{self.title}: {len(rows)} call{'s' if len(rows) != 1 else ''}"]
        lines += ["  " + row_text(r) for r in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


def _set(widget: widgets.HTML, value: str) -> None:
    if widget.value != value:
        widget.value = value


def _header_button(label: str, icon: str, css: str, kind: str, tooltip: str) -> widgets.Button:
    button = widgets.Button(description=label, icon=icon, tooltip=tooltip,
                            layout=widgets.Layout(width="auto", height="24px", margin="0 4px 0 0", display="none", flex="0 0 auto"))
    button.add_class(css)
    button.add_class(f"nts-btn-{kind}")
    return button


def _result_text(outcome: Any) -> str:
    if outcome is None:
        return ""
    text = getattr(outcome.result, "text", "")
    return text() if callable(text) else str(text or "")


def _denied_why(text: str) -> str:
    cleaned = clean_error(text)
    marker = "and said: "
    if "The user rejected" in cleaned and marker in cleaned:
        return f"denied by you: “{cleaned.split(marker, 1)[1].strip()}”"
    if cleaned.startswith("The user rejected"):
        return "denied by you; the run stopped here"
    return cleaned


def _user_stop(outcome: Any) -> bool:
    """A person's plain Deny (no feedback): it stops the rest of the run."""
    text = clean_error(_result_text(outcome))
    return text.startswith("The user rejected") and "and said:" not in text


def _span(states: list[Any]) -> str:
    times = [t for s in states for t in (s.queued_at, s.started_at, s.finished_at) if t is not None]
    if len(times) < 2:
        return ""
    return f" · {max(times) - min(times):.1f} s"
