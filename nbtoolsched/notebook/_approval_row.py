"""The prompt of one waiting call: its buttons first, then why it asks, then what it would do.

The input is shown once, in the form a person judges it by: the diff for a file edit,
the command for a shell call, ``key: value`` lines for anything else. The buttons come
first so that, prompt after prompt, they stay where the last ones were; the keys are
Claude Code's (1 allow, 2 always allow, 3 or Esc deny; ``_keys.js`` handles them).
"Always allow" saves the narrowest rule that covers the call by default (the choices
come from the permissions layer, narrowest first, the whole tool last), for the session
and in the project's ``.claude/settings.local.json``, as Claude Code's "don't ask again"
does. A plain Deny stops the run (the model is told to wait), so the button says so;
Deny with words lets the run go on with the model told why.

Clicks may arrive on a kernel subshell thread, so a click only hands the answer to the
loop thread (``Handoff``); the broker is answered there, and the prompt goes on the
pump's next render.
"""

from __future__ import annotations

import html
import os
from typing import Callable

import ipywidgets as widgets

from ..permissions._approvals import ApprovalAnswer, ApprovalRequest
from ._blocking import follow_frontend_routing
from ._keys import RuleChoice
from ._preview import would_be_diff
from ._diffrender import file_diff_html
from ._render import BORDER, BOX, FG, FG2, input_html

__all__ = ["ApprovalRow", "reason_text", "SAVED_TO"]

Answer = Callable[[str, ApprovalAnswer], None]
_SHELL_FIELDS = ("command", "cmd", "script")
SAVED_TO = "localSettings"  # where Always allow saves its rule (Claude Code's "don't ask again")
_BOX = f"margin:2px 0 0 0;padding:2px 6px;background:{BOX};border:1px solid {BORDER};max-height:9em;overflow:auto"


def reason_text(request: ApprovalRequest, cwd: str | None = None) -> str:
    """Why it asks, always naming what would run: the command for a shell call; paths inside
    ``cwd`` as the project names them (``src/util.py``, not the absolute path)."""
    reason = request.reason.strip()
    if cwd:
        root = os.path.normpath(os.path.abspath(cwd)) + os.sep
        reason = reason.replace(root, "")
    command = _command(request)
    if command is not None:
        shown = command.strip()
        first = shown.splitlines()[0] if shown else ""
        if len(first) > 120 or "\n" in shown:
            first = first[:117] + "…"
        if shown not in reason:
            return f"{request.tool_name} wants to run `{first}`: {reason}"
    return reason


def _command(request: ApprovalRequest) -> str | None:
    return next((request.input[k] for k in _SHELL_FIELDS if isinstance(request.input.get(k), str)), None)


class ApprovalRow(widgets.VBox):
    """What one waiting call shows: its buttons, why it asks, and what it would do."""

    def __init__(self, request: ApprovalRequest, handoff: Callable[..., None], answer: Answer, cwd: str = ".",
                 number: int = 0) -> None:
        self.request = request
        self.number = number
        self._handoff = handoff
        self._answer = answer
        self.allow_button = _button("Allow (1)", "success", "check", "Run this call once [1]")
        self.rule_choices = _rule_choices(request)
        self.rule_picker = RuleChoice([label for label, _ in self.rule_choices] or ["no rule can name this call"])
        self.always_button = _button("Always allow (2)", "info", "check-double",
                                     "Run it, and save the rule chosen next to this button (for this session and in "
                                     ".claude/settings.local.json) [2]")
        if not self.rule_choices:
            self.always_button.disabled = True
        self.deny_button = _button("Deny and stop (3)", "danger", "times",
                                   "Do not run it; the whole run stops here and the model is told to wait for you [3 or Esc]")
        self.feedback = widgets.Text(placeholder="or tell the model why", layout=widgets.Layout(width="11em"))
        self.deny_feedback_button = _button("Deny with words ↵", "warning", "comment",
                                            "Do not run it; the model gets your words and the run goes on [Enter]")
        for widget, css in ((self.allow_button, "nts-allow"), (self.always_button, "nts-always"), (self.rule_picker, "nts-rule"),
                            (self.deny_button, "nts-deny"), (self.deny_feedback_button, "nts-deny-feedback"),
                            (self.feedback, "nts-feedback")):
            widget.add_class(css)  # stable hooks for the keys, browser tests and custom CSS
        self.allow_button.on_click(lambda _b: self._click("allow"))
        self.always_button.on_click(lambda _b: self._click("allow_always"))
        self.deny_button.on_click(lambda _b: self._click("deny"))
        self.deny_feedback_button.on_click(lambda _b: self._click("deny_feedback"))
        follow_frontend_routing(self.allow_button, self.always_button, self.rule_picker, self.deny_button, self.feedback,
                                self.deny_feedback_button)
        self.waiting = widgets.HTML()  # "1 of 3 waiting": set by the panel
        buttons = widgets.HBox(
            [self.allow_button, self.always_button, self.rule_picker, self.deny_button, self.feedback, self.deny_feedback_button,
             self.waiting],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        buttons.add_class("nts-buttons")
        self.detail = widgets.HTML(self._detail_html(cwd))
        super().__init__([buttons, self.detail],
                         layout=widgets.Layout(border_left="4px solid var(--jp-warn-color2, #ffb74d)", padding="2px 0 2px 6px",
                                               margin="2px 0"))
        self.add_class("nts-approval")
        self.add_class(f"nts-ask-{number}")

    def _detail_html(self, cwd: str) -> str:
        """Why it asks (one line, naming the call), then the input once, in its best form."""
        request = self.request
        where = f"#{self.number} " if self.number else ""
        parts = [f'<div class="nts-reason" style="font-size:12px;color:{FG};margin:2px 0 0 0">'
                 f'⚠ <b>{html.escape(where + request.tool_name)}</b> · {html.escape(reason_text(request, cwd))}</div>']
        preview = would_be_diff(request.tool_name, request.input, cwd)
        command = _command(request)
        if preview is not None and preview[0]:
            diff, note = preview
            shown = file_diff_html(diff, max_height="9em")  # line numbers, changed words; the reason names the file
            parts.append(f'<div class="nts-would-diff nts-full-input" title="{html.escape(note)}">{shown}</div>')
        elif command is not None:
            style = f"margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:var(--jp-code-font-family, monospace);font-size:11.5px;color:{FG}"
            parts.append(f'<div class="nts-full-input nts-command" style="{_BOX}"><pre style="{style}">{html.escape(command)}</pre></div>')
        else:
            if preview is not None:
                parts.append(f'<div style="font-size:11px;color:{FG2}">{html.escape(preview[1])}</div>')
            parts.append(f'<div class="nts-full-input" style="{_BOX}">{input_html(request.input, None)}</div>')
        return "".join(parts)

    def set_waiting(self, index: int, total: int) -> None:
        """Loop thread: say where this prompt is in the queue of waiting calls."""
        text = (f'<span class="nts-queue" style="font-size:11px;color:{FG2};margin-left:6px">{index} of {total} waiting · '
                f"Approve all answers every one</span>") if total > 1 else ""
        if self.waiting.value != text:
            self.waiting.value = text

    def _click(self, kind: str) -> None:
        """Any thread: hand the decision to the loop; never touch state here."""
        self._handoff(self._decide, kind)

    def _decide(self, kind: str) -> None:
        """Loop thread: turn the click into an answer."""
        if self.allow_button.disabled:
            return  # answered already (a key and a click, or two keys)
        if kind == "allow_always" and not self.rule_choices:
            return
        if kind == "allow":
            answer = ApprovalAnswer.allow()
        elif kind == "allow_always":
            answer = ApprovalAnswer.allow_always(self.chosen_rules(), destination=SAVED_TO)
        elif kind == "deny":
            answer = ApprovalAnswer.deny()
        else:
            text = self.feedback.value.strip()
            if not text:
                self.feedback.placeholder = "type what the model should know, then Enter"
                return
            answer = ApprovalAnswer.deny(text)
        self.disable()
        self._answer(self.request.tool_use_id, answer)

    def chosen_rules(self) -> tuple[str, ...]:
        """The rule(s) Always allow saves: the chooser's pick."""
        if not self.rule_choices:
            return ()
        index = self.rule_picker.value if 0 <= self.rule_picker.value < len(self.rule_choices) else 0
        return self.rule_choices[index][1]

    def disable(self) -> None:
        for button in (self.allow_button, self.always_button, self.deny_button, self.deny_feedback_button):
            button.disabled = True

    def close(self) -> None:
        self.rule_picker.close()
        super().close()


def _rule_choices(request: ApprovalRequest) -> list[tuple[str, tuple[str, ...]]]:
    """(label, rules) pairs: the suggested set first, then each alternative alone."""
    choices: list[tuple[str, tuple[str, ...]]] = []
    if request.suggested_rules:
        choices.append((" + ".join(request.suggested_rules), tuple(request.suggested_rules)))
    for rule in request.alternatives:
        if (rule,) != tuple(request.suggested_rules):
            choices.append((rule, (rule,)))
    return choices  # empty: no rule can name this call (Always allow is then off)


def _button(label: str, style: str, icon: str, tooltip: str) -> widgets.Button:
    """A theme-coloured button (ipywidgets' coloured styles put white text on light colours,
    under 4.5:1); ``style`` becomes a class the panel's CSS marks with a coloured edge."""
    button = widgets.Button(description=label, icon=icon, tooltip=tooltip,
                            layout=widgets.Layout(width="auto", height="24px", margin="0 4px 0 0"))
    button.add_class(f"nts-btn-{style}")
    return button
