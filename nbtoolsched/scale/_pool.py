"""Local worker processes for replays: fresh interpreters that never import the caller's script.

``concurrent.futures.ProcessPoolExecutor`` (spawn or forkserver) imports the main
module again in every worker, so a script that calls ``run_sessions`` without an
``if __name__ == "__main__":`` guard starts the run again in each of them, and every
chunk comes back as a ``BrokenProcessPool``; one worker that dies breaks the whole pool.
These workers are plain ``python -c`` processes that import nbtoolsched only: no guard
is needed, a worker that dies loses only its own chunk (the run retries it on a fresh
worker), and a worker can be killed alone (a cancel, a hung session). Each runs in its
own session (a Ctrl-C in the terminal reaches the driver, which decides) and ends when
its stdin closes, so a driver that dies leaves nothing behind.

Frames on the pipes: an 8-byte length, an 8-byte unit number, a pickle.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from typing import IO, Any

from ._work import describe, run_chunk

__all__ = ["WorkerProcess", "serve"]

_HEADER = struct.Struct("<QQ")
BOOT = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
        "from nbtoolsched.scale._pool import serve; serve()")


def _read_frame(stream: IO[bytes]) -> tuple[int, bytes] | None:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    size, unit = _HEADER.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        return None
    return unit, body


def _write_frame(stream: IO[bytes], unit: int, body: bytes) -> None:
    stream.write(_HEADER.pack(len(body), unit) + body)
    stream.flush()


def serve() -> None:
    """The worker's loop: a chunk in, its results out, until stdin closes."""
    source = sys.stdin.buffer
    sink = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a session prints goes to stderr, never into the frames
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver stops us (its own session shields us anyway)
    while True:
        frame = _read_frame(source)
        if frame is None:
            return
        unit, body = frame
        try:
            chunk, timeout = pickle.loads(body)
            reply: tuple[str, Any] = ("ok", run_chunk(chunk, timeout, alarm=True))
        except Exception as err:  # noqa: BLE001 - a chunk that cannot even be read: the driver reports it
            reply = ("error", describe(err))
        _write_frame(sink, unit, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


class WorkerProcess:
    """One worker process and the thread that reads its replies into ``events``:
    ``(worker, unit, ("ok", results) | ("error", text))``, or ``(worker, None, None)`` when it ends."""

    def __init__(self, events: "queue.Queue[tuple[Any, ...]]") -> None:
        self.events = events
        self.unit: int | None = None  # the unit it runs, if any
        self.proc = subprocess.Popen([sys.executable, "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     start_new_session=True, close_fds=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self.alive = True
        try:
            self._stdin.write(pickle.dumps(list(sys.path)))
            self._stdin.flush()
        except OSError:
            self.alive = False
        self._reader = threading.Thread(target=self._read, name=f"nbtoolsched-worker-{self.proc.pid}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        while True:
            try:
                frame = _read_frame(self._stdout)
            except (OSError, ValueError):
                frame = None
            if frame is None:
                self.alive = False
                self.events.put((self, None, None))
                return
            unit, body = frame
            try:
                reply = pickle.loads(body)
            except Exception as err:  # noqa: BLE001
                reply = ("error", f"its results could not be read: {describe(err)}")
            self.events.put((self, unit, reply))

    def send(self, unit: int, body: bytes) -> bool:
        """Hand the worker a unit; False when it is gone (its reader reports the end)."""
        if not self.alive:
            return False
        try:
            _write_frame(self._stdin, unit, body)
        except OSError:
            self.alive = False
            return False
        self.unit = unit
        return True

    def kill(self) -> None:
        """Kill the worker and whatever it started (its process group), and reap it."""
        self.alive = False
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.close()

    def close(self, timeout: float = 5.0) -> None:
        """Close its stdin (it exits when done) and wait for it; kill it past ``timeout``."""
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        self._reader.join(1.0)
        try:
            self._stdout.close()
        except OSError:
            pass
