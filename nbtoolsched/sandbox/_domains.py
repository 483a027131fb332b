"""Claude Code's ``sandbox.network`` domain patterns: ``example.com`` is that host,
``*.example.com`` its subdomains (not the domain itself); deny wins over allow."""

from __future__ import annotations

from typing import Iterable

__all__ = ["domain_matches", "domain_allowed", "canonical_domain"]


def canonical_domain(text: str) -> str:
    return text.strip().rstrip(".").lower()


def domain_matches(pattern: str, host: str) -> bool:
    pattern, host = canonical_domain(pattern), canonical_domain(host)
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and host != pattern[2:]
    return host == pattern


def domain_allowed(host: str, allowed: Iterable[str], denied: Iterable[str]) -> str | None:
    """None when ``host`` may be reached; else why not (for the refusal's text)."""
    if not host:
        return "has no host name"
    rule = next((p for p in denied if domain_matches(p, host)), None)
    if rule is not None:
        return f"is denied by sandbox.network.deniedDomains ({rule})"
    if not any(domain_matches(p, host) for p in allowed):
        return "is not in sandbox.network.allowedDomains"
    return None
