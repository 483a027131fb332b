"""``python -m nbtoolsched demo``: run the Quick start demo."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "demo"
    if command == "demo":
        from ._demo import main as demo

        return demo()
    print(f"unknown command {command!r}; try: python -m nbtoolsched demo", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
