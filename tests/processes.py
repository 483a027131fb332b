"""Finding the processes a test started, by a unique ``sleep`` duration (its tag)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable


def live(matches: Callable[[list[bytes]], bool]) -> list[int]:
    """The pids of live processes whose argv ``matches`` (zombies waiting for a reaper do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if matches(argv) and state != "Z":
            found.append(int(entry))
    return found


def sleeping(tag: str) -> list[int]:
    """Live ``sleep <tag>`` processes."""
    return live(lambda argv: argv[:2] == [b"sleep", tag.encode()])
