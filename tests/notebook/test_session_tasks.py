"""The kernel's lifetime owns the notebook layer's background tasks: one owner, the session's,
holds the UI pump and %%agent turns, and unloading the extension ends them."""

from __future__ import annotations

import asyncio

from .conftest import session, wait_for


async def test_unload_ends_every_background_task_of_the_session(project):
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nbtoolsched")
    owner = session()
    ip.run_cell("%%toolcall --name r1\n- Read: {file_path: README.md}\n")
    await ip.user_ns["r1"]
    pump = owner.pump._task
    await wait_for(lambda: pump is not None and pump in owner.tasks.tasks, what="the pump's task, held by the session")
    ip.run_cell("from nbtoolsched.models import ScriptedModel, Turn, tool_use\n"
                "slow = ScriptedModel([Turn([tool_use('Read', file_path='README.md')], delay_before_block=30)])")
    ip.run_cell("%%agent --model slow --name a1\nread it")
    cell = ip.user_ns["a1"]
    assert cell.task in owner.tasks.tasks  # the turn is the session's too
    ip.run_line_magic("unload_ext", "nbtoolsched")
    await asyncio.wait([pump, cell.task], timeout=10)
    assert pump.done() and cell.task.done() and len(owner.tasks) == 0 and owner.tasks.closed
