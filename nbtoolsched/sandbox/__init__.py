"""The OS sandbox: a policy turned into a bubblewrap invocation (no tool or rule logic here).

The kernel enforces what a Bash command may read, write, reach and leave running:
``--ro-bind / /`` with only the policy's folders writable, the places programs run from
read-only again inside them, Read-deny paths masked, its own network namespace (a
filtering proxy on the host is the only way out, and only when domains are allowed),
its own PID namespace (nothing outlives the command), an optional seccomp filter.

- ``SandboxSettings``: Claude Code's ``sandbox`` block as the settings files merge it,
  and ``placement()``: where one command runs;
- ``SandboxPolicy``: what one command may do; ``wrap()``: its bubblewrap invocation;
- ``availability()``: whether the sandbox can start here, and if not why and how to fix it.
"""

from ._bwrap import Leftover, Wrapped, wrap
from ._policy import MODEL_SECRETS, LiteralPath, NetworkPolicy, PathSet, SandboxKind, SandboxPolicy
from ._probe import Availability, SandboxWarning, availability, switch
from ._settings import FIX_HINT, Placement, SandboxSettings

__all__ = [
    "SandboxSettings", "SandboxPolicy", "NetworkPolicy", "PathSet", "LiteralPath", "SandboxKind", "MODEL_SECRETS",
    "Placement", "Availability", "SandboxWarning", "availability", "switch", "wrap", "Wrapped", "Leftover", "FIX_HINT",
]
