"""``python -m nbtoolsched demo``: run the Quick start demo; ``python -m nbtoolsched acp``: the ACP agent."""

from __future__ import annotations

import sys

COMMANDS = {
    "demo": "run the Quick start demo (the default)",
    "acp": "serve nbtoolsched's agent over the Agent Client Protocol on stdio (acp --help for its options)",
}


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "demo"
    if command == "demo":
        from ._demo import main as demo

        return demo()
    if command == "acp":
        from .acp._cli import main as acp

        return acp(argv[1:])
    listed = "\n".join(f"  {name:<6} {what}" for name, what in COMMANDS.items())
    if command in ("-h", "--help"):
        print(f"usage: python -m nbtoolsched [command]\n\ncommands:\n{listed}")
        return 0
    print(f"unknown command {command!r}; the commands are:\n{listed}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
