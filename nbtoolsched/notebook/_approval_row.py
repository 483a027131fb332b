"""The inline approval of one waiting call: what it would do, then Allow, Always allow, Deny.

A person sees the whole input (wrapped, line breaks kept) and, for a file edit, the
diff it would make, before deciding. "Always allow" names the rule it saves and offers
the narrow ones first (``Bash(git log:*)``, ``Edit(src/**)``), the whole tool last.

Clicks may arrive on a kernel subshell thread, so a click only hands the answer to the
loop thread (``Handoff``); the broker is answered there, and the row disappears on the
pump's next render.
"""

from __future__ import annotations

import html
from typing import Callable

import ipywidgets as widgets

from ..permissions._approvals import ApprovalAnswer, ApprovalRequest
from ._blocking import follow_frontend_routing
from ._preview import would_be_diff
from ._render import BORDER, BOX, FG, FG2, RowView, diff_html, input_html, rows_table_html

__all__ = ["ApprovalRow", "reason_text"]

Answer = Callable[[str, ApprovalAnswer], None]
_SHELL_FIELDS = ("command", "cmd", "script")


def reason_text(request: ApprovalRequest) -> str:
    """Why it asks, always naming what would run: the command for a shell call."""
    reason = request.reason.strip()
    command = next((request.input[k] for k in _SHELL_FIELDS if isinstance(request.input.get(k), str)), None)
    if command is not None:
        shown = command.strip()
        first = shown.splitlines()[0] if shown else ""
        if len(first) > 120 or "\n" in shown:
            first = first[:117] + "…"
        if shown not in reason:
            return f"{request.tool_name} wants to run `{first}`: {reason}"
    return reason


class ApprovalRow(widgets.VBox):
    """A call row that waits for a person, with what it would do and its buttons under it."""

    def __init__(self, request: ApprovalRequest, handoff: Callable[..., None], answer: Answer, cwd: str = ".") -> None:
        self.request = request
        self._handoff = handoff
        self._answer = answer
        self.row_html = widgets.HTML()
        self.detail = widgets.HTML(self._detail_html(cwd))
        self.allow_button = _button("Allow", "success", "check", "Run this call once")
        self.rule_choices = _rule_choices(request)
        self.rule_picker = widgets.Dropdown(options=[(label, i) for i, (label, _) in enumerate(self.rule_choices)], value=0,
                                            layout=widgets.Layout(width="auto", max_width="22em"),
                                            tooltip="the rule Always allow saves for this session")
        self.always_button = _button("Always allow", "info", "check-double",
                                     "Run it, and save the rule shown next to this button for the rest of the session")
        self.deny_button = _button("Deny", "danger", "times", "Do not run it; the run stops here and the model is told to wait")
        self.feedback = widgets.Text(placeholder="or tell the model why / what instead", layout=widgets.Layout(width="15em"))
        self.deny_feedback_button = _button("Deny with feedback", "warning", "comment", "Do not run it; the model gets your words")
        for widget, css in ((self.allow_button, "nts-allow"), (self.always_button, "nts-always"), (self.rule_picker, "nts-rule"),
                            (self.deny_button, "nts-deny"), (self.deny_feedback_button, "nts-deny-feedback"),
                            (self.feedback, "nts-feedback")):
            widget.add_class(css)  # stable hooks for browser tests and custom CSS
        self.allow_button.on_click(lambda _b: self._click("allow"))
        self.always_button.on_click(lambda _b: self._click("allow_always"))
        self.deny_button.on_click(lambda _b: self._click("deny"))
        self.deny_feedback_button.on_click(lambda _b: self._click("deny_feedback"))
        follow_frontend_routing(self.allow_button, self.always_button, self.rule_picker, self.deny_button, self.feedback,
                                self.deny_feedback_button)
        buttons = widgets.HBox(
            [self.allow_button, self.always_button, self.rule_picker, self.deny_button, self.feedback, self.deny_feedback_button],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center", margin="0 0 4px 2.2em"),
        )
        buttons.add_class("nts-buttons")
        super().__init__([self.row_html, self.detail, buttons],
                         layout=widgets.Layout(border_left="4px solid var(--jp-warn-color2, #ffb74d)", margin="2px 0"))
        self.add_class("nts-approval")

    def _detail_html(self, cwd: str) -> str:
        request = self.request
        parts = [f'<div class="nts-reason" style="font-size:12px;color:{FG};margin:2px 0 2px 2.2em">'
                 f'⚠ {html.escape(reason_text(request))}</div>']
        box = f"margin:0 0 2px 2.2em;padding:3px 6px;background:{BOX};border:1px solid {BORDER};max-height:18em;overflow:auto"
        parts.append(f'<div class="nts-full-input" style="{box}">{input_html(request.input, None)}</div>')
        preview = would_be_diff(request.tool_name, request.input, cwd)
        if preview is not None:
            diff, note = preview
            head = f'<div style="font-size:11px;color:{FG2};margin:2px 0 0 2.2em">would change: {html.escape(note)}</div>'
            body = f'<div class="nts-would-diff" style="margin-left:2.2em">{diff_html(diff, "20em")}</div>' if diff else ""
            parts.append(head + body)
        return "".join(parts)

    def show(self, row: RowView) -> None:
        """Loop thread: bring the row's text up to date (the input is shown in full below)."""
        self.row_html.value = rows_table_html([row], input_limit=120)

    def _click(self, kind: str) -> None:
        """Any thread: hand the decision to the loop; never touch state here."""
        self._handoff(self._decide, kind)

    def _decide(self, kind: str) -> None:
        """Loop thread: turn the click into an answer."""
        if kind == "allow":
            answer = ApprovalAnswer.allow()
        elif kind == "allow_always":
            answer = ApprovalAnswer.allow_always(self.chosen_rules())
        elif kind == "deny":
            answer = ApprovalAnswer.deny()
        else:
            text = self.feedback.value.strip()
            if not text:
                self.feedback.placeholder = "type the feedback first, then click again"
                return
            answer = ApprovalAnswer.deny(text)
        self.disable()
        self._answer(self.request.tool_use_id, answer)

    def chosen_rules(self) -> tuple[str, ...]:
        """The rule(s) Always allow saves: the picker's choice."""
        index = self.rule_picker.value if isinstance(self.rule_picker.value, int) else 0
        return self.rule_choices[index][1]

    def disable(self) -> None:
        for button in (self.allow_button, self.always_button, self.deny_button, self.deny_feedback_button):
            button.disabled = True


def _rule_choices(request: ApprovalRequest) -> list[tuple[str, tuple[str, ...]]]:
    """(label, rules) pairs: the suggested set first, then each alternative alone."""
    choices: list[tuple[str, tuple[str, ...]]] = []
    if request.suggested_rules:
        choices.append((" + ".join(request.suggested_rules), tuple(request.suggested_rules)))
    for rule in request.alternatives:
        if (rule,) != tuple(request.suggested_rules):
            choices.append((rule, (rule,)))
    return choices or [(request.tool_name, (request.tool_name,))]


def _button(label: str, style: str, icon: str, tooltip: str) -> widgets.Button:
    """A theme-coloured button (ipywidgets' coloured styles put white text on light colours,
    under 4.5:1); ``style`` becomes a class the panel's CSS marks with a coloured edge."""
    button = widgets.Button(description=label, icon=icon, tooltip=tooltip,
                            layout=widgets.Layout(width="auto", height="24px", margin="0 4px 0 0"))
    button.add_class(f"nts-btn-{style}")
    return button

