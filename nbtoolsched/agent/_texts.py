"""The sentences the agent loop itself puts into a conversation.

Each tells the model what happened and what it can do next; none claims the user did
something they did not.
"""

from __future__ import annotations

from ..execution._texts import INTERRUPT_NOTE, INTERRUPT_NOTE_TOOLS, MISSING_RESULT, wrap_error

__all__ = ["INTERRUPT_NOTE", "INTERRUPT_NOTE_TOOLS", "MISSING_RESULT", "MODEL_FALLBACK", "bad_input_json", "not_started",
           "stream_failed", "stream_failed_note", "run_cancelled", "model_fallback_result", "model_switched"]

# The label Claude Code gives every call of an answer abandoned for a model fallback; tools
# that read transcripts look for it, so a result starts with it.
MODEL_FALLBACK = "Model fallback triggered"


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


def model_fallback_result(from_model: str, to_model: str) -> str:
    """The result of a call in an answer abandoned for the fallback model (kept in the file only)."""
    return (f"{MODEL_FALLBACK}: {from_model} failed while giving this answer, so the answer was dropped and "
            f"{to_model} was asked again. This call's result was not kept; it may have done part of its work.")


def model_switched(from_model: str, to_model: str, why: str) -> str:
    """The notice a person sees (the cell, the transcript's system entry) when the model changes."""
    return f"Switched to {to_model}: {from_model} could not answer ({why})."
