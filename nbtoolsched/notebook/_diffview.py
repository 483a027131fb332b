"""The overlay diff view: what a speculation would change, with Accept and Reject.

Files created, changed or deleted are listed with their unified diffs, highlighted by
pygments with inline styles. Accept and Reject hand over to the loop, which calls the
speculation's own ``accept``/``reject``; the view only shows what came of it.
"""

from __future__ import annotations

import asyncio
import html
import logging
from typing import Any, Callable

import ipywidgets as widgets

from ._pump import UIPump
from ._render import diff_html

__all__ = ["DiffView"]

log = logging.getLogger(__name__)
_KIND_COLOURS = {"created": "#166534", "modified": "#1d4ed8", "deleted": "#991b1b"}


class DiffView(widgets.VBox):
    def __init__(self, speculation: Any, *, pump: UIPump, handoff: Callable[..., None]) -> None:
        self.speculation = speculation
        self.pump = pump
        self._handoff = handoff
        self.status = "running"  # running | ready | accepting | accepted | rejecting | rejected | failed
        self.message = ""
        self._changes: list[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.header = widgets.HTML()
        self.files = widgets.HTML()
        self.accept_button = widgets.Button(description="Accept", button_style="success", icon="check", disabled=True)
        self.reject_button = widgets.Button(description="Reject", button_style="danger", icon="times", disabled=True)
        self.accept_button.add_class("nts-accept")
        self.reject_button.add_class("nts-reject")
        self.accept_button.on_click(lambda _b: self._handoff(self._decide, "accept"))
        self.reject_button.on_click(lambda _b: self._handoff(self._decide, "reject"))
        super().__init__([self.header, self.files, widgets.HBox([self.accept_button, self.reject_button])],
                         layout=widgets.Layout(border="1px solid #e5e7eb", padding="4px"))
        self.add_class("nts-diff-view")
        self.render()

    # -- pump ------------------------------------------------------------------------------------------
    def live(self) -> bool:
        return self.status == "running" or self.status.endswith("ing")

    def render(self) -> None:
        spec = self.speculation
        if self.status == "running" and spec.done:
            self.status = "ready"
        if self.status == "ready" and self._changes is None:
            self._changes = self._read_changes()
        with self.header.hold_sync():
            self.header.value = self._header_html()
        if self._changes is not None:
            self.files.value = "".join(_file_html(c) for c in self._changes) or "<i>no files would change</i>"
        decided = self.status != "ready"
        for button in (self.accept_button, self.reject_button):
            button.disabled = decided

    def _read_changes(self) -> list[Any]:
        try:
            return list(self.speculation.changes())
        except Exception as err:  # noqa: BLE001 - shown in the view
            self.status, self.message = "failed", str(err)
            return []

    def _header_html(self) -> str:
        spec = self.speculation
        where = spec.boundary.describe() if spec.boundary is not None else "running…"
        counts = ""
        if self._changes is not None:
            counts = f" · {len(self._changes)} file{'s' if len(self._changes) != 1 else ''}"
        note = f" · {html.escape(self.message)}" if self.message else ""
        return (f'<div style="font-size:12px"><b>speculation</b> {html.escape(repr(spec.suggestion))} · '
                f'stopped at: {html.escape(where)}{counts} · <span class="nts-spec-status">{self.status}</span>{note}</div>')

    # -- decisions (loop thread) -------------------------------------------------------------------------
    def _decide(self, what: str) -> None:
        if self.status != "ready":
            return
        self.status = "accepting" if what == "accept" else "rejecting"
        task = asyncio.ensure_future(self._finish(what))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self.pump.mark(self)

    async def _finish(self, what: str) -> None:
        try:
            if what == "accept":
                result = await self.speculation.accept()
                self.status, self.message = "accepted", f"{len(result.changes)} file(s) written"
            else:
                await self.speculation.reject()
                self.status, self.message = "rejected", "nothing was written"
        except Exception as err:  # noqa: BLE001 - a conflict or a failure is shown, not raised
            self.status, self.message = ("ready" if what == "accept" else "failed"), str(err)
        self.pump.mark(self)

    def click(self, what: str) -> None:
        """Programmatic Accept/Reject (tests, headless notebooks)."""
        (self.accept_button if what == "accept" else self.reject_button).click()

    # -- text ------------------------------------------------------------------------------------------------
    def text(self) -> str:
        head = f"speculation {self.speculation.suggestion!r}: {self.status}"
        if self._changes is None:
            return head
        parts = [head] + [f"{c.kind} {c.path}\n{c.diff}".rstrip() for c in self._changes]
        return "\n".join(parts)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


def _file_html(change: Any) -> str:
    colour = _KIND_COLOURS.get(change.kind, "#374151")
    head = (f'<div class="nts-file" style="font-size:12px;margin-top:4px"><b style="color:{colour}">{html.escape(change.kind)}</b> '
            f'<code>{html.escape(change.path)}</code></div>')
    body = "<i>binary file</i>" if getattr(change, "binary", False) else diff_html(change.diff or "")
    return head + body
