"""The sentences the agent loop itself puts into a conversation.

Each tells the model what happened and what it can do next; none claims the user did
something they did not.
"""

from __future__ import annotations

from ..execution._texts import INTERRUPT_NOTE, INTERRUPT_NOTE_TOOLS, MISSING_RESULT, wrap_error

__all__ = ["INTERRUPT_NOTE", "INTERRUPT_NOTE_TOOLS", "MISSING_RESULT", "bad_input_json", "not_started", "stream_failed",
           "stream_failed_note", "run_cancelled"]


def bad_input_json(name: str, problem: str) -> str:
    return wrap_error(f"Error: the call to {name} did not run because {problem}. "
                      "Send the call again with its input as a single JSON object.")


def not_started(reason: str) -> str:
    return wrap_error(f"Not run: the turn was stopped ({reason}) before this call could start.")


def stream_failed(error: str) -> str:
    return wrap_error(f"Stopped: the response that made this call failed while streaming ({error}), "
                      "so the call was stopped before it finished; it may have done part of its work. "
                      "Check its effects, then call it again if it is still needed.")


def stream_failed_note(error: str) -> str:
    return f"[The response stopped early because the model request failed: {error}]"


def run_cancelled() -> str:
    return wrap_error("Stopped: the agent run was cancelled before this call finished; it may have done part of its work.")
