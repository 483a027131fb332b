"""What the speculation says to the model when it stops a call (one place, our words)."""

from __future__ import annotations

__all__ = ["stopped_edit", "stopped_shell", "stopped_outside", "stopped_tool", "stopped_permission", "stopped_network",
           "stopped_unsandboxed", "stopped_budget", "not_accepted", "ALREADY_STOPPED"]

_TAIL = "Nothing was changed. The user will decide how to go on."

ALREADY_STOPPED = f"This call did not run: the speculative run had already stopped. {_TAIL}"


def stopped_edit(path: str, mode: str | None = None) -> str:
    where = f"in {mode} mode" if mode else "here"
    return f"Speculative run stopped before editing {path}: file edits need the user's approval {where}. {_TAIL}"


def stopped_shell(command: str) -> str:
    return f"Speculative run stopped before `{command}`: only read-only shell commands may run ahead of the user. {_TAIL}"


def stopped_outside(path: str, reason: str) -> str:
    return f"Speculative run stopped: {path} {reason}. Only files inside the working directory may be used. {_TAIL}"


def stopped_tool(name: str) -> str:
    return f"Speculative run stopped before {name}: only read-only tools and file edits may run ahead of the user. {_TAIL}"


def stopped_permission(name: str, why: str) -> str:
    return f"Speculative run stopped before {name}: {why.strip().rstrip('.')}. {_TAIL}"


def stopped_network(command: str) -> str:
    return f"Speculative run stopped before `{command}`: it goes to the network, which only the user may allow. {_TAIL}"


def stopped_unsandboxed(command: str) -> str:
    return f"Speculative run stopped before `{command}`: a command outside the sandbox needs the user's approval. {_TAIL}"


def stopped_budget(what: str) -> str:
    return f"Speculative run stopped: {what}. {_TAIL}"


def not_accepted(paths: list[str]) -> str:
    """Told to the model when the user kept only part of a speculation's file changes."""
    which = "that path is" if len(paths) == 1 else "those paths are"
    return (f"The user accepted this work only in part: the changes to {', '.join(paths)} were rejected and not "
            f"applied, so {which} as before this work (a file it created does not exist).")
