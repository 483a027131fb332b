"""Finding and running the ``rg`` binary as an asyncio subprocess that an abort kills."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ...tool._abort import AbortError, AbortSignal
from ._walk import VCS_DIRS

__all__ = ["find_rg", "run_rg", "RgRun", "BASE_FLAGS", "SearchTimeout"]

# Flags every search shares, so rg's view of the tree matches the Python walker's:
# no user config, hidden files in, .gitignore honoured outside git repos too, the
# machine-wide excludes file left out, VCS directories excluded (given last: they win).
BASE_FLAGS: tuple[str, ...] = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
)
VCS_GLOBS: tuple[str, ...] = tuple(arg for d in VCS_DIRS for arg in ("--glob", f"!{d}"))


class SearchTimeout(TimeoutError):
    """A search ran longer than allowed and was stopped."""


@dataclass(frozen=True, slots=True)
class RgRun:
    returncode: int
    stdout: bytes
    stderr: str


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """``rg`` on PATH, else the binary the ``ripgrep`` wheel put next to this Python."""
    found = shutil.which("rg")
    if found:
        return found
    name = "rg.exe" if os.name == "nt" else "rg"
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


async def run_rg(binary: str, args: Sequence[str], cwd: str, abort: AbortSignal, timeout: float) -> RgRun:
    """Run rg to completion; kill and reap it on abort (AbortError) or timeout (SearchTimeout)."""
    proc = await asyncio.create_subprocess_exec(
        binary, *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    communicate = asyncio.ensure_future(proc.communicate())
    aborted = asyncio.ensure_future(abort.wait())
    try:
        done, _ = await asyncio.wait({communicate, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if communicate in done:
            stdout, stderr = communicate.result()
            return RgRun(proc.returncode or 0, stdout, stderr.decode("utf-8", "replace"))
        if aborted in done:
            raise AbortError(abort.reason or "aborted")
        raise SearchTimeout(f"ripgrep did not finish within {timeout:g} seconds")
    finally:
        aborted.cancel()
        if proc.returncode is None:
            proc.kill()
        if not communicate.done():
            communicate.cancel()
        await asyncio.gather(communicate, aborted, return_exceptions=True)
        await proc.wait()
