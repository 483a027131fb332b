"""Every sentence the scheduler itself sends to the model, in one place.

Written to be acted on: each says what happened, whether the user was involved, and
what the model can do next. (Cancelled siblings say plainly that the user did *not*
interrupt: wording that suggests otherwise makes models stop and wait for nothing.)
"""

from __future__ import annotations

__all__ = [
    "wrap_error",
    "no_such_tool",
    "CANCELLED_BEFORE_START",
    "INTERRUPTED",
    "streaming_discarded",
    "sibling_cancelled",
    "tool_crashed",
    "tool_exited",
    "empty_output",
    "call_description",
]

CANCELLED_BEFORE_START = (
    "This tool call did not run: the turn was stopped before it started. "
    "Wait for the user's next message before doing anything else."
)
INTERRUPTED = (
    "The user interrupted this tool call while it was running; it may have done part of its work. "
    "Wait for the user's next message before continuing."
)
INTERRUPT_NOTE = "[Interrupted by user]"
INTERRUPT_NOTE_TOOLS = "[Interrupted by user while tools were running]"
HOOK_STOPPED = "A hook stopped this tool call before it ran."
MISSING_RESULT = "[No result was produced for this tool call because of an internal error]"


def wrap_error(text: str) -> str:
    """Scheduler-made errors are tagged so a model can tell them from tool output."""
    return f"<tool_use_error>{text}</tool_use_error>"


def no_such_tool(name: str) -> str:
    return wrap_error(f"Error: no tool named {name!r} is available. Check the tool list for the right name.")


def streaming_discarded(started: bool = False) -> str:
    what = "was stopped and its result discarded" if started else "never ran"
    return wrap_error(f"Discarded: the response was streamed again from the start, so this call {what}.")


def sibling_cancelled(failed: str) -> str:
    who = f"the parallel call {failed}" if failed else "a parallel call"
    return wrap_error(
        f"Cancelled: {who} failed, so this call was stopped before finishing. "
        "The user did not interrupt anything. Look at that call's error, then retry this call if it is still needed."
    )


def tool_crashed(name: str, message: str) -> str:
    return wrap_error(f"Error calling tool ({name}): {message}")


def tool_exited(code: object, detail: str = "") -> str:
    """A tool's code called ``sys.exit`` (a wrapped argparse or click CLI, say)."""
    shown = "" if code is None else repr(code) if not isinstance(code, int) else str(code)
    text = f"the tool called sys.exit({shown})"
    return f"{text}: {detail}" if detail else text


def empty_output(name: str) -> str:
    return f"({name} completed with no output)"


def call_description(name: str, input: dict[str, object] | None, limit: int = 40) -> str:
    """``Bash(npm test)``: the tool and its most telling argument, cut to ``limit``."""
    summary = None
    for key in ("command", "file_path", "pattern", "url", "path"):
        value = (input or {}).get(key)
        if isinstance(value, str):
            summary = value
            break
    if summary is None:
        return name
    if len(summary) > limit:
        summary = summary[:limit] + "\u2026"
    return f"{name}({summary})"
