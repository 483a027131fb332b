"""The OS sandbox: a policy turned into a bubblewrap invocation (no tool or rule logic here).

The kernel enforces what a Bash command may read, write, reach and leave running:
``--ro-bind / /`` with only the policy's folders writable, the places programs run from
read-only again inside them, Read-deny paths masked, its own network namespace (a
filtering proxy on the host is the only way out, and only when domains are allowed),
its own PID namespace (nothing outlives the command), an optional seccomp filter.

- ``SandboxSettings``: Claude Code's ``sandbox`` block as the settings files merge it,
  and ``placement()``: where one command runs;
- ``SandboxPolicy``: what one command may do; ``wrap()``: its bubblewrap invocation;
- ``availability()``: whether the sandbox can start here, and if not why and how to fix it;
- ``KernelOverlay``: a copy-on-write view of a folder (overlayfs) that speculation runs in.
"""

from .._exports import publish
from ._bwrap import Wrapped, wrap
from ._overlay import KernelOverlay, OverlayUnavailable
from ._policy import LiteralPath, NetworkPolicy, PathSet, SandboxKind, SandboxPolicy
from ._probe import Availability, SandboxWarning, availability
from ._settings import Placement, SandboxSettings

__all__ = [
    "SandboxSettings", "SandboxPolicy", "NetworkPolicy", "PathSet", "LiteralPath", "SandboxKind", "Placement",
    "Availability", "SandboxWarning", "availability", "wrap", "Wrapped", "KernelOverlay", "OverlayUnavailable",
]

publish(__name__, __all__, globals())
