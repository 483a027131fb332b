"""What the permission-bypass tests share: a secret to look for, Read deny rules that
protect it, an approver that refuses everything and remembers being asked, and a
scheduler over the real built-in tools."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from pathlib import Path
from typing import Any, AsyncIterator

import nbtoolsched as nts
from nbtoolsched.models import tool_use

SECRET = "SECRET-7f3a"
READ_DENIES = ["Read(.env)", "Read(secrets/**)"]
_ids = itertools.count()


class Refuser:
    """An approver that says no to everything and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, request: Any) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return nts.ApprovalAnswer.deny("no")


def make_project(root: Path) -> Path:
    """A project with secrets (``.env``, ``secrets/``) and a file to keep safe."""
    proj = root / "proj"
    (proj / "victim").mkdir(parents=True)
    (proj / "victim" / "keep.txt").write_text("keep\n")
    (proj / "secrets").mkdir()
    (proj / "secrets" / "key.txt").write_text(f"{SECRET} key\n")
    (proj / ".env").write_text(f"TOKEN={SECRET}\n")
    (proj / "README.md").write_text("# readme\n")
    return proj.resolve()


def scheduler(project: Path, refuser: Refuser, hooks: nts.Hooks | None = None, **rules: Any) -> nts.Scheduler:
    perms = nts.Permissions(mode=rules.pop("mode", "default"), cwd=project, approver=refuser, **rules)
    return nts.Scheduler(nts.default_registry(), permissions=perms, hooks=hooks, cwd=project)


async def run_one(sched: nts.Scheduler, name: str, **input: Any) -> nts.ToolResultBlock:
    (result,) = await sched.run([tool_use(name, id=f"toolu_{next(_ids)}", **input)])
    return result


class LoopLag:
    """The longest time the event loop went without running a 50 ms ticker (``longest``)."""

    longest = 0.0


@contextlib.asynccontextmanager
async def loop_lag() -> AsyncIterator[LoopLag]:
    """Measure how long the event loop is blocked while the body runs (a hostile input must
    never hold the loop: other calls and the notebook's UI share it)."""
    loop = asyncio.get_running_loop()
    lag, done = LoopLag(), asyncio.Event()

    async def ticker() -> None:
        last = loop.time()
        while not done.is_set():
            await asyncio.sleep(0.05)
            now = loop.time()
            lag.longest = max(lag.longest, now - last)
            last = now

    watch = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    try:
        yield lag
    finally:
        done.set()
        await watch
