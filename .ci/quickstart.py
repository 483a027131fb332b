"""Print the README's Quick start commands, one per line, exactly as written there.

The commands are the non-comment lines of the first ```bash block under ``## Quick
start``; later blocks (``jupyter lab ...``, the notebook magics) are for people, not CI.
``.ci/run`` runs what this prints, each line in order in one fresh venv, so CI always
runs the README's own commands; the suite (tests/test_quickstart.py) checks that there
are exactly three: the one install, the demo, and the whole test suite.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands(text: str) -> list[str]:
    """The lines of the first bash block under the ``## Quick start`` heading."""
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.M | re.S)
    if section is None:
        raise SystemExit("README.md has no '## Quick start' section")
    block = re.search(r"^```bash\n(.*?)^```", section.group(1), re.M | re.S)
    if block is None:
        raise SystemExit("the Quick start section of README.md has no ```bash block")
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


if __name__ == "__main__":
    sys.stdout.write("".join(f"{cmd}\n" for cmd in quickstart_commands(README.read_text(encoding="utf-8"))))
