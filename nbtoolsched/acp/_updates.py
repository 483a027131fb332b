"""One prompt's events as ACP session updates: streamed text, and each tool call's life.

A tool call is announced (``tool_call``, pending) the moment its block finishes
streaming, with its title, kind, raw input and locations; it goes ``in_progress`` when
the scheduler starts it (and again once a person allowed it: while asked it shows as
pending, see ``_permission``); a shell command's output is shown as it arrives; it ends
``completed`` or ``failed`` with its result, an edit with the change as a diff. Every
call the client was told about ends with a final status, also those an abort stopped
before they started: ``finish`` reads their results from the conversation.

The listener runs inside the scheduler, synchronously: it only builds updates and
queues them (``Outbox.put``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from acp.helpers import start_tool_call, text_block, tool_content, update_agent_message_text, update_tool_call
from acp.schema import ToolCallStatus

from .._events import ApprovalAnswered, CallStarted, Event, ModelBlock, ModelFinished, ProgressEvent, ResultEvent, TextDelta
from ._files import ClientFiles
from ._outbox import Outbox
from ._toolcalls import EDIT_TOOLS, diff_content, fenced, kind_of, locations_of, result_content, title_of

__all__ = ["PromptUpdates", "final_status"]

MAX_OUTPUT_LINES = 400
MAX_OUTPUT_CHARS = 20_000
_CUT = "\u2026 (earlier output not shown)"


@dataclass
class _Call:
    name: str
    final: bool = False
    output: deque[str] = field(default_factory=deque)  # a shell command's lines so far, bounded
    chars: int = 0
    cut: bool = False

    def add_line(self, line: str, stands_for: int = 1) -> None:
        if stands_for > 1:
            self._append(f"\u2026 ({stands_for - 1} lines not shown)")
        self._append(line)

    def _append(self, line: str) -> None:
        self.output.append(line)
        self.chars += len(line) + 1
        while len(self.output) > MAX_OUTPUT_LINES or (self.chars > MAX_OUTPUT_CHARS and len(self.output) > 1):
            self.chars -= len(self.output.popleft()) + 1
            self.cut = True

    def text(self) -> str:
        return "\n".join([_CUT, *self.output] if self.cut else self.output)


def final_status(status: str, is_error: bool) -> ToolCallStatus:
    """A finished call's ACP status: completed only when it ran and did not fail."""
    return "completed" if status == "completed" and not is_error else "failed"


class PromptUpdates:
    """The listener of one prompt's run (``Agent.subscribe``)."""

    def __init__(self, outbox: Outbox, cwd: str, files: ClientFiles) -> None:
        self.outbox = outbox
        self.cwd = cwd
        self.files = files
        self.calls: dict[str, _Call] = {}
        self.model_stop: str | None = None  # why the model ended its last answer (end_turn, refusal...)

    def __call__(self, event: Event) -> None:
        match event:
            case TextDelta() if event.text:
                self.outbox.put(update_agent_message_text(event.text))
            case ModelBlock(type="tool_use"):
                self._announce(event.tool_use_id, event.tool_name, event.input or {})
            case CallStarted():
                self._status(event.tool_use_id, "in_progress")
            case ApprovalAnswered() if event.answer in ("allow", "allow_always"):
                self._status(event.tool_use_id, "in_progress")  # it was shown pending while asked
            case ProgressEvent():
                self._progress(event.tool_use_id, event.data)
            case ResultEvent() if event.result is not None:
                self._finish(event.tool_use_id, final_status(event.status, event.is_error), event.result.content)
            case ModelFinished():
                self.model_stop = event.stop_reason

    def finish(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """After the run: a final status for every call announced and not yet finished (an
        abort answered it without running it), from its result in the conversation."""
        open_calls = [tool_use_id for tool_use_id, call in self.calls.items() if not call.final]
        if open_calls:
            results = _results(messages)
            for tool_use_id in open_calls:
                result = results.get(tool_use_id)
                if result is None:
                    self._finish(tool_use_id, "failed", "the call got no result")
                else:
                    self._finish(tool_use_id, final_status("completed", bool(result.get("is_error"))), result.get("content", ""))
        self.files.forget_changes()

    # -- one call ------------------------------------------------------------------------------
    def _announce(self, tool_use_id: str, name: str, input: dict[str, Any]) -> None:
        self.calls[tool_use_id] = _Call(name)
        self.outbox.put(start_tool_call(tool_use_id, title_of(name, input, self.cwd), kind=kind_of(name), status="pending",
                                        locations=locations_of(name, input, self.cwd), raw_input=input))

    def _status(self, tool_use_id: str, status: ToolCallStatus) -> None:
        call = self.calls.get(tool_use_id)
        if call is not None and not call.final:
            self.outbox.put(update_tool_call(tool_use_id, status=status))

    def _progress(self, tool_use_id: str, data: Any) -> None:
        call = self.calls.get(tool_use_id)
        if call is None or call.final or not isinstance(data, Mapping):
            return
        line, message = data.get("line"), data.get("message")
        if isinstance(line, str):
            lines = data.get("lines")
            call.add_line(line, lines if isinstance(lines, int) else 1)
            shown = fenced(call.text())
        elif isinstance(message, str) and message.strip():
            shown = message
        else:
            return
        self.outbox.put(update_tool_call(tool_use_id, status="in_progress", content=[tool_content(text_block(shown))]),
                        replaces=f"output {tool_use_id}")

    def _finish(self, tool_use_id: str, status: ToolCallStatus, content: Any) -> None:
        call = self.calls.get(tool_use_id)
        if call is None or call.final:
            return
        call.final = True
        change = self.files.take_change(tool_use_id) if call.name in EDIT_TOOLS else None
        if change is not None and status == "completed":
            shown: list[Any] = [diff_content(change.path, change.before, change.after)]
        else:
            shown = list(result_content(call.name, content))
        self.outbox.put(update_tool_call(tool_use_id, status=status, content=shown))


def _results(messages: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                found[block["tool_use_id"]] = block
    return found
