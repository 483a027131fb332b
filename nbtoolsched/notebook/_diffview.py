"""The overlay diff view: what a speculation would change, with Accept and Reject.

Files created, changed or deleted are listed with their unified diffs. The header says
where and why the speculation stopped, with the command that would let it go further,
and the model's last words. Accept is only offered when something would change. Accept
and Reject hand over to the loop, which calls the speculation's own
``accept``/``reject``; once decided, the output becomes a static record of the outcome.
"""

from __future__ import annotations

import html
import logging
from typing import Any, Callable

import ipywidgets as widgets

from .._tasks import TaskOwner
from ._blocking import follow_frontend_routing
from ._pump import UIPump
from ._record import GONE_HTML, PANEL_CSS, Record
from ._render import BORDER, FG, FG2, STATE_LABELS, diff_html

__all__ = ["DiffView", "explain_boundary"]

log = logging.getLogger(__name__)
_KIND_ACCENTS = {"created": STATE_LABELS["completed"][1], "modified": STATE_LABELS["executing"][1],
                 "deleted": STATE_LABELS["error"][1], "replaced": STATE_LABELS["error"][1],
                 "mode_changed": STATE_LABELS["executing"][1], "symlink": STATE_LABELS["completed"][1]}


def explain_boundary(boundary: Any, mode: str) -> str:
    """Where and why a speculation stopped, and what to run to let it go further."""
    if boundary is None:
        return "running…"
    kind, tool, detail = boundary.kind, boundary.tool or "a tool", boundary.detail
    at = f" ({detail})" if detail else ""
    if kind == "complete":
        return "the model finished: everything it did is below"
    if kind == "edit":
        return (f"stopped before {tool}{at}: in {mode} mode a file edit needs your approval, and a speculation never "
                "asks, so it did not write even to its overlay. To let it edit (in the overlay only, until you accept): "
                "%toolsched mode acceptEdits, then %speculate again")
    if kind == "permission":
        return (f"stopped before {tool}{at}: your permission rules would ask or deny it. Allow it for the session with "
                f"%toolsched allow {tool} (or a narrower rule), then %speculate again")
    if kind == "bash":
        return (f"stopped before the shell command{at}: in this overlay (path rewriting) only read-only commands run "
                "while speculating; with the OS sandbox a kernel overlay runs the others too")
    if kind == "network":
        return f"stopped at the shell command{at}: it goes to the network, which only you may allow"
    if kind == "budget":
        return f"stopped: {detail or 'its budget ran out'}; accept to keep what it did, then continue normally"
    if kind == "outside_cwd":
        return f"stopped at {tool}{at}: a speculation reads and writes only inside the working directory"
    if kind == "unsafe_path":
        return f"stopped at {tool}{at}: the overlay cannot mirror that path"
    if kind == "denied_tool":
        return f"stopped before {tool}{at}: it can change things beyond files, so it never runs while speculating"
    if kind in ("max_turns", "max_messages"):
        return f"stopped at the limit ({detail or kind}); accept to keep what it did, then continue normally"
    if kind == "aborted":
        return "stopped from outside (an interrupt, or a decision while it ran)"
    if kind == "error":
        return f"the model loop failed{at}"
    return f"stopped: {boundary.describe()}"


class DiffView(widgets.VBox):
    def __init__(self, speculation: Any, *, pump: UIPump, handoff: Callable[..., None], tasks: TaskOwner,
                 mode: str = "default") -> None:
        self.speculation = speculation
        self.pump = pump
        self.mode = mode
        self._handoff = handoff
        self.status = "running"  # running | ready | accepting | accepted | rejecting | rejected | failed
        self.message = ""
        self._changes: list[Any] | None = None
        self._tasks = tasks  # the session's: an accept or reject under way ends with it at the latest
        self.record = Record(self, self.text)
        self.style_html = widgets.HTML(PANEL_CSS + GONE_HTML)
        self.header = widgets.HTML()
        self.commands = widgets.HTML()  # the shell commands it ran, with what they printed
        self.files = widgets.HTML()
        self.accept_button = widgets.Button(description="Accept", icon="check", disabled=True,
                                            tooltip="copy these changes into the project (and the transcript)")
        self.reject_button = widgets.Button(description="Reject", icon="times", disabled=True,
                                            tooltip="throw the overlay away; the project stays as it is")
        for button, css in ((self.accept_button, "nts-accept nts-btn-success"), (self.reject_button, "nts-reject nts-btn-danger")):
            for name in css.split():
                button.add_class(name)
        self.accept_button.on_click(lambda _b: self._handoff(self._decide, "accept"))
        self.reject_button.on_click(lambda _b: self._handoff(self._decide, "reject"))
        follow_frontend_routing(self.accept_button, self.reject_button)
        super().__init__([self.style_html, self.header, self.commands, self.files,
                          widgets.HBox([self.accept_button, self.reject_button])],
                         layout=widgets.Layout(border=f"1px solid {BORDER}", padding="4px"))
        self.add_class("nts-panel")
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
        shown = _commands_html(commands_run(spec))
        if self.commands.value != shown:
            self.commands.value = shown
        if self._changes is not None:
            self.files.value = "".join(_file_html(c) for c in self._changes) or f'<i style="color:{FG2}">no files would change</i>'
        self.accept_button.disabled = self.status != "ready" or not self._changes
        self.reject_button.disabled = self.status != "ready"
        if self.status in ("accepted", "rejected") and self.record.final is None:
            self.record.finish(self._record_html(), self.text())

    def _read_changes(self) -> list[Any]:
        try:
            return list(self.speculation.changes())
        except Exception as err:  # noqa: BLE001 - shown in the view
            self.status, self.message = "failed", str(err)
            return []

    def final_text(self) -> str:
        """The model's last words in the speculation (its final answer, if it gave one)."""
        for message in reversed(list(getattr(self.speculation, "transcript", []))):
            if message.get("role") != "assistant":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content.strip()
            texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
            if any(t.strip() for t in texts):
                return "\n".join(t for t in texts if t.strip()).strip()
        return ""

    def _header_html(self) -> str:
        spec = self.speculation
        overlay = getattr(spec, "overlay_kind", None)
        where = (f'<div class="nts-spec-overlay" style="color:{FG2}">overlay: {html.escape(overlay)} · '
                 f'{html.escape(getattr(spec, "overlay_note", ""))}</div>') if overlay else ""
        counts = ""
        if self._changes is not None:
            counts = f" · {len(self._changes)} file{'s' if len(self._changes) != 1 else ''}"
        note = f" · {html.escape(self.message)}" if self.message else ""
        said = self.final_text()
        words = (f'<div class="nts-spec-text" style="margin-top:2px;color:{FG};white-space:pre-wrap">'
                 f'<span style="color:{FG2}">model:</span> {html.escape(said[:1500])}</div>') if said else ""
        why = explain_boundary(spec.boundary, self.mode) if spec.done or spec.boundary is not None else "running…"
        return (f'<div style="font-size:12px;color:{FG}"><b>speculation</b> {html.escape(repr(spec.suggestion))}{counts} · '
                f'<span class="nts-spec-status">{self.status}</span>{note}'
                f'<div class="nts-spec-why" style="color:{FG}">{html.escape(why)}</div>{where}{words}</div>')

    def _record_html(self) -> str:
        return (f'<div class="nts-record nts-diff-record" style="font-size:12px;color:{FG};border:1px solid {BORDER};padding:4px">'
                f'{self._header_html()}{self.commands.value}{self.files.value}</div>')

    # -- decisions (loop thread) -------------------------------------------------------------------------
    def _decide(self, what: str) -> None:
        if self.status != "ready" or (what == "accept" and not self._changes):
            return
        self.status = "accepting" if what == "accept" else "rejecting"
        self._tasks.start(self._finish(what), name=f"nbtoolsched-speculation-{what}")
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

    # -- display ---------------------------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        self.record.show()

    def text(self) -> str:
        head = f"speculation {self.speculation.suggestion!r}: {self.status}"
        if self.speculation.done or self.speculation.boundary is not None:
            head += f"\n  {explain_boundary(self.speculation.boundary, self.mode)}"
        said = self.final_text()
        if said:
            head += f"\n  model: {said[:300]}"
        for command, output, failed in commands_run(self.speculation):
            head += f"\n  $ {command}" + (" (failed)" if failed else "") + "".join(f"\n    {line}" for line in output.splitlines()[:12])
        if self._changes is None:
            return head
        parts = [head] + [f"{c.kind} {c.path}" + (f" ({c.detail})" if getattr(c, "detail", "") else "") + f"\n{c.diff}".rstrip()
                          for c in self._changes]
        return "\n".join(parts)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


_SHOWN_LINES = 20


def commands_run(speculation: Any) -> list[tuple[str, str, bool]]:
    """(command, what it printed, failed) for each shell command the speculation ran."""
    asked: dict[str, str] = {}
    found: list[tuple[str, str, bool]] = []
    for message in list(getattr(speculation, "transcript", [])):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") in ("Bash", "PowerShell"):
                asked[str(block.get("id"))] = str((block.get("input") or {}).get("command", ""))
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in asked:
                body = block.get("content")
                text = body if isinstance(body, str) else "\n".join(
                    str(b.get("text", "")) for b in body or [] if isinstance(b, dict))
                found.append((asked[str(block.get("tool_use_id"))], text, bool(block.get("is_error"))))
    return found


def _commands_html(commands: list[tuple[str, str, bool]]) -> str:
    if not commands:
        return ""
    parts = []
    for command, output, failed in commands:
        lines = output.splitlines()
        shown = "\n".join(lines[:_SHOWN_LINES]) + (f"\n… {len(lines) - _SHOWN_LINES} more lines" if len(lines) > _SHOWN_LINES else "")
        mark = f' <span style="color:{STATE_LABELS["error"][1]}">failed</span>' if failed else ""
        parts.append(f'<div class="nts-spec-command" style="font-size:12px;margin-top:4px;color:{FG}"><code>$ {html.escape(command[:300])}</code>'
                     f'{mark}<pre style="margin:2px 0 0 0;max-height:12em;overflow:auto;color:{FG2}">{html.escape(shown)}</pre></div>')
    return "".join(parts)


def _file_html(change: Any) -> str:
    accent = _KIND_ACCENTS.get(change.kind, BORDER)
    head = (f'<div class="nts-file" style="font-size:12px;margin-top:4px;color:{FG}"><span style="display:inline-block;padding:0 6px;'
            f'border:1px solid {accent};border-left:5px solid {accent};border-radius:3px">{html.escape(change.kind)}</span> '
            f'<code style="color:{FG}">{html.escape(change.path)}</code></div>')
    detail = getattr(change, "detail", "")
    line = f'<i style="color:{FG2}">{html.escape(detail)}</i>' if detail else ""
    if getattr(change, "binary", False):
        body = line or f'<i style="color:{FG2}">binary file</i>'
    else:
        body = (line if detail and not change.diff else "") + diff_html(change.diff or "") if change.diff else line
    return head + body
