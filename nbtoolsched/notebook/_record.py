"""A display that is live while it matters and says the truth whenever it is saved.

A live view is shown as two outputs. The first is static HTML of the state it has now
(its *snapshot*), kept current while the view changes (``refresh``: at most once a
second, and at once when it settles); the second holds the widget. While the widget is
drawn, a style rule in the snapshot hides the snapshot; where no widget can be drawn (a
notebook reopened without its kernel, whose widget output would say "Error displaying
widget: model not found") the same rule hides the widget output and shows the snapshot.
nbconvert and GitHub, which draw no widget without saved widget state, show the
snapshot. JupyterLab saves every two minutes, so a saved copy of a run that waits for
approval says that it waited, and what had finished by then.

When the view ends, the snapshot output becomes static HTML and text of the final state
and the widget output is emptied: a saved notebook shows the final states without a
kernel (reopened, nbconvert, GitHub).

A live panel whose kernel dies says so and disables its buttons through CSS alone:
ipywidgets marks a view whose comm died with ``jupyter-widgets-disconnected``.
"""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["PANEL_CSS", "Record", "announce_finished_records"]

PANEL_CSS = """<style>
.nts-panel .nts-gone { display: none; }
.nts-panel.jupyter-widgets-disconnected .nts-gone { display: block !important; }
.nts-panel.jupyter-widgets-disconnected button, .nts-panel.jupyter-widgets-disconnected input,
.nts-panel.jupyter-widgets-disconnected select, .nts-panel .jupyter-widgets-disconnected button,
.nts-panel button.jupyter-widgets-disconnected { pointer-events: none !important; opacity: 0.45 !important; }
.nts-panel button.jupyter-button { font-size: 12px; color: var(--jp-ui-font-color1, #1f2328);
  background: var(--jp-layout-color2, #eef0f3); border: 1px solid var(--jp-border-color1, #8c959f); }
.nts-panel button.nts-btn-success { border-left: 4px solid var(--jp-success-color1, #2e7d32); }
.nts-panel button.nts-btn-info { border-left: 4px solid var(--jp-brand-color1, #1976d2); }
.nts-panel button.nts-btn-danger { border-left: 4px solid var(--jp-error-color1, #d32f2f); }
.nts-panel button.nts-btn-warning { border-left: 4px solid var(--jp-warn-color1, #ef6c00); }
.nts-panel button.jupyter-button:disabled { opacity: 0.6; }
.nts-panel select, .nts-panel input { color: var(--jp-ui-font-color1, #1f2328); background: var(--jp-layout-color1, #fff);
  font-size: 12px; height: 24px; border: 1px solid var(--jp-border-color1, #8c959f); }
.nts-panel button:focus, .nts-panel select:focus, .nts-panel input:focus {
  outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 1px; }
.nts-panel .nts-rule-select { max-width: 24em; margin: 0 4px 0 0; }
.nts-panel .nts-row[data-state="completed"]:hover, .nts-panel .nts-row[data-state="error"]:hover,
.nts-panel .nts-row[data-state="denied"]:hover, .nts-panel .nts-row[data-state="cancelled"]:hover {
  background: var(--jp-layout-color2, #eef0f3); }
.nts-panel .widget-html, .nts-panel .widget-html-content { line-height: normal; }
</style>"""
GONE_HTML = ('<div class="nts-gone" style="display:none;font-size:12px;padding:2px 6px;'
             'border-left:4px solid var(--jp-error-color1, #d32f2f);color:var(--jp-content-font-color1, #1f2328)">'
             "The kernel that ran this is gone (restarted or shut down): these buttons do nothing now. "
             "Run the cell again to start over.</div>")
# An emptied widget output says nothing; the record's style rule hides its place too.
_SPENT = '<div class="nts-spent"></div>'
_WIDGET = "application/vnd.jupyter.widget-view+json"
REFRESH_EVERY = 1.0  # seconds: a live snapshot is sent at most this often


def _fallback_css(key: str) -> str:
    """Hide the snapshot while its live view is drawn; hide the widget's output where none is
    (its kernel is gone: "model not found"), and the emptied output of a finished one."""
    area = ".jp-OutputArea"
    child = ".jp-OutputArea-child"
    return ("<style>"
            f"{area}:has(.nts-live-{key}) > {child}:has(.nts-fallback-{key}) {{ display: none; }}"
            # (a :has() may not hold another, so the failed output itself is hidden, not its row)
            f"{area}:has(.nts-fallback-{key}) > {child} > .jp-OutputArea-output.jupyter-widgets:not(:has(*)) {{ display: none; }}"
            f"{child}:has(> .jp-OutputArea-output .nts-spent) {{ display: none; }}"
            "</style>")


class Record:
    """The outputs of one live view: a snapshot kept current and the widget, finished as static HTML.

    ``snapshot`` returns static HTML of the view's state now; the view calls ``refresh()``
    whenever it renders, and ``finish()`` once, with the final state.
    """

    def __init__(self, widget: Any, text: Callable[[], str], snapshot: Callable[[], str] | None = None) -> None:
        self.widget = widget
        self.text = text
        self.snapshot = snapshot
        self.key = uuid.uuid4().hex[:12]  # names this view's outputs in the style rules
        self.display_ids: list[tuple[str, str]] = []  # (snapshot output, widget output) per display
        self.final: dict[str, str] | None = None
        self._sent: str | None = None  # the snapshot last sent
        self._sent_at = 0.0
        self._shown_in: int | None = None  # which cell first showed it (counted by cells ended)
        self._shown_to: Any = None  # the request that cell's outputs were addressed to
        self._header: Any = None  # that request's header: later updates are addressed to it

    def _snapshot_bundle(self) -> dict[str, str]:
        body = self.snapshot() if self.snapshot is not None else ""
        return {"text/html": f'<div class="nts-fallback-{self.key}">{_fallback_css(self.key)}{body}</div>',
                "text/plain": self.text()}

    def bundle(self) -> dict[str, Any]:
        """What the widget's output holds now: the widget while live, the final record once over."""
        if self.final is not None:
            return dict(self.final)
        return {_WIDGET: dict(self.widget._repr_mimebundle_() or {}).get(_WIDGET)}

    def show(self) -> None:
        """Display it (IPython's ``_ipython_display_``), remembering where, to update later."""
        from IPython.display import display

        if self._shown_in is None:
            self._shown_in, self._shown_to, self._header = _cells_ended, _addressed_to(), _parent_header()
        if self.final is not None:
            display_id = uuid.uuid4().hex
            self.display_ids.append((display_id, ""))
            display(dict(self.final), raw=True, display_id=display_id)
            return
        ids = (uuid.uuid4().hex, uuid.uuid4().hex)
        self.display_ids.append(ids)
        snapshot = self._snapshot_bundle()
        self._sent, self._sent_at = snapshot["text/html"], time.monotonic()
        display(snapshot, raw=True, display_id=ids[0])
        display(self.bundle(), raw=True, display_id=ids[1])

    def refresh(self, force: bool = False) -> None:
        """The view changed: send its snapshot again if it differs (at most once a second; the
        pump renders live views every second, so the last change is never held back long)."""
        if self.final is not None or not self.display_ids or self.snapshot is None:
            return
        now = time.monotonic()
        if not force and now - self._sent_at < REFRESH_EVERY:
            return
        snapshot = self._snapshot_bundle()
        if snapshot["text/html"] == self._sent:
            return
        self._sent, self._sent_at = snapshot["text/html"], now
        with _addressed(self._header):
            _update(snapshot, [first for first, _ in self.display_ids])

    def finish(self, html: str, text: str) -> None:
        """Replace every display of it by the final state (static HTML and text)."""
        self.final = {"text/html": f'<div class="nts-fallback-{self.key}">{_fallback_css(self.key)}{html}</div>',
                      "text/plain": text}
        if not self.display_ids:
            return
        with _addressed(self._header):
            self._send()
        if self._shown_in != _cells_ended or _addressed_to() != self._shown_to:  # see _ANNOUNCE_AGAIN
            _ANNOUNCE_AGAIN.append(self)

    def _send(self) -> None:
        assert self.final is not None
        _update(self.final, [first for first, _ in self.display_ids])
        _update({"text/html": _SPENT, "text/plain": ""}, [second for _, second in self.display_ids if second])


def _update(data: dict[str, str], display_ids: list[str]) -> None:
    from IPython.display import update_display

    for display_id in display_ids:
        try:
            update_display(data, raw=True, display_id=display_id)
        except Exception:  # noqa: BLE001 - no kernel (a plain script): nothing to update
            pass


# A view's updates are addressed to the cell that showed it (``_addressed``), which is what
# JupyterLab needs. Headless runners (nbclient, nbconvert, papermill) drop messages for a
# cell that is over, and would save the first, live state. So a record finished after its
# cell ended is sent once more at the end of the next cell, addressed to that cell, where
# every runner applies it by display id; so is one finished while its own cell runs but
# sent from another cell's context (the UI pump's task is made in the cell of the first run).
_ANNOUNCE_AGAIN: list[Record] = []
_cells_ended = 0


def _parent_header() -> Any:
    """The header of the request outputs sent from here answer (None outside a kernel)."""
    try:
        from IPython import get_ipython

        return get_ipython().display_pub.parent_header
    except Exception:  # noqa: BLE001 - no IPython, no kernel
        return None


@contextmanager
def _addressed(header: Any) -> Iterator[None]:
    """Send what is sent inside as an answer to ``header``'s request. JupyterLab applies an
    ``update_display_data`` only in the output area of the cell it answers, and only to that
    cell's displays: a view's updates come from the UI pump's task, which answers whichever
    cell made the pump, so each is addressed to the cell that showed the view."""
    try:
        from IPython import get_ipython

        publisher = get_ipython().display_pub
        before = publisher.parent_header
    except Exception:  # noqa: BLE001 - no IPython, no kernel: nothing to address
        yield
        return
    if not isinstance(header, dict) or not header:
        yield
        return
    address = getattr(publisher, "set_parent", None)  # every ipykernel has it (7.x keeps it per context)
    if not callable(address):
        yield
        return
    kept = getattr(publisher, "_parent_header_global", None)
    address(header)
    try:
        yield
    finally:
        address(before)
        if kept is not None:
            publisher._parent_header_global = kept


def _addressed_to() -> Any:
    """The request an output sent from here goes to (ipykernel 7 keeps it per context), or
    None outside a kernel."""
    try:
        from IPython import get_ipython

        header = get_ipython().display_pub.parent_header
    except Exception:  # noqa: BLE001 - no IPython, no kernel: nothing to compare
        return None
    return header.get("msg_id") if isinstance(header, dict) else None


def announce_finished_records() -> None:
    """A cell ended (``post_run_cell``): send again the records finished after their cell ended."""
    global _cells_ended
    _cells_ended += 1
    pending = list(_ANNOUNCE_AGAIN)
    _ANNOUNCE_AGAIN.clear()
    for record in pending:
        record._send()
