"""Which command lines go to the network: a speculation stops before them (a person decides).

One row per program: ``None`` for any use of it, else the subcommands that fetch or send.
A guess from the words, used only to stop early: inside the sandbox a command has no
network whatever this says, and one that fails on it stops the speculation too.
"""

from __future__ import annotations

import os

from ._invocations import command_line

__all__ = ["NETWORK_PROGRAMS", "network_use"]

NETWORK_PROGRAMS: dict[str, frozenset[str] | None] = {
    "curl": None, "wget": None, "ssh": None, "scp": None, "sftp": None, "rsync": None, "nc": None, "ncat": None,
    "telnet": None, "ftp": None, "http": None, "aria2c": None,
    "git": frozenset({"fetch", "pull", "push", "clone", "ls-remote", "submodule", "remote", "send-email", "request-pull"}),
    "pip": frozenset({"install", "download", "index", "search"}), "pip3": frozenset({"install", "download", "index", "search"}),
    "uv": frozenset({"add", "sync", "lock", "pip", "tool", "run", "python"}), "poetry": frozenset({"add", "install", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "publish", "exec", "view", "audit"}), "npx": None,
    "yarn": frozenset({"install", "add", "upgrade", "dlx"}), "pnpm": frozenset({"install", "i", "add", "update", "dlx"}),
    "apt": frozenset({"install", "update", "upgrade"}), "apt-get": frozenset({"install", "update", "upgrade", "download"}),
    "docker": frozenset({"pull", "push", "build", "login", "run"}), "podman": frozenset({"pull", "push", "build", "login", "run"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "search"}), "go": frozenset({"get", "install", "mod"}),
    "gem": frozenset({"install", "update", "fetch"}), "bundle": frozenset({"install", "update"}),
    "brew": frozenset({"install", "update", "upgrade", "fetch"}), "conda": frozenset({"install", "update", "create"}),
    "gh": None, "hub": None,
}


def network_use(command: str) -> str | None:
    """The first invocation of ``command`` that goes to the network (its text), or None."""
    try:
        line = command_line(command)
    except Exception:  # noqa: BLE001 - cannot tell: the sandbox still has no network
        return None
    for invocation in line.invocations:
        words = invocation.words
        if not words or words[0] is None:
            continue
        program = os.path.basename(words[0])
        subcommands = NETWORK_PROGRAMS.get(program, frozenset())
        if subcommands is None:
            return invocation.text
        first = next((w for w in words[1:] if w is not None and not w.startswith("-")), None)
        if first in subcommands:
            return invocation.text
    return None
