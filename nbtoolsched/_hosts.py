"""Which host a URL reaches, in one spelling, so domain rules match what the client connects to.

The rules compare host names, but the HTTP client (httpx) and the resolver read many
spellings as the same host: ``127.1``, ``2130706433``, ``0x7f000001``, ``0x7f.0.0.01``
and ``[::ffff:7f00:1]`` all reach 127.0.0.1, and IDNA maps ``127。0。0。1`` (ideographic
full stops) and ``BÜCHER.de.`` to plain ASCII. ``url_host`` takes the host exactly as
httpx will send it to the resolver (``httpx.URL(url).raw_host``) and ``canonical_host``
then writes it one way: lower case, no trailing dot, an IPv4 address in any form
``inet_aton`` accepts as a dotted quad, an IPv6 address compressed (an IPv4-mapped one
as its IPv4 address). Anything it cannot read that way gives None: the caller fails
closed (asks or refuses) rather than guess.
"""

from __future__ import annotations

import functools
import ipaddress
import re

import httpx

_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")  # what a DNS name may hold once encoded
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")  # one inet_aton part
_ASCII_TEXT = re.compile(r"[\x21-\x7e]+")


def url_host(url: str) -> str | None:
    """The canonical host a fetch of ``url`` connects to, or None when that cannot be told."""
    try:
        raw = httpx.URL(url.strip()).raw_host
    except (httpx.InvalidURL, TypeError, ValueError, UnicodeError):
        return None
    try:
        return canonical_host(raw.decode("ascii")) if raw else None
    except UnicodeDecodeError:
        return None


@functools.lru_cache(maxsize=4096)
def host_key(text: str) -> str | None:
    """A host as written in a rule or a setting (``bücher.de``, ``[::1]``, ``127.1``), canonical."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        return canonical_host(text)
    try:
        raw = httpx.URL("http://placeholder/").copy_with(host=text.rstrip(".") or text).raw_host
    except (httpx.InvalidURL, TypeError, ValueError, UnicodeError):
        return None
    try:
        return canonical_host(raw.decode("ascii"))
    except UnicodeDecodeError:
        return None


def canonical_host(host: str) -> str | None:
    """An ASCII host (as httpx sends it) in one spelling; None when it is not a plain name or address."""
    if not _ASCII_TEXT.fullmatch(host):
        return None
    if ":" in host:
        return _ipv6(host)
    name = host.lower().rstrip(".")
    address = ipv4_number(name)
    if address is not None:
        return str(ipaddress.IPv4Address(address))
    return name if _NAME.fullmatch(name) else None


def ipv4_number(text: str) -> int | None:
    """The address ``inet_aton`` (glibc's ``__inet_aton_exact``, which getaddrinfo uses) reads.

    One to four parts split by dots, each decimal, octal (a leading 0) or hex (0x); the
    last part fills the bytes the others leave (``127.1`` is 127.0.0.1). None otherwise.
    """
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if not _NUMBER.fullmatch(part):
            return None
        if part[:2] in ("0x", "0X"):
            values.append(int(part[2:] or "0", 16))
        else:
            values.append(int(part, 8) if part.startswith("0") else int(part))
    *head, last = values
    if any(v > 0xFF for v in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return number


def _ipv6(text: str) -> str | None:
    address_text = text.split("%", 1)[0]  # a zone (fe80::1%25eth0) names the interface, not the host
    try:
        address = ipaddress.IPv6Address(address_text)
    except ValueError:
        return None
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else address.compressed
