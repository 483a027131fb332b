"""The notebook layer: magics, live panels, inline approvals, overlay diffs.

The only package that imports IPython and ipywidgets. ``%load_ext nbtoolsched`` calls
``load_ipython_extension`` here (through two lazy wrappers in the top-level package).

How it fits Jupyter (see DESIGN.md, "Jupyter: what was measured"): a ``%%toolcall``
cell never blocks on a person. It starts the run as a task on the kernel's loop, shows
the panel and returns; ``await run`` in a later cell gives the results. ``%%agent``
does the same for a whole agent session: the cell is the user's message, the
conversation goes on across cells, and each turn's calls show in the same panel. Widget clicks
may arrive on a subshell thread, so they only hand over with ``call_soon_threadsafe``;
widgets change on the loop thread only, through one UI pump (about 10 updates a
second plus a final one). Headless kernels answer approvals by the NBTOOLSCHED_APPROVAL
policy (allow, deny or defer). Tools defined in a cell with ``@nts.tool`` join the
session's registry automatically after the cell runs (``%toolsched register VAR``
replaces a tool of the same name explicitly).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from .._exports import publish
from ._magics import ToolMagics
from .._errors import SessionError
from ._session import NotebookSession

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..agent._loop import Agent

__all__ = ["get_agent", "get_session", "load_ipython_extension", "unload_ipython_extension"]

_state: dict[str, Any] = {}


def get_session() -> NotebookSession | None:
    """The session ``%load_ext nbtoolsched`` made in this kernel, if any."""
    return _state.get("session")


def get_agent() -> Agent | None:
    """The ``Agent`` behind this kernel's ``%%agent`` conversation (its messages, its
    transcript file), or None before the first ``%%agent`` cell."""
    session = get_session()
    if session is None:
        return None
    from ._agent_cell import conversation_for

    conversation = conversation_for(session, create=False)
    return conversation.agent if conversation is not None else None


def load_ipython_extension(ipython: InteractiveShell) -> None:
    if _state.get("session") is not None:
        return
    try:
        session = NotebookSession(ipython)
    except SessionError as err:
        print(f"nbtoolsched: {err}")
        return
    magics = ToolMagics(ipython, session)
    ipython.register_magics(magics)
    ipython.events.register("post_run_cell", magics.post_run_cell)
    session.guard.install()
    _state.update(session=session, magics=magics, shell=ipython)
    if not getattr(ipython, "custom_exceptions", ()):  # never replace someone else's handler
        ipython.set_custom_exc((asyncio.CancelledError,), _interrupted_await)
        _state["custom_exc"] = True
    policy = "ask" if session.broker.policy == "interactive" else session.broker.policy
    notes = "".join(f"\n  note: {n}" for n in session.notices)
    print(f"nbtoolsched: {len(session.registry.full_pool)} tools, mode {session.permissions.mode}, approvals: {policy}{notes}")


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    session: NotebookSession | None = _state.pop("session", None)
    magics: ToolMagics | None = _state.pop("magics", None)
    _state.pop("shell", None)
    if _state.pop("custom_exc", False):
        ipython.set_custom_exc((), None)
    if session is not None:
        session.close()
    if magics is not None:
        try:
            ipython.events.unregister("post_run_cell", magics.post_run_cell)
        except ValueError:
            pass
        for kind, names in magics.magics.items():
            for name in names:
                ipython.magics_manager.magics[kind].pop(name, None)


def _interrupted_await(shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None) -> Any:
    """An interrupted ``await run``: one line saying what stopped, not a CancelledError traceback."""
    session = _state.get("session")
    runs = list(session.runs) if session is not None else []
    run = next((r for r in reversed(runs) if r.await_interrupted and not getattr(r, "_told", False)), None)
    if run is not None:
        run._told = True
        print(f"Interrupted: {run.label} was stopped; every call still gets a result (the panel shows each).",
              file=sys.stderr)
        return None
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    shell._showtraceback(etype, value, stb)
    return None


publish(__name__, __all__, globals())
