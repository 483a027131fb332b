"""Network for sandboxed commands: a filtering proxy on the host, reached through a Unix socket.

A sandbox has its own network namespace with nothing but loopback. When a policy allows
domains, a proxy.py process runs on the host (one per set of domain lists, started on
first use and stopped when this process exits) listening on a Unix socket in a private
folder; the socket is bound into the sandbox, where socat listens on 127.0.0.1:3128 and
forwards every connection to it. ``HTTP_PROXY``/``HTTPS_PROXY`` (both spellings) point
there, so curl, pip, npm, git over HTTPS and Python's urllib go through the proxy, which
decides by domain (``_proxy_plugin``). A program that ignores those variables, or speaks
something other than HTTP (ssh, raw TCP, UDP, DNS lookups), finds no route out: it fails
to resolve or to connect, which is what the sandbox is for.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from .._errors import ConfigurationError
from ._policy import MODEL_SECRETS, NetworkPolicy
from ._proxy_plugin_name import PLUGIN, POLICY_VAR

__all__ = ["ProxyBridge", "proxy_for", "BRIDGE_PORT", "shutdown_proxies"]

BRIDGE_PORT = 3128  # inside the sandbox, on its own loopback

START_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class ProxyBridge:
    """What a sandbox needs to reach the proxy: the host socket and socat."""

    socket: str
    socat: str

    def bind_args(self) -> list[str]:
        return ["--bind", self.socket, self.socket]  # the same path inside

    def env(self) -> dict[str, str]:
        url = f"http://127.0.0.1:{BRIDGE_PORT}"
        values = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
        values.update(NO_PROXY="localhost,127.0.0.1,::1", no_proxy="localhost,127.0.0.1,::1")
        return values

    def start_script(self) -> str:
        """Shell lines that start the bridge inside the sandbox and wait until it listens."""
        listen = f"TCP-LISTEN:{BRIDGE_PORT},bind=127.0.0.1,fork,reuseaddr"
        port_hex = f"{BRIDGE_PORT:04X}"
        return (
            f"{self.socat} -T 600 {listen} UNIX-CONNECT:{self.socket} </dev/null >/dev/null 2>&1 &\n"
            "for _ in $(seq 1 2000); do\n"
            f"  grep -q ':{port_hex} 00000000:0000 0A' /proc/net/tcp 2>/dev/null && break\n"
            "  sleep 0.001\n"
            "done\n"
        )


class _Proxy:
    def __init__(self, network: NetworkPolicy) -> None:
        self.folder = tempfile.mkdtemp(prefix="nbtoolsched-proxy-")
        os.chmod(self.folder, 0o700)
        self.socket = os.path.join(self.folder, "proxy.sock")
        env = {k: v for k, v in os.environ.items() if k not in MODEL_SECRETS}  # the proxy needs no model keys
        env[POLICY_VAR] = json.dumps({"allowed": list(network.allowed_domains), "denied": list(network.denied_domains)})
        argv = [sys.executable, "-m", "proxy", "--unix-socket-path", self.socket, "--plugins", PLUGIN,
                "--num-acceptors", "1", "--num-workers", "1", "--log-level", "ERROR", "--inactive-conn-cleanup-timeout", "600"]
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not os.path.exists(self.socket):
            if self.process.poll() is not None:
                said = (self.process.stderr.read() if self.process.stderr else b"").decode("utf-8", "replace").strip()
                self.close()
                raise ConfigurationError(f"the sandbox's network proxy (proxy.py) did not start: {said[-500:] or 'no message'}")
            if time.monotonic() > deadline:
                self.close()
                raise ConfigurationError(f"the sandbox's network proxy (proxy.py) did not start within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.01)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(2)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_lock = threading.Lock()
_proxies: dict[NetworkPolicy, _Proxy] = {}


def proxy_for(network: NetworkPolicy) -> ProxyBridge:
    """The running proxy for these domain lists, started if needed (blocking: call off the loop)."""
    socat = shutil.which("socat")
    if socat is None:
        raise ConfigurationError("sandbox.network.allowedDomains needs socat inside the sandbox, and it is not installed: "
                                 "apt-get install socat")
    with _lock:
        running = _proxies.get(network)
        if running is None or not running.alive():
            if running is not None:
                running.close()
            running = _proxies[network] = _Proxy(network)
        return ProxyBridge(running.socket, socat)


@atexit.register
def shutdown_proxies() -> None:
    """Stop every proxy this process started."""
    with _lock:
        for proxy in _proxies.values():
            proxy.close()
        _proxies.clear()
