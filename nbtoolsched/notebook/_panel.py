"""The live run panel: a row per call, inline approvals, results on demand, a timeline.

The panel only renders what the run handle and the approval broker already know; it
never schedules anything. Rows that do not wait for a person share one HTML table per
stretch (one widget message per tick however many calls report progress); a waiting
call gets its own row with buttons, in its place in the list.
"""

from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as widgets

from ..permissions._approvals import ApprovalAnswer, ApprovalBroker
from ..scheduling._handle import RunHandle
from ..scheduling._timeline import render_svg_timeline
from ._approval_row import ApprovalRow
from ._pump import UIPump
from ._render import FINAL_STATES, RowView, counts_text, result_preview, row_text, rows_table_html

__all__ = ["RunPanel"]

_NO_RESULT = ""


class RunPanel(widgets.VBox):
    """What a ``%%toolcall`` cell shows while (and after) its calls run."""

    def __init__(
        self,
        handle: RunHandle,
        *,
        pump: UIPump,
        handoff: Callable[..., None],
        broker: ApprovalBroker | None = None,
        title: str = "toolcall",
    ) -> None:
        self.handle = handle
        self.broker = broker
        self.pump = pump
        self._handoff = handoff
        self.title = title
        self.failure: str | None = None  # a bug in the run itself, shown instead of hanging
        self._closed = False
        self.header = widgets.HTML()
        self.approve_all_button = widgets.Button(button_style="success", icon="check", layout=widgets.Layout(width="auto", display="none"))
        self.approve_all_button.add_class("nts-approve-all")
        self.approve_all_button.on_click(lambda _b: self._handoff(self._approve_all))
        self.body = widgets.VBox()
        self.result_picker = widgets.Dropdown(options=[("result of…", _NO_RESULT)], value=_NO_RESULT, layout=widgets.Layout(width="18em"))
        self.result_picker.observe(lambda _c: self._handoff(self._show_result), names="value")
        self.timeline_toggle = widgets.ToggleButton(description="timeline", icon="chart-bar", layout=widgets.Layout(width="auto"))
        self.timeline_toggle.observe(lambda _c: self._handoff(self.pump.mark, self), names="value")
        self.preview = widgets.HTML()
        self.timeline = widgets.HTML()
        self._tables: list[widgets.HTML] = []
        self._asking: dict[str, ApprovalRow] = {}
        tools = widgets.HBox([self.result_picker, self.timeline_toggle, self.approve_all_button],
                             layout=widgets.Layout(align_items="center"))
        super().__init__([self.header, self.body, tools, self.preview, self.timeline],
                         layout=widgets.Layout(border="1px solid #e5e7eb", padding="4px"))
        self.add_class("nts-panel")
        self.outcomes: dict[str, Any] = {}
        self._unsubscribe = [handle.subscribe(self._on_event)]
        if broker is not None:
            self._unsubscribe.append(broker.subscribe(lambda _e: self.pump.mark(self)))
        self.render()

    def _on_event(self, event: Any) -> None:
        if event.kind == "finished" and event.outcome is not None:
            self.outcomes[event.tool_use_id] = event.outcome
        self.pump.mark(self)

    # -- what the pump calls ----------------------------------------------------------------------
    def live(self) -> bool:
        return not self.handle.done() and self.failure is None and not self._closed

    def rows(self) -> list[RowView]:
        return [RowView.from_state(n, self.handle.states[key]) for n, key in enumerate(self.handle.order, 1)]

    def pending(self) -> dict[str, Any]:
        """This run's calls that wait for a person right now."""
        if self.broker is None:
            return {}
        mine = self.handle.states
        return {key: request for key, request in self.broker.pending.items() if key in mine}

    def render(self) -> None:
        """Loop thread only: bring every widget up to date (one message per changed widget)."""
        if self._closed:
            return
        rows, pending = self.rows(), self.pending()
        with self.header.hold_sync():
            self.header.value = self._header_html(rows)
        self._render_body(rows, pending)
        self._render_approve_all(len(pending))
        self._render_picker(rows)
        if self.timeline_toggle.value:
            self.timeline.value = render_svg_timeline(self.handle.trace, title="")
        elif self.timeline.value:
            self.timeline.value = ""

    def _header_html(self, rows: list[RowView]) -> str:
        state = "finished" if self.handle.done() else "running"
        if self.failure:
            state = f'<span style="color:#991b1b">failed: {html.escape(self.failure)}</span>'
        counts = counts_text(r.state for r in rows)
        return (f'<div style="font-size:12px"><b>{html.escape(self.title)}</b> · {len(rows)} calls · {state}'
                f' · <span class="nts-summary">{html.escape(counts)}</span></div>')

    def _render_body(self, rows: list[RowView], pending: dict[str, Any]) -> None:
        segments: list[widgets.Widget] = []
        stretch: list[RowView] = []
        tables = iter(self._table_pool(len(pending)))
        for row in rows:
            request = pending.get(row.tool_use_id)
            if request is None:
                stretch.append(row)
                continue
            if stretch:
                segments.append(self._fill(next(tables), stretch))
                stretch = []
            asking = self._asking.get(row.tool_use_id)
            if asking is None:
                asking = self._asking[row.tool_use_id] = ApprovalRow(request, self._handoff, self._answer)
            asking.show(row)
            segments.append(asking)
        if stretch:
            segments.append(self._fill(next(tables), stretch))
        for key in [k for k in self._asking if k not in pending]:
            self._asking.pop(key).close()
        if tuple(segments) != tuple(self.body.children):
            self.body.children = tuple(segments)

    def _table_pool(self, waiting: int) -> list[widgets.HTML]:
        needed = waiting + 1  # stretches of rows around the waiting ones
        while len(self._tables) < needed:
            self._tables.append(widgets.HTML())
        return self._tables

    @staticmethod
    def _fill(table: widgets.HTML, rows: list[RowView]) -> widgets.HTML:
        table.value = rows_table_html(rows)
        return table

    def _render_approve_all(self, waiting: int) -> None:
        button = self.approve_all_button
        with button.hold_sync():
            button.description = f"Approve all {waiting}"
            button.layout.display = "" if waiting >= 2 else "none"
            button.disabled = waiting < 2

    def _render_picker(self, rows: list[RowView]) -> None:
        done = [(f"{r.number}. {r.name} ({r.state})", r.tool_use_id) for r in rows if r.state in FINAL_STATES]
        options = [("result of…", _NO_RESULT), *done]
        if list(self.result_picker.options) != options:
            current = self.result_picker.value
            with self.result_picker.hold_sync():
                self.result_picker.options = options
                self.result_picker.value = current if any(v == current for _, v in options) else _NO_RESULT

    # -- actions (loop thread, via the handoff) ---------------------------------------------------
    def _answer(self, tool_use_id: str, answer: ApprovalAnswer) -> None:
        if self.broker is not None and tool_use_id in self.broker.pending:
            self.broker.answer(tool_use_id, answer)
        self.pump.mark(self)

    def _approve_all(self) -> None:
        pending = list(self.pending())
        if self.broker is not None and pending:
            self.broker.answer_many(pending, ApprovalAnswer.allow())
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

    # -- text for nbval and plain consoles ---------------------------------------------------------
    def text(self) -> str:
        rows = self.rows()
        lines = [f"{self.title}: {len(rows)} calls"]
        lines += ["  " + row_text(r) for r in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())
