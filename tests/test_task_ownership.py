"""Every task has an owner, and there is one sync bridge.

Outside the engine (``scheduling/_engine.py``, whose calls are tasks of its TaskGroup) and
the owner module (``_tasks.py``), no module starts a task bare: ``asyncio.ensure_future``,
``asyncio.create_task`` and ``loop.create_task`` appear nowhere else, so each task belongs
to a ``TaskOwner`` (or is awaited where it is made, through ``finish_despite_cancel``).
``_sync.py`` is the one sync bridge (``run_sync``): it drives the task it makes to its end.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from nbtoolsched._tasks import TaskOwner, finish_despite_cancel

PACKAGE = Path(__file__).resolve().parent.parent / "nbtoolsched"
# module -> why it may start tasks itself
TASK_STARTERS = {
    "scheduling/_engine.py": "the engine: every call is a task of its TaskGroup",
    "_tasks.py": "the owner every other task belongs to",
    "_sync.py": "the sync bridge: it runs the task it makes to its end (run_until_complete)",
}
# module -> why it may run a coroutine from sync code itself
LOOP_RUNNERS = {
    "_sync.py": "the one sync bridge",
    "_demo.py": "the demo's command-line entry point",
    "scale/_engines.py": "the entry points of worker processes and of the session pool's own thread",
    "notebook/_session.py": "%%toolcall --wait: on a kernel interrupt it drives the loop until every call has its result",
}
_STARTS = {"ensure_future", "create_task"}
_RUNS = {"run_until_complete"}


def bare_task_starts(source: str) -> list[int]:
    """Lines of ``source`` that start a task: ``ensure_future`` in any spelling, and any
    ``create_task`` but a TaskGroup's one bound by ``async with asyncio.TaskGroup() as name``."""
    tree = ast.parse(source)
    groups = {
        item.optional_vars.id
        for node in ast.walk(tree) if isinstance(node, ast.AsyncWith)
        for item in node.items
        if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call)
        and _name(item.context_expr.func) == "TaskGroup"
    }
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name == "ensure_future":
            lines.append(node.lineno)
        elif name == "create_task":
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            if not (isinstance(owner, ast.Name) and owner.id in groups):
                lines.append(node.lineno)
    return lines


def loop_runs(source: str) -> list[int]:
    """Lines that run a coroutine from sync code: ``asyncio.run`` and ``run_until_complete``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if _name(func) in _RUNS or (isinstance(func, ast.Attribute) and func.attr == "run"
                                         and isinstance(func.value, ast.Name) and func.value.id == "asyncio"):
                lines.append(node.lineno)
    return lines


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _modules() -> dict[str, str]:
    return {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_checker_finds_what_it_looks_for() -> None:
    """So that an empty result below means "none", not "the checker is blind"."""
    bad = (
        "import asyncio\n"
        "from asyncio import ensure_future\n"
        "async def f(loop, coro):\n"
        "    asyncio.ensure_future(coro)\n"
        "    ensure_future(coro)\n"
        "    asyncio.create_task(coro)\n"
        "    loop.create_task(coro)\n"
        "    asyncio.get_running_loop().create_task(coro)\n"
        "    async with asyncio.TaskGroup() as group:\n"
        "        group.create_task(coro)\n"
        "    asyncio.run(coro)\n"
        "    loop.run_until_complete(coro)\n"
    )
    assert bare_task_starts(bad) == [4, 5, 6, 7, 8]
    assert loop_runs(bad) == [11, 12]


def test_no_module_outside_the_engine_and_the_owner_starts_a_task_bare() -> None:
    modules = _modules()
    assert len(modules) > 100 and set(TASK_STARTERS) <= set(modules)
    found = {name: lines for name, source in modules.items() if name not in TASK_STARTERS
             if (lines := bare_task_starts(source))}
    assert not found, f"tasks started without an owner (use nbtoolsched._tasks.TaskOwner): {found}"


def test_the_sync_bridge_is_one() -> None:
    modules = _modules()
    found = {name: lines for name, source in modules.items() if name not in LOOP_RUNNERS if (lines := loop_runs(source))}
    assert not found, f"coroutines run from sync code outside nbtoolsched._sync.run_sync: {found}"
    assert "threading" not in modules["permissions/_engine.py"] and "_run_sync" not in modules["permissions/_engine.py"]


async def test_explain_inside_a_running_loop_crosses_through_the_bridge_without_reentering(tmp_path: Path) -> None:
    """explain() judges on a loop of its own: the caller's loop is not patched for re-entry
    and runs nothing else meanwhile."""
    import nbtoolsched as nts
    from nbtoolsched import _sync

    ticks: list[int] = []
    loop = asyncio.get_running_loop()
    loop.call_soon(ticks.append, 1)
    verdict = nts.Permissions(cwd=tmp_path).explain("Bash", {"command": "git status"})
    assert verdict.behavior == "allow"
    assert ticks == [] and id(loop) not in _sync._nested
    await asyncio.sleep(0)
    assert ticks == [1]


# -- the owner -------------------------------------------------------------------------------------
async def test_leaving_the_block_cancels_and_awaits_what_is_left() -> None:
    ended: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.01)  # its cleanup takes a turn of the loop
            ended.append("slow")

    before = asyncio.all_tasks()
    async with TaskOwner() as tasks:
        task = tasks.start(slow())
        quick = tasks.start(asyncio.sleep(0, "quick"))
        assert await quick == "quick"
    assert task.cancelled() and ended == ["slow"] and len(tasks) == 0
    assert asyncio.all_tasks() == before


async def test_a_cancel_during_aclose_waits_for_the_tasks_then_goes_on() -> None:
    ended = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.shield(asyncio.sleep(0.2))
            ended.set()

    owner = TaskOwner()
    owner.start(stubborn())
    await asyncio.sleep(0)
    closing = asyncio.ensure_future(owner.aclose())
    await asyncio.sleep(0.05)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert ended.is_set(), "aclose returned before its task had ended"


async def test_a_closed_owner_starts_nothing() -> None:
    owner = TaskOwner()
    await owner.aclose()
    coro = asyncio.sleep(1)
    with pytest.raises(RuntimeError, match="closed"):
        owner.start(coro)
    assert coro.cr_frame is None  # closed, so never "never awaited"


async def test_finish_despite_cancel_ends_the_work_and_undoes_it() -> None:
    log: list[str] = []

    async def start() -> str:
        await asyncio.sleep(0.1)
        log.append("started")
        return "thing"

    async def undo(value: str) -> None:
        log.append(f"undone {value}")

    before = asyncio.all_tasks()
    task = asyncio.ensure_future(finish_despite_cancel(start(), undo))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["started", "undone thing"]
    assert asyncio.all_tasks() == before
    assert await finish_despite_cancel(start()) == "thing"  # no cancel: just the result
