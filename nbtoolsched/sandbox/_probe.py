"""Can the sandbox start here? Asked once per process, answered with the reason and the fix.

The probe runs the real thing: bubblewrap with every namespace a command gets, around
``true``. Whatever stops it (no bubblewrap, user namespaces off, Ubuntu's AppArmor
restriction, a container without the rights) is reported in its own words with what to
do about it, never swallowed: a command that then runs without the sandbox says so.
"""

from __future__ import annotations

import functools
import importlib
import os
import shutil
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Literal

from .._errors import ConfigurationError

__all__ = ["Availability", "availability", "known_availability", "switch", "SandboxSwitch", "SandboxWarning", "warn_once", "BWRAP_BASE"]

SandboxSwitch = Literal["on", "off", "required"]
SWITCH_VAR = "NBTOOLSCHED_SANDBOX"
BWRAP_VAR = "NBTOOLSCHED_BWRAP"  # another bubblewrap (Claude Code's setting: sandbox.bwrapPath)
PROBE_TIMEOUT_S = 10.0

# The namespaces and safety options every sandboxed command gets (the probe uses the same).
BWRAP_BASE = (
    "--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try", "--cap-drop", "ALL",
)


class SandboxWarning(UserWarning):
    """The OS sandbox cannot start here: commands run without it (said once per process)."""


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether bubblewrap can start a sandbox for this user, and if not, why and how to fix it."""

    ok: bool
    reason: str = ""
    fix: str = ""
    bwrap: str | None = None
    version: str | None = None
    seccomp: str = ""  # empty: seccomp filters are available; else why not
    socat: str | None = None  # the network bridge (needed only when a policy allows domains)

    def describe(self) -> str:
        if not self.ok:
            return f"unavailable: {self.reason}" + (f" (fix: {self.fix})" if self.fix else "")
        parts = [f"bubblewrap {self.version or '?'} at {self.bwrap}"]
        parts.append("seccomp on" if not self.seccomp else f"no seccomp ({self.seccomp})")
        parts.append(f"socat at {self.socat}" if self.socat else "no socat (allowed domains cannot be reached)")
        return ", ".join(parts)


def switch() -> SandboxSwitch:
    """``NBTOOLSCHED_SANDBOX``: unset or ``on`` (the default), ``off``, or ``required``."""
    value = os.environ.get(SWITCH_VAR, "").strip().lower()
    if value in ("", "on", "1", "true", "auto"):
        return "on"
    if value in ("off", "0", "false"):
        return "off"
    if value == "required":
        return "required"
    raise ConfigurationError(f"{SWITCH_VAR}={os.environ[SWITCH_VAR]!r} is not a sandbox setting: use on, off or required")


_lock = threading.Lock()
_cached: dict[str, Availability] = {}


def availability(*, refresh: bool = False) -> Availability:
    """The probe's answer for the bubblewrap in use (cached; blocking, about 10 ms the first time)."""
    bwrap = os.environ.get(BWRAP_VAR) or shutil.which("bwrap") or ""
    with _lock:
        if refresh or bwrap not in _cached:
            _cached[bwrap] = _probe(bwrap)
        return _cached[bwrap]


def known_availability() -> Availability | None:
    """The probe's answer if it has been asked already (no blocking), else None."""
    bwrap = os.environ.get(BWRAP_VAR) or shutil.which("bwrap") or ""
    return _cached.get(bwrap)


def _probe(bwrap: str) -> Availability:
    if not sys.platform.startswith("linux"):
        return Availability(False, f"the sandbox needs Linux with bubblewrap; this is {sys.platform}",
                            "none here: run commands in a Linux container or VM to have them sandboxed")
    if not bwrap or not os.access(bwrap, os.X_OK):
        return Availability(False, "bubblewrap (bwrap) is not installed" if not bwrap else f"{bwrap} is not executable",
                            "install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)")
    argv = [bwrap, *BWRAP_BASE, "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Availability(False, f"bubblewrap did not start a sandbox within {PROBE_TIMEOUT_S:.0f} s", "", bwrap)
    except OSError as err:
        return Availability(False, f"bubblewrap could not be run: {err}", "", bwrap)
    version = _version(bwrap)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        message = said[-1] if said else f"exit code {done.returncode}"
        return Availability(False, f"bubblewrap cannot start a sandbox: {message}", _fix_for(message), bwrap, version)
    return Availability(True, "", "", bwrap, version, _seccomp_state(), shutil.which("socat"))


def _version(bwrap: str) -> str | None:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, timeout=PROBE_TIMEOUT_S, text=True).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.split()[-1] if out.split() else None


def _fix_for(message: str) -> str:
    text = message.lower()
    if "rtm_newaddr" in text or "loopback" in text:
        return ("the sandbox's own network namespace cannot bring up its loopback: in a container, "
                "give it CAP_NET_ADMIN or run it with --privileged, or run nbtoolsched outside it")
    if "no permissions to create new namespace" in text or "setting up uid map" in text or "operation not permitted" in text:
        restricted = _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1"
        if restricted:
            return ("Ubuntu's AppArmor restricts unprivileged user namespaces: "
                    "sysctl kernel.apparmor_restrict_unprivileged_userns=0, or install an AppArmor profile for bwrap")
        if _read("/proc/sys/user/max_user_namespaces") == "0":
            return "user namespaces are turned off: sysctl user.max_user_namespaces=15000"
        if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
            return "unprivileged user namespaces are turned off: sysctl kernel.unprivileged_userns_clone=1"
        return ("this system refuses new user namespaces (a container without them?): allow them, "
                "or run the container with --security-opt seccomp=unconfined")
    if "mount" in text or "pivot_root" in text or "make / slave" in text:
        return "mounts are refused here (a container without mount rights?): allow CAP_SYS_ADMIN in a user namespace"
    return ""


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


@functools.lru_cache(maxsize=1)
def _seccomp_state() -> str:
    try:
        importlib.import_module("pyseccomp")  # loads libseccomp.so.2 too
    except ImportError:
        return "libseccomp's Python bindings (pyseccomp) are not installed: pip install pyseccomp"
    except OSError as err:  # the bindings load libseccomp.so.2 when imported
        return f"libseccomp cannot be loaded ({err}): apt-get install libseccomp2"
    return ""


_warned: set[str] = set()


def warn_once(message: str) -> None:
    """Say ``message`` once per process, as a SandboxWarning."""
    if message in _warned:
        return
    _warned.add(message)
    warnings.warn(message, SandboxWarning, stacklevel=3)
