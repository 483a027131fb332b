"""Every benchmark, one after another, as one command: ``python benchmarks/run_all.py``.

Each script prints its own tables (ratios against baselines measured in the same run);
this runner only runs them in a fixed order and says which failed. ``--skip scale`` (or
any other name) leaves one out; the scale benchmark starts a local Ray and takes minutes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["core", "shell", "decision", "sandbox", "prompts", "output", "grep", "agent", "speculation", "widgets", "scale"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", action="append", default=[], choices=ORDER, help="a benchmark to leave out (repeatable)")
    args = parser.parse_args()
    failed = []
    for name in ORDER:
        if name in args.skip:
            continue
        script = HERE / f"bench_{name}.py"
        print(f"\n## bench_{name}\n", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script)])
        print(f"\n(bench_{name}: {time.monotonic() - started:.0f} s, exit {code})", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
