"""The live run panel: a row per call, inline approvals, a header to act on all, a record.

The panel only renders what the run handle and the approval broker already know; it
never schedules anything. It works for any ``RunHandle`` (a ``%%toolcall`` cell, one
turn of an agent): ``RunPanel(handle, pump=..., handoff=..., broker=...)``.

Rows that do not wait for a person share one HTML table per stretch (one widget
message per tick however many calls report progress); a waiting call gets its own row
with what it would do and its buttons, in its place in the list. The header acts on
the whole run: Approve all (this call and every later one of the run), Deny all, Stop.
When the run ends the panel collapses to a summary line (tqdm-style) and its outputs
become static HTML of the final state (see ``_record``).
"""

from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as widgets

from .._events import Event, ResultEvent
from ..permissions._approvals import ApprovalAnswer, ApprovalBroker, BrokerEvent
from ..scheduling._handle import RunHandle
from ._approval_row import ApprovalRow
from ._blocking import follow_frontend_routing
from ._pump import UIPump
from ._record import GONE_HTML, PANEL_CSS, Record
from ._render import (
    BORDER,
    FG,
    FG2,
    FINAL_STATES,
    RowView,
    badge_html,
    clean_error,
    counts_text,
    result_preview,
    row_text,
    rows_table_html,
    timeline_html,
)

__all__ = ["RunPanel"]

_NO_RESULT = ""
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
    ) -> None:
        self.handle = handle
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
        self.record = Record(self, self.text)
        self.style_html = widgets.HTML(PANEL_CSS + GONE_HTML)
        self.header = widgets.HTML()
        self.approve_all_button = _header_button("Approve all", "check", "nts-approve-all", "success",
                                                 "Allow every call of this run that waits, and every later one that asks")
        self.deny_all_button = _header_button("Deny all", "times", "nts-deny-all", "danger", "Deny every call of this run that waits")
        self.stop_button = _header_button("Stop", "stop", "nts-stop", "danger",
                                          "Stop the run: running calls stop, queued ones never start; every call still gets a result")
        self.approve_all_button.on_click(lambda _b: self._handoff(self._approve_all))
        self.deny_all_button.on_click(lambda _b: self._handoff(self._deny_all))
        self.stop_button.on_click(lambda _b: self._handoff(self.stop, "the Stop button"))
        follow_frontend_routing(self.approve_all_button, self.deny_all_button, self.stop_button)
        top = widgets.HBox([self.header, self.approve_all_button, self.deny_all_button, self.stop_button],
                           layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        self.body = widgets.VBox()
        self.result_picker = widgets.Dropdown(options=[("result of…", _NO_RESULT)], value=_NO_RESULT, layout=widgets.Layout(width="18em"))
        self.result_picker.observe(lambda _c: self._handoff(self._show_result), names="value")
        self.timeline_toggle = widgets.ToggleButton(description="timeline", icon="chart-bar", layout=widgets.Layout(width="auto", height="24px"))
        self.timeline_toggle.observe(lambda _c: self._handoff(self.pump.mark, self), names="value")
        self.preview = widgets.HTML()
        self.timeline = widgets.HTML()
        self.summary = widgets.HTML()
        self._tables: list[widgets.HTML] = []
        self._asking: dict[str, ApprovalRow] = {}
        tools = widgets.HBox([self.result_picker, self.timeline_toggle], layout=widgets.Layout(align_items="center"))
        self._live_children = (self.style_html, top, self.body, tools, self.preview, self.timeline)
        super().__init__(list(self._live_children),
                         layout=widgets.Layout(border="1px solid var(--jp-border-color2, #d0d7de)", padding="4px"))
        self.add_class("nts-panel")
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
        """Why a call ended as it did, or what a queued one waits for; and a badge label."""
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
        if _SIBLING in text:  # cancelled because a parallel shell call failed
            failed = [n for n, s in enumerate(states, 1) if s.status == "error" and s.batch == state.batch and n != number]
            who = f"#{failed[0]}" if failed else "a parallel call"
            return f"cancelled because {who} failed (a failing shell command stops its parallel siblings)", ""
        started = state.started_at is not None and ("interrupted" in text.lower())
        if self.stopped_by:
            return (f"interrupted by {self.stopped_by}" if started else f"not started: the run was stopped by {self.stopped_by}",
                    "interrupted" if started else "skipped")
        denied = [n for n, s in enumerate(states, 1) if s.status == "denied" and n != number and _user_stop(self.outcomes.get(s.tool_use_id) or s.outcome)]
        if denied:
            return f"skipped: the run stopped when #{denied[0]} was denied", "skipped"
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
        """This run's calls that wait for a person right now."""
        if self.broker is None:
            return {}
        mine = self.handle.states
        return {key: request for key, request in self.broker.pending.items() if key in mine}

    def render(self) -> None:
        """Loop thread only: bring every widget up to date (one message per changed widget)."""
        if self._closed or self.finished:
            return
        if not self.live():
            self._finish()
            return
        rows, pending = self.rows(), self.pending()
        with self.header.hold_sync():
            self.header.value = self._header_html(rows)
        self._render_body(rows, pending)
        self._render_buttons(len(pending))
        self._render_picker(rows)
        if self.timeline_toggle.value:
            self.timeline.value = timeline_html(self.states(), [f"#{r.number} {r.name}" for r in rows])
        elif self.timeline.value:
            self.timeline.value = ""

    def _header_html(self, rows: list[RowView]) -> str:
        state = "running"
        if self.failure:
            state = f"failed: {html.escape(self.failure)}"
        notice = f' · <span class="nts-notice">{html.escape(self.notice)}</span>' if self.notice else ""
        counts = counts_text(r.state for r in rows)
        return (f'<div class="nts-header" style="font-size:12px;color:{FG};margin-right:8px"><b>{html.escape(self.title)}</b>'
                f' · {len(rows)} call{"s" if len(rows) != 1 else ""} · <span class="nts-run-state">{state}</span>'
                f' · <span class="nts-summary">{html.escape(counts)}</span>{notice}</div>')

    def _render_body(self, rows: list[RowView], pending: dict[str, Any]) -> None:
        segments: list[widgets.Widget] = []
        stretch: list[RowView] = []
        tables = iter(self._table_pool(len(pending)))
        first = True
        for row in rows:
            request = pending.get(row.tool_use_id)
            if request is None:
                stretch.append(row)
                continue
            if stretch or first:
                segments.append(self._fill(next(tables), stretch, header=first))
                stretch, first = [], False
            asking = self._asking.get(row.tool_use_id)
            if asking is None:
                asking = self._asking[row.tool_use_id] = ApprovalRow(request, self._handoff, self._answer, self.cwd)
            asking.show(row)
            segments.append(asking)
        if stretch:
            segments.append(self._fill(next(tables), stretch, header=first))
        for key in [k for k in self._asking if k not in pending]:
            self._asking.pop(key).close()
        if tuple(segments) != tuple(self.body.children):
            self.body.children = tuple(segments)

    def _table_pool(self, waiting: int) -> list[widgets.HTML]:
        needed = waiting + 2  # stretches of rows around the waiting ones, and the header
        while len(self._tables) < needed:
            self._tables.append(widgets.HTML())
        return self._tables

    @staticmethod
    def _fill(table: widgets.HTML, rows: list[RowView], header: bool) -> widgets.HTML:
        table.value = rows_table_html(rows, header=header)
        return table

    def _render_buttons(self, waiting: int) -> None:
        for button, show in ((self.approve_all_button, waiting >= 1), (self.deny_all_button, waiting >= 1), (self.stop_button, True)):
            with button.hold_sync():
                button.layout.display = "" if show else "none"
                button.disabled = not show
        self.approve_all_button.description = f"Approve all ({waiting} waiting + the rest)" if waiting else "Approve all"
        self.deny_all_button.description = f"Deny all {waiting}" if waiting > 1 else "Deny all"

    def _render_picker(self, rows: list[RowView]) -> None:
        done = [(f"{r.number}. {r.name} ({r.label or r.state})", r.tool_use_id) for r in rows if r.state in FINAL_STATES]
        options = [("result of…", _NO_RESULT), *done]
        if list(self.result_picker.options) != options:
            current = self.result_picker.value
            with self.result_picker.hold_sync():
                self.result_picker.options = options
                self.result_picker.value = current if any(v == current for _, v in options) else _NO_RESULT

    # -- the end: a summary line and a true record ---------------------------------------------------
    def _finish(self) -> None:
        self.finished = True
        for row in self._asking.values():
            row.close()
        self._asking.clear()
        final_html = self.record_html()
        self.summary.value = final_html
        self.children = (self.style_html, self.summary)
        self.record.finish(final_html, self.text())

    def record_html(self) -> str:
        """The final state as static HTML: a summary line that opens to rows, results and timeline."""
        rows = self.rows()
        total = _span(self.states())
        counts = counts_text(r.state for r in rows)
        trouble = any(r.state not in ("completed",) for r in rows) or self.failure is not None
        mark = "✗" if self.failure else ("!" if trouble else "✓")
        state = f"failed: {self.failure}" if self.failure else "finished"
        extra = f" · {self.notice}" if self.notice else ""
        summary = (f'<summary style="cursor:pointer;color:{FG}"><b>{mark} {html.escape(self.title)}</b> · {len(rows)} call'
                   f'{"s" if len(rows) != 1 else ""} · <span class="nts-run-state">{html.escape(state)}</span> · '
                   f'<span class="nts-summary">{html.escape(counts)}</span>{html.escape(total)}{html.escape(extra)}</summary>')
        results = "".join(self._result_details(r) for r in rows)
        timeline = (f'<details class="nts-record-timeline" style="margin-top:4px"><summary style="cursor:pointer;color:{FG2}">timeline</summary>'
                    f'{timeline_html(self.states(), [f"#{r.number} {r.name}" for r in rows])}</details>')
        body = (rows_table_html(rows, header=True)
                + f'<details class="nts-record-results" style="margin-top:4px"><summary style="cursor:pointer;color:{FG2}">results</summary>{results}</details>'
                + timeline)
        return (f'<div class="nts-record" style="font-size:12px;color:{FG};border:1px solid {BORDER};padding:4px">'
                f'<details{" open" if trouble else ""}>{summary}{body}</details></div>')

    def _result_details(self, row: RowView) -> str:
        outcome = self.outcomes.get(row.tool_use_id) or self.handle.states[self.handle.order[row.number - 1]].outcome
        shown = result_preview(outcome.result) if outcome is not None else f'<i style="color:{FG2}">no result</i>'
        return (f'<details style="margin-left:1em"><summary style="cursor:pointer;color:{FG}">#{row.number} {html.escape(row.name)} '
                f"{badge_html(row.state, row.label)}</summary>{shown}</details>")

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

    def _show_result(self) -> None:
        key = self.result_picker.value
        outcome = self.outcomes.get(key) if key else None
        self.preview.value = result_preview(outcome.result) if outcome is not None else ""

    # -- buttons for code and tests -----------------------------------------------------------------
    def approval_row(self, tool_use_id: str) -> ApprovalRow:
        """The waiting row of a call (after the pump rendered it); KeyError if it does not wait."""
        return self._asking[tool_use_id]

    def close(self) -> None:
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for row in self._asking.values():
            row.close()
        for table in self._tables:
            table.close()
        super().close()

    # -- display -------------------------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        self.record.show()

    def text(self) -> str:
        rows = self.rows()
        lines = [f"{self.title}: {len(rows)} calls"]
        lines += ["  " + row_text(r) for r in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


def _header_button(label: str, icon: str, css: str, kind: str, tooltip: str) -> widgets.Button:
    button = widgets.Button(description=label, icon=icon, tooltip=tooltip,
                            layout=widgets.Layout(width="auto", height="24px", margin="0 4px 0 0", display="none"))
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
