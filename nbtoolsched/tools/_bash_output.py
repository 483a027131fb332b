"""What a shell command prints: a bounded copy for the result, the whole of it on disk, throttled progress.

A command may print gigabytes, or one line of a hundred megabytes, while the model only
ever reads a preview. So each stream is kept whole in memory up to ``KEEP_WHOLE_BYTES``
(larger results are then persisted by the pipeline, as for any tool); past that it is
written to a file (up to ``MAX_SAVED_BYTES``) and only its first and last few thousand
bytes stay in memory, which is what the model is shown, with the file's path. Lines
are reported as progress at a bounded rate. Each byte is looked at a constant number of
times, and only the newest chunk is searched for line ends: time is linear in the
output, memory flat.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from pathlib import Path
from typing import IO, Any, Callable

__all__ = [
    "StreamCapture",
    "ProgressThrottle",
    "KEEP_WHOLE_BYTES",
    "SHOWN_HEAD_BYTES",
    "SHOWN_TAIL_BYTES",
    "MAX_SAVED_BYTES",
    "MAX_PROGRESS_LINE",
    "PROGRESS_INTERVAL_S",
    "PROGRESS_BURST",
]

KEEP_WHOLE_BYTES = 1024 * 1024  # of each stream, kept whole in memory
SHOWN_HEAD_BYTES = 6_000  # of a larger stream, kept and shown: both streams fit one 30,000-char result
SHOWN_TAIL_BYTES = 6_000
MAX_SAVED_BYTES = 64 * 1024 * 1024  # the file gets this much, then a marker and the kept tail
MAX_PROGRESS_LINE = 10_000  # bytes of one line in a progress event; a longer line keeps head and tail
PROGRESS_INTERVAL_S = 0.05
PROGRESS_BURST = 20  # lines sent one by one per interval; later ones are folded into one event


class ProgressThrottle:
    """At most ``burst`` line events per interval, then one folded event per stream.

    Shared by a call's stdout and stderr. Small outputs stream line by line, at once; a
    flood is folded into one event per stream and interval that carries the latest line
    and how many lines it stands for (``"lines"``), so 2 million lines cost a few hundred
    events, not 2 million. A folded event goes out when its interval ends, or at
    ``flush`` (the end of the call), never later.
    """

    def __init__(self, sink: Callable[[Any], None], *, interval: float = PROGRESS_INTERVAL_S, burst: int = PROGRESS_BURST) -> None:
        self.sink = sink
        self.interval = interval
        self.burst = burst
        self._loop = asyncio.get_running_loop()
        self._window = -math.inf
        self._sent = 0
        self._folded: dict[str, list[Any]] = {}  # stream -> [latest line, lines it stands for]
        self._timer: asyncio.TimerHandle | None = None

    def one_by_one(self, count: int) -> bool:
        """May ``count`` more lines go out as single events now?"""
        now = self._loop.time()
        if now - self._window >= self.interval:
            self.flush()
            self._window, self._sent = now, 0
        if self._folded or self._sent + count > self.burst:
            return False  # once folding, the rest of the interval folds too: order is kept
        self._sent += count
        return True

    def send(self, stream: str, line: str) -> None:
        self.sink({"stream": stream, "line": line})

    def fold(self, stream: str, line: str, count: int) -> None:
        entry = self._folded.get(stream)
        if entry is None:
            self._folded[stream] = [line, count]
        else:
            entry[0] = line
            entry[1] += count
        if self._timer is None:
            delay = max(0.0, self._window + self.interval - self._loop.time())
            self._timer = self._loop.call_later(delay, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        folded, self._folded = self._folded, {}
        for stream, (line, count) in folded.items():
            self.sink({"stream": stream, "line": line, "lines": count} if count > 1 else {"stream": stream, "line": line})


class StreamCapture:
    """One pipe of a command: keeps a bounded copy, spills to ``save_to``, reports lines."""

    def __init__(self, stream: str, throttle: ProgressThrottle | None = None, save_to: Path | None = None) -> None:
        self.stream = stream
        self.throttle = throttle
        self.save_to = save_to
        self.total = 0
        self._whole: list[bytes] | None = []  # every chunk, until the stream outgrows KEEP_WHOLE_BYTES
        self._head = b""
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._file: IO[bytes] | None = None
        self.saved = 0  # bytes from the start written to ``save_to``
        self.saved_tail = 0  # and from the end, after a marker, when the middle did not fit
        self.save_error: str | None = None
        self._line_head = bytearray()  # the line being read: its first MAX_PROGRESS_LINE bytes,
        self._line_tail = b""  # its last MAX_PROGRESS_LINE // 2 bytes,
        self._line_len = 0  # and its length

    # -- reading ----------------------------------------------------------------------------
    async def pump(self, reader: asyncio.StreamReader | None, chunk_size: int = 65_536) -> None:
        if reader is None:
            return
        while chunk := await reader.read(chunk_size):
            self.feed(chunk)
        self.end()

    def feed(self, chunk: bytes) -> None:
        self._keep(chunk)
        if self.throttle is None:
            return
        count = chunk.count(b"\n")
        if not count:
            self._line_add(chunk)
            return
        if self.throttle.one_by_one(count):
            start = 0
            for _ in range(count):
                end = chunk.index(b"\n", start)
                self._line_add(chunk[start:end])
                self.throttle.send(self.stream, self._line_take())
                start = end + 1
        else:  # only the last complete line of the chunk is looked at
            end = chunk.rindex(b"\n")
            start = chunk.rfind(b"\n", 0, end) + 1
            if start:
                self._line_reset()  # the pending line ended earlier in this chunk
            self._line_add(chunk[start:end])
            self.throttle.fold(self.stream, self._line_take(), count)
            start = end + 1
        self._line_add(chunk[start:])

    def end(self) -> None:
        """The stream is at its end: a last line without a newline is reported too."""
        if self.throttle is not None and self._line_len:
            self.throttle.flush()
            self.throttle.send(self.stream, self._line_take())

    # -- the bounded copy -------------------------------------------------------------------
    def _keep(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._whole is not None:
            self._whole.append(chunk)
            if self.total <= KEEP_WHOLE_BYTES:
                return
            data = b"".join(self._whole)
            self._whole = None
            self._start_saving(data)
            self._head = data[:SHOWN_HEAD_BYTES]
            self._tail.append(data[-SHOWN_TAIL_BYTES:])
            self._tail_size = SHOWN_TAIL_BYTES
        else:
            self._save(chunk)
            self._tail.append(chunk)
            self._tail_size += len(chunk)
        while len(self._tail) > 1 and self._tail_size - len(self._tail[0]) >= SHOWN_TAIL_BYTES:
            self._tail_size -= len(self._tail.popleft())

    @property
    def cut(self) -> int:
        """Bytes of the stream that are not in ``text()``."""
        if self._whole is not None:
            return 0
        return self.total - len(self._head) - min(self._tail_size, SHOWN_TAIL_BYTES)

    def _tail_bytes(self) -> bytes:
        return b"".join(self._tail)[-SHOWN_TAIL_BYTES:]

    def text(self) -> str:
        """The stream, or its head and tail around a marker saying what was cut and where it is."""
        if self._whole is not None:
            return b"".join(self._whole).decode("utf-8", errors="replace")
        head = _utf8_end(self._head).decode("utf-8", errors="replace")
        tail = _utf8_start(self._tail_bytes()).decode("utf-8", errors="replace")
        return f"{head}\n\n... [{self.cut:,} bytes of {self.stream} cut here{self._where()}] ...\n\n{tail}"

    def notice(self) -> str | None:
        """One sentence for the top of the result when the stream was cut, else None."""
        if self._whole is not None:
            return None
        shown = f"shown here are its first {len(self._head):,} and last {min(self._tail_size, SHOWN_TAIL_BYTES):,} bytes"
        return f"{self.stream} was {self.total:,} bytes: {shown}{self._where()}"

    def _where(self) -> str:
        if self._file is None and not self.saved:
            return f"; it could not be saved ({self.save_error})" if self.save_error else ""
        if self.saved >= self.total:
            return f"; all of it is saved in {self.save_to}"
        if self.saved_tail:
            return f"; its first {self.saved:,} and last {self.saved_tail:,} bytes are saved in {self.save_to}"
        return f"; its first {self.saved:,} bytes are saved in {self.save_to}"

    # -- the file ---------------------------------------------------------------------------
    def _start_saving(self, data: bytes) -> None:
        if self.save_to is None:
            return
        try:
            self.save_to.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.save_to, "wb")
        except OSError as err:
            self.save_error = err.strerror or str(err)
            return
        self._save(data)

    def _save(self, data: bytes) -> None:
        if self._file is None:
            return
        room = MAX_SAVED_BYTES - self.saved
        if room <= 0:
            return
        try:
            self._file.write(data[:room])
        except OSError as err:
            self.save_error = err.strerror or str(err)
            self._close_file()
            return
        self.saved += min(room, len(data))

    def close(self) -> None:
        """Finish the file: past ``MAX_SAVED_BYTES``, a marker and the kept tail go at its end."""
        if self._file is None:
            return
        missing = self.total - self.saved
        tail = self._tail_bytes()
        try:
            if missing > len(tail):
                self._file.write(f"\n\n... [{missing - len(tail):,} bytes of {self.stream} not saved] ...\n\n".encode())
                self._file.write(tail)
                self.saved_tail = len(tail)
            elif missing:
                self._file.write(tail[-missing:])
                self.saved += missing
        except OSError as err:
            self.save_error = err.strerror or str(err)
        self._close_file()

    def _close_file(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    # -- the line being read, for progress --------------------------------------------------
    def _line_add(self, part: bytes) -> None:
        if not part:
            return
        self._line_len += len(part)
        room = MAX_PROGRESS_LINE - len(self._line_head)
        if room > 0:
            self._line_head += part[:room]
        keep = MAX_PROGRESS_LINE // 2
        self._line_tail = part[-keep:] if len(part) >= keep else (self._line_tail + part)[-keep:]

    def _line_take(self) -> str:
        if self._line_len <= MAX_PROGRESS_LINE:
            line = self._line_head.decode("utf-8", errors="replace")
        else:
            half = MAX_PROGRESS_LINE // 2
            cut = self._line_len - half - len(self._line_tail)
            head = _utf8_end(bytes(self._line_head[:half])).decode("utf-8", errors="replace")
            tail = _utf8_start(self._line_tail).decode("utf-8", errors="replace")
            line = f"{head} ... [{cut:,} bytes cut] ... {tail}"
        self._line_reset()
        return line

    def _line_reset(self) -> None:
        self._line_head = bytearray()
        self._line_tail = b""
        self._line_len = 0


def _utf8_start(data: bytes) -> bytes:
    """Drop the continuation bytes a cut left at the start."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:]


def _utf8_end(data: bytes) -> bytes:
    """Drop a character a cut left unfinished at the end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead byte
        need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
        return data if need <= back else data[:-back]
    return data
