"""The inline approval controls of one waiting call: Allow, Always allow, Deny, Deny with feedback.

Clicks may arrive on a kernel subshell thread, so a click only hands the answer to the
loop thread (``Handoff``); the broker is answered there, and the row disappears on the
pump's next render.
"""

from __future__ import annotations

import html
from typing import Callable

import ipywidgets as widgets

from ..permissions._approvals import ApprovalAnswer, ApprovalRequest
from ._render import RowView, rows_table_html

__all__ = ["ApprovalRow"]

Answer = Callable[[str, ApprovalAnswer], None]


class ApprovalRow(widgets.VBox):
    """A call row that waits for a person, with its buttons right under it."""

    def __init__(self, request: ApprovalRequest, handoff: Callable[..., None], answer: Answer) -> None:
        self.request = request
        self._handoff = handoff
        self._answer = answer
        self.row_html = widgets.HTML()
        reason = html.escape(request.reason)
        self.reason = widgets.HTML(f'<span style="font-size:12px;color:#854d0e">⚠ {reason}</span>')
        self.allow_button = _button("Allow", "success", "check", "Run this call once")
        rules = ", ".join(request.suggested_rules) or request.tool_name
        self.always_button = _button("Always allow", "info", "check-double", f"Run it and allow from now on: {rules}")
        self.deny_button = _button("Deny", "danger", "times", "Do not run it; the model is told to stop and wait")
        self.feedback = widgets.Text(placeholder="tell the model why / what instead", layout=widgets.Layout(width="16em"))
        self.deny_feedback_button = _button("Deny with feedback", "warning", "comment", "Do not run it; the model gets your words")
        for button, css in ((self.allow_button, "nts-allow"), (self.always_button, "nts-always"),
                            (self.deny_button, "nts-deny"), (self.deny_feedback_button, "nts-deny-feedback")):
            button.add_class(css)  # stable hooks for browser tests and custom CSS
        self.allow_button.on_click(lambda _b: self._click("allow"))
        self.always_button.on_click(lambda _b: self._click("allow_always"))
        self.deny_button.on_click(lambda _b: self._click("deny"))
        self.deny_feedback_button.on_click(lambda _b: self._click("deny_feedback"))
        buttons = widgets.HBox(
            [self.allow_button, self.always_button, self.deny_button, self.feedback, self.deny_feedback_button],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center", margin="0 0 4px 3em"),
        )
        super().__init__([self.row_html, self.reason, buttons], layout=widgets.Layout(border_left="3px solid #facc15"))
        self.add_class("nts-approval")

    def show(self, row: RowView) -> None:
        """Loop thread: bring the row's text up to date."""
        self.row_html.value = rows_table_html([row])

    def _click(self, kind: str) -> None:
        """Any thread: hand the decision to the loop; never touch state here."""
        self._handoff(self._decide, kind)

    def _decide(self, kind: str) -> None:
        """Loop thread: turn the click into an answer."""
        if kind == "allow":
            answer = ApprovalAnswer.allow()
        elif kind == "allow_always":
            answer = ApprovalAnswer.allow_always(self.request.suggested_rules)
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

    def disable(self) -> None:
        for button in (self.allow_button, self.always_button, self.deny_button, self.deny_feedback_button):
            button.disabled = True


def _button(label: str, style: str, icon: str, tooltip: str) -> widgets.Button:
    return widgets.Button(description=label, button_style=style, icon=icon, tooltip=tooltip,
                          layout=widgets.Layout(width="auto", margin="0 4px 0 0"))
