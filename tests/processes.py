"""Finding the processes a test started, by a unique ``sleep`` duration (its tag)."""

from __future__ import annotations

import os
from pathlib import Path


def sleeping(tag: str) -> list[int]:
    """Live ``sleep <tag>`` processes (zombies waiting for a reaper do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sleep", tag.encode()] and state != "Z":
            found.append(int(entry))
    return found
