"""A display that is live while it matters and a true record once it is over.

While a run goes on, its output holds the widget (and a plain-text line). When it ends,
every place it was displayed is updated (``update_display`` by display id) to static
HTML and text of the final state, and the widget is dropped from the output: a saved
notebook then shows the final states without a kernel (reopened, nbconvert, GitHub),
with no "Error displaying widget" and no stale "queued" snapshot.

A live panel whose kernel dies says so and disables its buttons through CSS alone:
ipywidgets marks a view whose comm died with ``jupyter-widgets-disconnected``.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

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
.nts-panel select, .nts-panel input { color: var(--jp-ui-font-color1, #1f2328); background: var(--jp-layout-color1, #fff); }
</style>"""
GONE_HTML = ('<div class="nts-gone" style="display:none;font-size:12px;padding:2px 6px;'
             'border-left:4px solid var(--jp-error-color1, #d32f2f);color:var(--jp-content-font-color1, #1f2328)">'
             "The kernel that ran this is gone (restarted or shut down): these buttons do nothing now. "
             "Run the cell again to start over.</div>")


class Record:
    """The output of one live view: shown with a display id, finished as static HTML."""

    def __init__(self, widget: Any, text: Callable[[], str]) -> None:
        self.widget = widget
        self.text = text
        self.display_ids: list[str] = []
        self.final: dict[str, str] | None = None
        self._shown_in: int | None = None  # which cell first showed it (counted by cells ended)
        self._shown_to: Any = None  # the request that cell's outputs were addressed to

    def bundle(self) -> dict[str, Any]:
        """What an output holds now: the widget while live, the final record once over."""
        if self.final is not None:
            return dict(self.final)
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = self.text()
        return data

    def show(self) -> None:
        """Display it (IPython's ``_ipython_display_``), remembering where, to update later."""
        from IPython.display import display

        display_id = uuid.uuid4().hex
        self.display_ids.append(display_id)
        if self._shown_in is None:
            self._shown_in, self._shown_to = _cells_ended, _addressed_to()
        display(self.bundle(), raw=True, display_id=display_id)

    def finish(self, html: str, text: str) -> None:
        """Replace every display of it by the final state (static HTML and text)."""
        self.final = {"text/html": html, "text/plain": text}
        if not self.display_ids:
            return
        self._send()
        if self._shown_in != _cells_ended or _addressed_to() != self._shown_to:  # see _ANNOUNCE_AGAIN
            _ANNOUNCE_AGAIN.append(self)

    def _send(self) -> None:
        from IPython.display import update_display

        assert self.final is not None
        for display_id in self.display_ids:
            try:
                update_display(self.final, raw=True, display_id=display_id)
            except Exception:  # noqa: BLE001 - no kernel (a plain script): nothing to update
                pass


# A run that ends after its cell did updates its display from the run's own task, and
# ipykernel 7 addresses that message to the cell that started the run (the parent header
# is a context variable). JupyterLab applies it anyway; headless runners (nbclient,
# nbconvert, papermill) drop messages for a cell that is over, and would save the first,
# live state. So a record finished after its cell ended is sent once more at the end of the
# next cell, from that cell's context, where every runner applies it by display id. One
# finished while its own cell still runs reached that cell only if it was sent from that
# cell's context: the UI pump that finishes records is a task made in the cell of the
# first run, so it addresses later cells' records to that first cell; they are sent again.
_ANNOUNCE_AGAIN: list[Record] = []
_cells_ended = 0


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
