"""The domain filter of the sandbox's host-side proxy (a proxy.py plugin; runs in the proxy process).

The policy comes in ``NBTOOLSCHED_PROXY_POLICY`` (JSON: ``allowed``, ``denied``). A host
is refused when it matches a denied pattern, or no allowed one; an allowed host is
resolved here, once, and refused when any of its addresses is loopback, link-local,
private to this machine or a cloud metadata address, so an allowed name cannot be
pointed at the host's own services; the connection goes to the address that was checked.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from typing import Any, Optional, Tuple

from proxy.common.types import HostPort
from proxy.http.exception import HttpRequestRejected
from proxy.http.parser import HttpParser
from proxy.http.proxy import HttpProxyBasePlugin

from ._domains import domain_allowed
from ._proxy_plugin_name import POLICY_VAR

__all__ = ["SandboxDomainFilter"]

_POLICY: dict[str, Any] = json.loads(os.environ.get(POLICY_VAR, "{}") or "{}")
_ALLOWED = tuple(_POLICY.get("allowed", ()))
_DENIED = tuple(_POLICY.get("denied", ()))


def _reject(host: str, why: str) -> HttpRequestRejected:
    body = f"nbtoolsched sandbox: {host} {why}\n".encode()
    return HttpRequestRejected(status_code=403, reason=b"Forbidden by the sandbox", body=body)


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _never(address: str) -> bool:
    """Loopback, the link, a metadata service: never, whatever the lists say."""
    ip = _ip(address)
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast or str(ip) == "169.254.169.254"


def _local(address: str) -> bool:
    """A private network or this machine's own address: only when an allowed pattern
    names the address itself (``_named``)."""
    ip = _ip(address)
    return ip.is_private or ip.is_reserved or _ours(str(ip))


def _ours(address: str) -> bool:
    """Is ``address`` one of this machine's own (a bind to it succeeds only then)?"""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))
        return True
    except OSError:
        return False


def _named(host: str) -> bool:
    """Is ``host`` an address that an allowed pattern names exactly (so a private one may be meant)?"""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return host.strip("[]") in {p.strip("[]") for p in _ALLOWED}


class SandboxDomainFilter(HttpProxyBasePlugin):
    """Refuse what the policy does not allow; connect to the address that was checked."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._checked: tuple[str, str] | None = None  # (host, address) of this connection

    def before_upstream_connection(self, request: HttpParser) -> Optional[HttpParser]:
        host = (request.host or b"").decode("ascii", "replace").rstrip(".").lower()  # IDNs arrive punycoded
        verdict = domain_allowed(host, _ALLOWED, _DENIED)
        if verdict is not None:
            raise _reject(host, verdict)
        try:
            found = socket.getaddrinfo(host, request.port or 80, proto=socket.IPPROTO_TCP)
        except socket.gaierror as err:
            raise _reject(host, f"cannot be resolved ({err.strerror})") from None
        addresses = [str(entry[4][0]) for entry in found]
        if not addresses or any(_never(a) for a in addresses) or (not _named(host) and any(_local(a) for a in addresses)):
            raise _reject(host, "resolves to an address on this machine or its local network link, "
                                "which the sandbox does not reach")
        self._checked = (host, addresses[0])
        return request

    def resolve_dns(self, host: str, port: int) -> Tuple[Optional[str], Optional[HostPort]]:
        if self._checked is not None and self._checked[0] == host.rstrip(".").lower():
            return self._checked[1], None  # the address checked above: no second lookup to rebind
        return None, None
