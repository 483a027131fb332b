"""Can a click reach a cell that blocks? Where not, a blocking run must not wait for one.

A ``%%toolcall --wait`` cell (or ``nts.run_sync`` in a cell) keeps the kernel's shell busy
until the run ends. Whether a widget click is handled meanwhile depends on the kernel
(measured; see tests/notebook/test_kernel.py and DESIGN.md "Jupyter: what was measured"):

* ipykernel 6.x: comm messages wait in the shell queue behind the running cell: never.
* ipykernel 7.0-7.3: a comm message sent to a subshell runs on that subshell's thread,
  so it arrives when the frontend sends widget messages to a subshell (JupyterLab and
  Notebook >= 7.4 with ``commsOverSubshells`` on, its default) and a subshell is open;
  on the main shell it waits behind the cell.
* ipykernel >= 7.4 routes a comm message back to the shell that last published on the
  comm (the main shell, for our widgets), where it waits behind the blocked cell: a
  nested loop (nest-asyncio2) does not change that, since the kernel reads the next shell
  message only once the current one is handled. Our widgets therefore keep the routing
  the frontend chose (``follow_frontend_routing``), which brings 7.4+ back to 7.3's
  behaviour: a click sent to a subshell runs there, and the hand-over reaches the loop.
* No kernel (a script, nbclient, papermill): nobody can click; a headless policy answers.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

__all__ = ["Reach", "clicks_reach_blocked_cell", "follow_frontend_routing", "ipykernel_version"]


class Reach:
    """The answer and the reason, said so a person knows what to change."""

    def __init__(self, ok: bool, why: str) -> None:
        self.ok = ok
        self.why = why

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"Reach({self.ok}, {self.why!r})"


def ipykernel_version() -> tuple[int, ...] | None:
    try:
        import ipykernel
    except ImportError:
        return None
    parts = []
    for piece in ipykernel.__version__.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _subshells(kernel: Any) -> list[str]:
    thread = getattr(kernel, "shell_channel_thread", None)
    manager = getattr(thread, "manager", None)
    try:
        return list(manager.list_subshell()) if manager is not None else []
    except Exception:  # noqa: BLE001 - a kernel without subshells
        return []


def clicks_reach_blocked_cell(kernel: Any) -> Reach:
    """Whether a widget click would be handled while the current cell blocks."""
    if kernel is None or not hasattr(kernel, "shell_handlers"):
        return Reach(False, "there is no Jupyter kernel here, so nobody can click a button")
    version = ipykernel_version() or (0,)
    shown = ".".join(map(str, version))
    if version < (7,):
        return Reach(False, f"ipykernel {shown} handles a button click only after the running cell has finished")
    if _subshells(kernel):
        return Reach(True, f"ipykernel {shown} handles clicks sent to a subshell while the cell waits")
    return Reach(False, f"ipykernel {shown} handles a click during a busy cell only when the frontend sends widget "
                        "messages to a subshell (JupyterLab or Notebook >= 7.4 with commsOverSubshells on, the default), "
                        "and this frontend does not")


def _keep_default(data: Any, default: Any) -> Any:
    return default


def follow_frontend_routing(*widgets: Any) -> None:
    """Let a click on these widgets run where the frontend sent it (a subshell, say).

    ipykernel 7.4+ re-routes it to the shell that last published on the comm, which is
    the main shell for our widgets: busy, so the click would wait behind a blocked cell.
    Our handlers only hand over to the loop thread (``Handoff``), so any thread will do."""
    for widget in widgets:
        comm = getattr(widget, "comm", None)
        if comm is not None and hasattr(comm, "_reply_subshell_for"):
            comm._reply_subshell_for = _keep_default


@contextlib.contextmanager
def blocking(session: Any) -> Iterator[None]:
    """Mark the session as blocked in a cell (its broker then answers what nobody can click)."""
    session.blocked += 1
    try:
        yield
    finally:
        session.blocked -= 1
