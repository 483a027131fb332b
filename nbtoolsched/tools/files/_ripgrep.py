"""Finding and running the ``rg`` binary as an asyncio subprocess that an abort kills,
its output read as it comes (a search can stop once it has enough)."""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from ..._tasks import TaskOwner
from ..._tool._abort import AbortError, AbortSignal
from ._walk import VCS_DIRS

__all__ = ["find_rg", "run_rg", "stream_rg", "RgRun", "RgStatus", "LineSplitter", "LongTail", "BASE_FLAGS", "SearchTimeout"]

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


CHUNK = 1 << 16  # bytes read from rg at a time: parsing one chunk keeps the loop busy for a moment only
STDERR_LIMIT = 1 << 16  # rg's error text kept (the rest is read and dropped)


@dataclass(frozen=True, slots=True)
class RgStatus:
    returncode: int | None  # None: stopped early, because the reader had enough
    stderr: str


async def stream_rg(
    binary: str, args: Sequence[str], cwd: str, abort: AbortSignal, timeout: float, feed: Callable[[bytes], bool]
) -> RgStatus:
    """Run rg, handing its output to ``feed`` a chunk at a time as it comes; ``feed``
    returns False once it has enough, and rg is then killed. Kill and reap it on abort
    (AbortError) or timeout (SearchTimeout). Memory stays what ``feed`` keeps."""
    proc = await asyncio.create_subprocess_exec(
        binary, *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr_pipe = proc.stdout, proc.stderr

    async def pump() -> bool:
        while chunk := await stdout.read(CHUNK):
            if not feed(chunk):
                return False
        return True

    async def errors() -> bytes:
        kept = b""
        while chunk := await stderr_pipe.read(CHUNK):
            kept += chunk[: max(0, STDERR_LIMIT - len(kept))]
        return kept

    try:
        async with TaskOwner() as tasks:  # leaving it, rg's readers and the abort watch have ended
            pumping = tasks.start(pump())
            reading_errors = tasks.start(errors())
            aborted = tasks.start(abort.wait())
            try:
                done, _ = await asyncio.wait({pumping, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if pumping in done:
                    if not pumping.result():
                        return RgStatus(None, "")
                    stderr = await reading_errors
                    return RgStatus(await proc.wait(), stderr.decode("utf-8", "replace"))
                if aborted in done:
                    raise AbortError(abort.reason or "aborted")
                raise SearchTimeout(f"ripgrep did not finish within {timeout:g} seconds")
            finally:
                if proc.returncode is None:
                    proc.kill()
    finally:
        # wait() returns only once both pipes are closed: read what a killed rg left in
        # them (at most a pipe buffer), or a reader that stopped early would wait forever.
        for pipe in (stdout, stderr_pipe):
            while await pipe.read(CHUNK):
                pass
        await proc.wait()


async def run_rg(binary: str, args: Sequence[str], cwd: str, abort: AbortSignal, timeout: float) -> RgRun:
    """Run rg to completion and keep all it prints (for output that is small by nature)."""
    chunks: list[bytes] = []

    def keep(chunk: bytes) -> bool:
        chunks.append(chunk)
        return True

    status = await stream_rg(binary, args, cwd, abort, timeout, keep)
    return RgRun(status.returncode or 0, b"".join(chunks), status.stderr)


class LineSplitter:
    """rg's output cut into lines, from chunks, keeping at most ``LINE_BYTES`` of each.

    A longer line (a minified file) keeps its head, cut on a character boundary, and
    ``on_line`` gets a ``LongTail`` saying how many characters were left out, so the
    line can be shown cut exactly as if it had been read whole.
    """

    def __init__(self, on_line: Callable[[bytes, "LongTail | None"], bool]) -> None:
        self.on_line = on_line
        self.head = bytearray()
        self.tail: LongTail | None = None

    def feed(self, chunk: bytes) -> bool:
        start = 0
        if self.head or self.tail is not None:  # the line the last chunk left unfinished
            end = chunk.find(b"\n")
            self._take(chunk if end < 0 else chunk[:end])
            if end < 0:
                return True
            if not self.finish():
                return False
            start = end + 1
        while (end := chunk.find(b"\n", start)) >= 0:
            line = chunk[start:end]
            if len(line) > LINE_BYTES:  # may be long: cut it as if it came in pieces
                self._take(line)
                going = self.finish()
            else:
                going = self.on_line(line, None)
            if not going:
                return False
            start = end + 1
        if start < len(chunk):
            self._take(chunk[start:])
        return True

    def finish(self) -> bool:
        """The line so far is complete (a newline, or the end of the output)."""
        if not self.head and self.tail is None:
            return True
        head, tail = bytes(self.head), self.tail
        self.head, self.tail = bytearray(), None
        if tail is not None:
            tail.close()
        return self.on_line(head, tail)

    def _take(self, piece: bytes) -> None:
        if self.tail is not None:
            self.tail.add(piece)
            return
        self.head += piece
        limit = LINE_BYTES + self.head.find(b"\0") + 1  # the path never counts against the limit
        if len(self.head) > limit and self.head.find(b"\0") >= 0:
            cut = limit
            while cut > 0 and 0x80 <= self.head[cut] <= 0xBF:  # not inside a UTF-8 character
                cut -= 1
            self.tail = LongTail()
            self.tail.add(bytes(self.head[cut:]))
            del self.head[cut:]


LINE_BYTES = 16384  # of a line's text kept: far more than the MAX_COLUMNS characters shown


class LongTail:
    """What is known of the part of a long line that was not kept: its length in
    characters (decoded as the kept head is) and how many carriage returns end it."""

    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.chars = 0
        self.trailing_cr = 0
        self.only_cr = True

    def add(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        if not text:
            return
        self.chars += len(text)
        kept = text.rstrip("\r")
        if kept:
            self.only_cr = False
            self.trailing_cr = len(text) - len(kept)
        else:
            self.trailing_cr += len(text)

    def close(self) -> None:
        self.add(b"", final=True)
