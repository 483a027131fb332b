"""The overlay diff view: what a speculation would change, with Accept and Reject.

Each file created, changed or deleted is a ``<details>`` of its own (open at first; its
summary says ``M src/util.py +3 −1``) with its diff: old and new line numbers, the words
that changed inside a changed line marked, long unchanged stretches folded. Each file
has its own Accept and Reject; the view's Accept applies every file not rejected, its
Reject applies nothing. When every file has its decision, the speculation is decided
(``Speculation.accept(paths=...)`` for the files kept, ``reject()`` when none is). The
header says where and why the speculation stopped, with the command that would let it
go further, and the model's last words, rendered as Markdown.

Accept and Reject hand over to the loop, which calls the speculation's own
``accept``/``reject``; once decided, the output becomes a static record of what really
happened: the files applied, and the files rejected (grey, struck through, never as if
they had been written). ``snapshot_html()`` is that static HTML for the current state at
any time (waiting for a decision too), for a notebook saved while the view is live.
"""

from __future__ import annotations

import html
import os
import stat
from typing import Any, Callable, Sequence

import ipywidgets as widgets

from .._tasks import TaskOwner
from ..speculation import OverlayConflict
from ._blocking import follow_frontend_routing
from ._markdown import markdown_html
from ._pump import UIPump
from ._record import GONE_HTML, PANEL_CSS, Record
from ._diffrender import TINT_ADDED, TINT_REMOVED, file_diff_html, parse_diff
from ._render import BORDER, FG, FG2, STATE_LABELS, plural

__all__ = ["DiffView", "explain_boundary", "file_summary_html"]

_GREY = STATE_LABELS["cancelled"][1]
_KIND_ACCENTS = {"created": STATE_LABELS["completed"][1], "modified": STATE_LABELS["executing"][1],
                 "deleted": STATE_LABELS["error"][1], "replaced": STATE_LABELS["error"][1],
                 "mode_changed": STATE_LABELS["executing"][1], "symlink": STATE_LABELS["completed"][1]}
# One letter per kind, as git's status letters (the title attribute says the word).
_KIND_LETTERS = {"created": "A", "modified": "M", "deleted": "D", "replaced": "R", "mode_changed": "M", "symlink": "L"}
_NOT_DONE = {"created": "not created", "modified": "not changed", "deleted": "not deleted", "replaced": "not replaced",
             "mode_changed": "mode not changed", "symlink": "no symlink made"}
# Translucent tints read over a light and a dark background alike; the text keeps FG.
_STATUS_TEXT = {"running": "running", "ready": "waiting for Accept or Reject", "accepting": "accepting…",
                "accepted": "accepted", "rejecting": "rejecting…", "rejected": "rejected", "failed": "failed"}


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


# -- one file ---------------------------------------------------------------------------------------------
# A file's outcome: "undecided", "accept" / "reject" (chosen, the speculation not yet
# decided), "applied" / "rejected" (what happened once it was).
_BADGES = {"accept": ("accepted · not applied yet", STATE_LABELS["completed"][1]),
           "reject": ("rejected", _GREY), "applied": ("applied", STATE_LABELS["completed"][1]),
           "rejected": ("rejected · not applied", _GREY)}


def _chip(text: str, accent: str, css: str, title: str = "") -> str:
    tip = f' title="{html.escape(title)}"' if title else ""
    return (f'<span class="{css}"{tip} style="display:inline-block;padding:0 6px;border-radius:3px;font-size:11px;'
            f'line-height:16px;color:{FG};border:1px solid {accent};border-left:4px solid {accent}">{html.escape(text)}</span>')


def file_summary_html(change: Any, outcome: str = "undecided", conflict: str = "") -> str:
    """The summary line of one file: ``M src/util.py +3 −1``, and its decision."""
    out = outcome in ("reject", "rejected")
    accent = _GREY if out else _KIND_ACCENTS.get(change.kind, BORDER)
    letter = _KIND_LETTERS.get(change.kind, "?")
    word = change.kind.replace("_", " ")
    kind = (f'<span class="nts-kind" title="{html.escape(word)}" style="display:inline-block;min-width:1.6em;'
            f'text-align:center;font-weight:600;border-radius:3px;color:{FG};border:1px solid {accent};'
            f'border-left:4px solid {accent}">{letter}</span>')
    struck = f";text-decoration:line-through;color:{FG2}" if out else f";color:{FG}"
    path = f'<code class="nts-path" style="background:transparent{struck}">{html.escape(change.path)}</code>'
    counts = ""
    if change.diff and not getattr(change, "binary", False):
        parsed = parse_diff(change.diff)
        if parsed.hunks:  # a rejected file's counts are neutral: nothing was added or removed
            plus, minus = ("transparent", "transparent") if out else (TINT_ADDED, TINT_REMOVED)
            chip = f"padding:0 3px;border-radius:3px;color:{FG2 if out else FG}"
            counts = (f' <span class="nts-plus" style="{chip};background:{plus}">+{parsed.added}</span> '
                      f'<span class="nts-minus" style="{chip};background:{minus}">−{parsed.removed}</span>')
    detail = getattr(change, "detail", "")
    extra = f' <span class="nts-file-detail" style="color:{FG2}">{html.escape(detail)}</span>' if detail else ""
    if getattr(change, "binary", False) and not detail:
        extra = f' <span class="nts-file-detail" style="color:{FG2}">binary file</span>'
    badge = ""
    if outcome in _BADGES:
        text, colour = _BADGES[outcome]
        badge = " " + _chip(text, colour, f"nts-file-status nts-file-{outcome}")
    if conflict:
        badge += " " + _chip("changed on disk", STATE_LABELS["error"][1], "nts-file-conflict", conflict)
    return f"{kind} {path}{counts}{extra}{badge}"


def file_section_html(change: Any, *, outcome: str = "undecided", conflict: str = "", note: str = "",
                      source: Sequence[str] | None = None) -> str:
    """One file as a ``<details>``: open unless it was rejected, its diff inside."""
    is_out = outcome in ("reject", "rejected")
    body = file_diff_html(change.diff or "", source) if change.diff and not getattr(change, "binary", False) else ""
    if not body and getattr(change, "binary", False) and change.diff:
        body = f'<div class="nts-diff-note" style="color:{FG2};font-style:italic">{html.escape(change.diff.strip())}</div>'
    lines = ""
    if conflict:
        lines += f'<div class="nts-file-why" style="color:{FG};padding:2px 0">↳ accept refused: {html.escape(conflict)}</div>'
    if note:
        lines += f'<div class="nts-file-note" style="color:{FG2};padding:2px 0">↳ {html.escape(note)}</div>'
    summary = file_summary_html(change, outcome, conflict)
    return (f'<details class="nts-file-diff" data-path="{html.escape(change.path)}" data-outcome="{outcome}"'
            f'{"" if is_out else " open"} style="font-size:12px;margin-top:4px;color:{FG}">'
            f'<summary style="cursor:pointer;padding:1px 0">{summary}</summary>{lines}{body}</details>')


def _read_source(root: str | None, rel: str, limit: int = 2 << 20) -> list[str] | None:
    """The lines of the real file ``rel`` under ``root`` (never through a link), or None."""
    if not root:
        return None
    try:
        fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)
        return data.decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


# -- the widgets ----------------------------------------------------------------------------------------------
class _FileRow(widgets.HBox):
    """One file: its ``<details>`` and its own Accept and Reject."""

    def __init__(self, view: "DiffView", change: Any) -> None:
        self.change = change
        self.html = widgets.HTML(layout=widgets.Layout(flex="1 1 auto", min_width="0"))
        self.accept_button = widgets.Button(description="Accept", icon="check", disabled=True,
                                            tooltip=f"keep the change to {change.path} (applied when the speculation is decided)",
                                            layout=widgets.Layout(width="auto"))
        self.reject_button = widgets.Button(description="Reject", icon="times", disabled=True,
                                            tooltip=f"leave {change.path} as it is: this change is not applied",
                                            layout=widgets.Layout(width="auto"))
        for button, css in ((self.accept_button, "nts-file-accept nts-btn-success"),
                            (self.reject_button, "nts-file-reject nts-btn-danger")):
            for name in css.split():
                button.add_class(name)
        path = change.path
        self.accept_button.on_click(lambda _b: view._handoff(view._mark, path, "accept"))
        self.reject_button.on_click(lambda _b: view._handoff(view._mark, path, "reject"))
        follow_frontend_routing(self.accept_button, self.reject_button)
        buttons = widgets.HBox([self.accept_button, self.reject_button], layout=widgets.Layout(flex="none", margin="2px 0 0 6px"))
        super().__init__([self.html, buttons], layout=widgets.Layout(align_items="flex-start", width="100%"))
        self.add_class("nts-file")

    def close(self) -> None:
        for widget in (self.html, self.accept_button, self.reject_button):
            widget.close()
        super().close()


class _FileList(widgets.VBox):
    """The files, one row each; ``value`` is their HTML together (what the view shows)."""

    @property
    def value(self) -> str:
        return "".join((child.html if isinstance(child, _FileRow) else child).value for child in self.children)


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
        self._sources: dict[str, list[str] | None] = {}  # the old file's lines, to unfold unchanged stretches
        self._decisions: dict[str, str] = {}  # path -> "accept" | "reject", chosen per file
        self._conflicts: dict[str, str] = {}  # path -> why accept refused it (it changed on disk)
        self._applied: set[str] = set()  # once accepted: the paths really written
        self._rows: dict[str, _FileRow] = {}
        self._sections: dict[tuple[str, str, str, str], str] = {}
        self._state: tuple[Any, ...] = ()  # what the record's snapshot last showed (see render)
        self._tasks = tasks  # the session's: an accept or reject under way ends with it at the latest
        self.record = Record(self, self.text, snapshot=self.snapshot_html)
        self.style_html = widgets.HTML(PANEL_CSS + GONE_HTML)
        self.header = widgets.HTML()
        self.commands = widgets.HTML()  # the shell commands it ran, with what they printed
        self.files = _FileList()
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
        self.add_class(f"nts-live-{self.record.key}")  # while it is drawn, its snapshot output hides
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
            self._show_files()
        with self.header.hold_sync():
            self.header.value = self._header_html()
        shown = _commands_html(commands_run(spec))
        if self.commands.value != shown:
            self.commands.value = shown
        ready = self.status == "ready"
        for change in self._changes or []:
            row = self._rows[change.path]
            row.html.value = self._section(change)
            decision = self._decisions.get(change.path)
            row.accept_button.disabled = not ready or decision == "accept"
            row.reject_button.disabled = not ready or decision == "reject"
        kept = self._kept()
        rejected = len(self._changes or []) - len(kept)
        self.accept_button.description = f"Accept {plural(len(kept), 'file')}" if rejected and kept else "Accept"
        self.accept_button.tooltip = ("copy these changes into the project (and the transcript)" if not rejected else
                                      "copy the changes not rejected into the project (and the transcript)")
        some_kept = any(d == "accept" for d in self._decisions.values())
        self.reject_button.description = "Reject all" if some_kept else "Reject"
        self.accept_button.disabled = not ready or not kept
        self.reject_button.disabled = not ready
        if self.record.final is None:
            # A new state (ready, a decision, a refusal) is sent at once; what changes on
            # its own while it runs (the commands it ran) at the record's own pace.
            state = (self.status, self.message, tuple(sorted(self._decisions.items())), tuple(sorted(self._conflicts)))
            self.record.refresh(force=state != self._state)
            self._state = state
        if self.status in ("accepted", "rejected") and self.record.final is None:
            self.record.finish(self._static_html(final=True), self.text())

    def _read_changes(self) -> list[Any]:
        try:
            changes = list(self.speculation.changes())
        except Exception as err:  # noqa: BLE001 - shown in the view
            self.status, self.message = "failed", str(err)
            return []
        root = getattr(getattr(self.speculation, "overlay", None), "cwd", None)
        for change in changes:  # the real file still holds the old side: the stretches a diff leaves out
            if change.kind == "modified" and change.diff and not getattr(change, "binary", False):
                self._sources[change.path] = _read_source(root if isinstance(root, str) else None, change.path)
        return changes

    def _show_files(self) -> None:
        if not self._changes:
            self.files.children = [widgets.HTML(self._no_files_html())]
            return
        self._rows = {c.path: _FileRow(self, c) for c in self._changes}
        self.files.children = list(self._rows.values())

    def _no_files_html(self) -> str:
        what = self.message if self.status == "failed" and self.message else "no files would change"
        return f'<i style="color:{FG2}">{html.escape(what)}</i>'

    def _paths(self) -> list[str]:
        return [c.path for c in self._changes or []]

    def _kept(self) -> list[str]:
        """The files an Accept now applies: every one not rejected."""
        return [p for p in self._paths() if self._decisions.get(p) != "reject"]

    def _outcome(self, path: str) -> str:
        if self.status == "accepted":
            return "applied" if path in self._applied else "rejected"
        if self.status == "rejected":
            return "rejected"
        return self._decisions.get(path, "undecided")

    def _section(self, change: Any) -> str:
        outcome, conflict = self._outcome(change.path), self._conflicts.get(change.path, "")
        note = ""
        if outcome == "applied" and self._decisions.get(change.path) == "reject":
            note = "applied even so: a file you accepted is inside it, and cannot land without it"
        key = (change.path, outcome, conflict, note)
        found = self._sections.get(key)
        if found is None:
            found = self._sections[key] = file_section_html(change, outcome=outcome, conflict=conflict, note=note,
                                                            source=self._sources.get(change.path))
        return found

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

    def _progress(self) -> str:
        """While waiting: how far the per-file decisions have got."""
        if self.status != "ready" or not self._decisions or not self._changes:
            return ""
        accepted = sum(1 for d in self._decisions.values() if d == "accept")
        rejected = sum(1 for d in self._decisions.values() if d == "reject")
        left = len(self._changes) - accepted - rejected
        parts = [f"{accepted} accepted" if accepted else "", f"{rejected} rejected" if rejected else "",
                 f"{left} to decide" if left else ""]
        return f"of {plural(len(self._changes), 'file')}: " + ", ".join(p for p in parts if p)

    def _header_html(self, *, saved: bool = False) -> str:
        """The header; ``saved``: as a snapshot says it (the state it was in when saved)."""
        spec = self.speculation
        overlay = getattr(spec, "overlay_kind", None)
        where = (f'<div class="nts-spec-overlay" style="color:{FG2}">overlay: {html.escape(overlay)} · '
                 f'{html.escape(getattr(spec, "overlay_note", ""))}</div>') if overlay else ""
        counts = f" · {plural(len(self._changes), 'file')}" if self._changes is not None else ""
        notes = [n for n in (self._progress(), self.message) if n]
        note = "".join(f" · {html.escape(n)}" for n in notes)
        said = self.final_text()
        words = (f'<div class="nts-spec-text" style="margin-top:4px;padding:2px 8px;border-left:3px solid {BORDER};color:{FG};'
                 f'max-height:20em;overflow:auto"><div style="color:{FG2};font-size:11px">the model said</div>'
                 f'{markdown_html(said[:8000])}</div>') if said else ""
        done = spec.done or spec.boundary is not None
        why = explain_boundary(spec.boundary, self.mode) if done else "" if saved else "running…"
        status = _STATUS_TEXT.get(self.status, self.status)
        status = status.rstrip("…") + " when saved" if saved else status
        shown = f'<div class="nts-spec-why" style="color:{FG}">{html.escape(why)}</div>' if why else ""
        return (f'<div style="font-size:12px;color:{FG}"><b>speculation</b> {html.escape(repr(spec.suggestion))}{counts} · '
                f'<span class="nts-spec-status" data-status="{self.status}">{html.escape(status)}</span>'
                f'{note}{shown}{where}{words}</div>')

    def _static_html(self, *, final: bool) -> str:
        if self._changes is None:
            files = ""
        elif not self._changes:
            files = self._no_files_html()
        else:
            files = "".join(f'<div class="nts-file" data-path="{html.escape(c.path)}" data-outcome="{self._outcome(c.path)}">'
                            f'{self._section(c)}</div>' for c in self._changes)
        css = "nts-record nts-diff-record" if final else "nts-record nts-snapshot nts-diff-snapshot"
        saved = "" if final else (f'<div class="nts-saved-note" style="color:{FG2}">This is the speculation as it was when the '
                                  "notebook was saved: none of it was applied then, and only its kernel, which holds the "
                                  "overlay, could apply it. Run the cell again to start over.</div>")
        return (f'<div class="{css}" style="font-size:12px;color:{FG};border:1px solid {BORDER};padding:4px">'
                f'{self._header_html(saved=not final)}{saved}{_commands_html(commands_run(self.speculation))}{files}</div>')

    def snapshot_html(self) -> str:
        """Static HTML of the current state, at any time: while it runs, while it waits for
        Accept or Reject (with the diff and the decisions so far), and once decided (then
        the final record: ``.nts-diff-record``; before, ``.nts-diff-snapshot``). The view's
        record shows it where the widget cannot be drawn; ``render`` calls the record's
        ``refresh`` (at once when the state changed). It reads the view's state and changes
        none of it."""
        return self._static_html(final=self.status in ("accepted", "rejected"))

    # -- decisions (loop thread) -------------------------------------------------------------------------
    def _mark(self, path: str, what: str) -> None:
        """One file's Accept or Reject; the last file decided decides the speculation."""
        if self.status != "ready" or path not in self._paths():
            return
        self._decisions[path] = what
        if what == "reject":
            self._conflicts.pop(path, None)
        if all(p in self._decisions for p in self._paths()):
            kept = self._kept()
            self._start("accept" if kept else "reject", kept)
            return
        self.pump.mark(self)

    def _decide(self, what: str) -> None:
        if self.status != "ready":
            return
        kept = self._kept()
        if what == "accept" and not kept:
            return
        self._start(what, kept if what == "accept" else [])

    def _start(self, what: str, kept: list[str]) -> None:
        self.status = "accepting" if what == "accept" else "rejecting"
        self._tasks.start(self._finish(what, kept), name=f"nbtoolsched-speculation-{what}")
        self.pump.mark(self)

    async def _finish(self, what: str, kept: list[str]) -> None:
        try:
            if what == "accept":
                everything = self._paths()
                if set(kept) == set(everything):
                    result = await self.speculation.accept()
                else:
                    result = await self.speculation.accept(paths=kept)
                self._applied = {c.path for c in result.changes}
                self._conflicts = {}
                written = sum(1 for p in everything if p in self._applied)
                left = len(everything) - written
                self.status = "accepted"
                self.message = f"{plural(written, 'file')} written" + (f", {left} rejected (not written)" if left else "")
            else:
                await self.speculation.reject()
                self.status, self.message = "rejected", "nothing was written"
        except OverlayConflict as err:  # nothing was written (unless err.applied says otherwise)
            self.status, self.message = "ready", self._refused(err)
        except Exception as err:  # noqa: BLE001 - a failure is shown, not raised
            self.status, self.message = ("ready" if what == "accept" else "failed"), str(err)
        self.pump.mark(self)

    def _refused(self, err: OverlayConflict) -> str:
        """Each conflict shown at its file (a path inside a folder at that folder); the
        header says what was refused, and anything that belongs to no file."""
        known = self._paths()
        self._conflicts = {}
        elsewhere = []
        for conflict in err.conflicts:
            owner = conflict.path if conflict.path in known else next(
                (p for p in sorted(known, key=len, reverse=True) if conflict.path.startswith(p + os.sep)), None)
            if owner is None:
                elsewhere.append(str(conflict))
                continue
            why = conflict.reason if owner == conflict.path else f"{conflict.path}: {conflict.reason}"
            self._conflicts[owner] = f"{self._conflicts[owner]}; {why}" if owner in self._conflicts else why
        if err.applied:
            return str(err)
        parts = []
        if self._conflicts:
            count = len(self._conflicts)
            parts.append(f"accept refused, nothing was written: {plural(count, 'file')} changed on disk meanwhile "
                         f"(marked below); reject {'it' if count == 1 else 'them'} to accept the others")
        if elsewhere:
            parts.append(("accept refused, nothing was written: " if not parts else "") + "; ".join(elsewhere))
        return "; ".join(parts) or str(err)

    def click(self, what: str) -> None:
        """Programmatic Accept/Reject (tests, headless notebooks)."""
        (self.accept_button if what == "accept" else self.reject_button).click()

    def click_file(self, path: str, what: str) -> None:
        """Programmatic Accept/Reject of one file."""
        row = self._rows[path]
        (row.accept_button if what == "accept" else row.reject_button).click()

    # -- display ---------------------------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        self.record.show()

    def text(self) -> str:
        head = f"speculation {self.speculation.suggestion!r}: {_STATUS_TEXT.get(self.status, self.status)}"
        notes = [n for n in (self._progress(), self.message) if n]
        if notes:
            head += "".join(f" · {n}" for n in notes)
        if self.speculation.done or self.speculation.boundary is not None:
            head += f"\n  {explain_boundary(self.speculation.boundary, self.mode)}"
        said = self.final_text()
        if said:
            head += f"\n  model: {said[:300]}"
        for command, output, failed in commands_run(self.speculation):
            head += f"\n  $ {command}" + (" (failed)" if failed else "") + "".join(f"\n    {line}" for line in output.splitlines()[:12])
        if self._changes is None:
            return head
        parts = [head] + [self._file_text(c) for c in self._changes]
        return "\n".join(parts)

    def _file_text(self, change: Any) -> str:
        outcome = self._outcome(change.path)
        detail = f" ({change.detail})" if getattr(change, "detail", "") else ""
        if outcome == "rejected":
            return f"rejected {change.path}: {_NOT_DONE.get(change.kind, 'not applied')}"
        mark = {"accept": " [accepted]", "reject": " [rejected]", "applied": " [applied]"}.get(outcome, "")
        conflict = f" [changed on disk: {self._conflicts[change.path]}]" if change.path in self._conflicts else ""
        return f"{change.kind} {change.path}{detail}{mark}{conflict}" + f"\n{change.diff}".rstrip()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def close(self) -> None:
        for row in self._rows.values():
            row.close()
        super().close()


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
        more = len(lines) - _SHOWN_LINES
        shown = "\n".join(lines[:_SHOWN_LINES]) + (f"\n… {plural(more, 'more line')}" if more > 0 else "")
        mark = " " + _chip("failed", STATE_LABELS["error"][1], "nts-failed") if failed else ""
        parts.append(f'<div class="nts-spec-command" style="font-size:12px;margin-top:4px;color:{FG}"><code style="color:{FG};'
                     f'background:transparent">$ {html.escape(command[:300])}</code>{mark}<pre style="margin:2px 0 0 0;'
                     f'max-height:12em;overflow:auto;color:{FG2}">{html.escape(shown)}</pre></div>')
    return "".join(parts)
