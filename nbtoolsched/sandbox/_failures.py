"""What a command prints when the sandbox, not the command, stopped it."""

from __future__ import annotations

from typing import Literal

__all__ = ["sandbox_failure"]

_WRITE_SIGNS = ("Read-only file system", "EROFS")
_NETWORK_SIGNS = ("Could not resolve host", "Temporary failure in name resolution", "Name or service not known",
                  "Network is unreachable", "No address associated with hostname", "getaddrinfo failed",
                  "Failed to establish a new connection", "nodename nor servname", "Could not connect to",
                  "Connection refused", "403 Forbidden by the sandbox", "nbtoolsched sandbox:")
SCAN = 200_000  # characters of each stream looked at (their ends: errors come last)


def sandbox_failure(stdout: str, stderr: str) -> Literal["write", "network"] | None:
    """Did a failed sandboxed command fail on a write the sandbox refused, or on the network?"""
    seen = stderr[-SCAN:] + "\n" + stdout[-SCAN:]
    if any(sign in seen for sign in _WRITE_SIGNS):
        return "write"
    if any(sign in seen for sign in _NETWORK_SIGNS):
        return "network"
    return None
