"""WebFetch domain rules match the host the client connects to, however the URL spells it.

The truth is what the real client does: httpx's own parsing (``httpx.URL(...).raw_host``,
the bytes it hands to the resolver) and the platform resolver's numeric parsing
(``getaddrinfo`` with ``AI_NUMERICHOST``, which reads ``127.1`` or ``0x7f000001`` as an
IPv4 address without any DNS). The canonical host must agree with both.
"""

from __future__ import annotations

import ipaddress
import socket
import sys

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched._hosts import canonical_host, host_key, ipv4_number, url_host

IDNA_DOTS = [".", "\u3002", "\uff0e", "\uff61"]  # what IDNA (UTS 46) reads as a full stop
SETTINGS = settings(deadline=None, max_examples=300)
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="compares with glibc's numeric address parsing")


def resolver_ipv4(text: str) -> str | None:
    """The IPv4 address the platform resolver reads ``text`` as, without any lookup (or None)."""
    try:
        found = socket.getaddrinfo(text, None, socket.AF_INET, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return None
    return str(found[0][4][0])


def httpx_raw_host(url: str) -> str | None:
    try:
        return httpx.URL(url).raw_host.decode("ascii")
    except httpx.InvalidURL:
        return None


# -- IPv4 in every form inet_aton reads ----------------------------------------------------------


@st.composite
def ipv4_spellings(draw: st.DrawFn) -> tuple[int, str]:
    """An address and one way to write it: 1-4 parts, each decimal, octal or hex."""
    address = draw(st.integers(0, 2**32 - 1))
    count = draw(st.integers(1, 4))
    octets = address.to_bytes(4, "big")
    values = list(octets[: count - 1]) + [int.from_bytes(octets[count - 1:], "big")]
    parts = []
    for value in values:
        form = draw(st.sampled_from(["dec", "oct", "hex"]))
        if form == "dec":
            parts.append(str(value))
        elif form == "oct":
            parts.append("0" * draw(st.integers(1, 3)) + format(value, "o"))
        else:
            digits = format(value, "x")
            parts.append(draw(st.sampled_from(["0x", "0X"])) + (digits.upper() if draw(st.booleans()) else digits))
    return address, ".".join(parts)


@linux_only
@SETTINGS
@given(st.text(alphabet="0123456789abcdefxX.", max_size=24))
def test_ipv4_parsing_matches_the_resolver(text: str) -> None:
    number = ipv4_number(text)
    expected = resolver_ipv4(text)
    assert (None if number is None else str(ipaddress.IPv4Address(number))) == expected


@linux_only
@SETTINGS
@given(ipv4_spellings(), st.sampled_from(IDNA_DOTS), st.booleans())
def test_an_ipv4_spelling_in_a_url_is_the_address_httpx_and_the_resolver_reach(spelled, dot, trailing):
    address, text = spelled
    url = f"http://{text.replace('.', dot)}{'.' if trailing else ''}:8080/path"
    raw = httpx_raw_host(url)
    host = url_host(url)
    if raw is None:  # httpx refuses it (e.g. 4 parts with a leading zero): nothing is fetched
        return
    assert host == str(ipaddress.IPv4Address(address))
    if not trailing:
        assert resolver_ipv4(raw) == host  # what the client connects to


# -- IPv6, including IPv4-mapped addresses ------------------------------------------------------------


@SETTINGS
@given(st.integers(0, 2**128 - 1), st.booleans(), st.sampled_from(["compressed", "exploded", "mapped-dotted"]))
def test_an_ipv6_spelling_is_one_host(number: int, upper: bool, form: str) -> None:
    address = ipaddress.IPv6Address(number)
    if form == "mapped-dotted":
        address = ipaddress.IPv6Address((0xFFFF << 32) | (number & 0xFFFFFFFF))
        text = f"::ffff:{address.ipv4_mapped}"
    else:
        text = address.compressed if form == "compressed" else address.exploded
    text = text.upper() if upper else text
    expected = str(address.ipv4_mapped) if address.ipv4_mapped is not None else address.compressed
    url = f"http://[{text}]:8080/"
    assert url_host(url) == expected
    assert host_key(f"[{text}]") == expected and host_key(text) == expected
    raw = httpx_raw_host(url)
    assert raw is not None and canonical_host(raw) == expected


# -- names: IDNA full stops, case, trailing dot --------------------------------------------------------

labels = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=10).filter(
    lambda label: ipv4_number(label) is None
)


@SETTINGS
@given(st.lists(labels, min_size=1, max_size=4), st.sampled_from(IDNA_DOTS), st.booleans(), st.booleans())
def test_a_name_is_what_httpx_sends_lowered_without_its_root_dot(parts, dot, upper, trailing):
    written = dot.join(p.upper() if upper else p for p in parts) + ("." if trailing else "")
    url = f"https://{written}/x"
    raw = httpx_raw_host(url)
    assert raw is not None
    assert url_host(url) == raw.lower().rstrip(".") == ".".join(parts)
    assert host_key(written) == ".".join(parts)


def test_international_names_meet_in_their_ascii_form() -> None:
    assert url_host("http://BÜCHER\u3002de./") == url_host("http://xn--bcher-kva.de/") == "xn--bcher-kva.de"
    assert host_key("bücher.de") == "xn--bcher-kva.de"


@pytest.mark.parametrize("url", ["http://ex%61mple.com/", "http://a..b/", "http://[::1/", "not a url", "http://exa mple.com/"])
def test_a_host_that_cannot_be_read_gives_none(url: str) -> None:
    assert url_host(url) is None


# -- the rules ----------------------------------------------------------------------------------------

SPELLINGS = ["127.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "[::ffff:7f00:1]", "[::ffff:127.0.0.1]",
             "127\u30020\u30020\u30021", "127.0.0.1.", "127\uff0e0\uff0e0\uff0e1"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_a_deny_rule_on_an_address_holds_for_every_spelling(spelling: str, mode: str) -> None:
    perms = nts.Permissions(mode=mode, deny=["WebFetch(domain:127.0.0.1)"], tools=nts.default_registry())
    explanation = perms.explain("WebFetch", {"url": f"http://{spelling}:8080/", "prompt": "x"})
    assert explanation.behavior == "deny", explanation


@pytest.mark.parametrize("rule", ["0x7f.1", "2130706433", "[::ffff:7f00:1]", "127.0.0.1."])
def test_a_rule_in_another_spelling_matches_too(rule: str) -> None:
    perms = nts.Permissions(deny=[f"WebFetch(domain:{rule})"], tools=nts.default_registry())
    assert perms.explain("WebFetch", {"url": "http://127.0.0.1/", "prompt": "x"}).behavior == "deny"


def test_a_rule_on_an_international_name_matches_its_ascii_form() -> None:
    perms = nts.Permissions(mode="bypassPermissions", deny=["WebFetch(domain:bücher.de)"], tools=nts.default_registry())
    for url in ("http://xn--bcher-kva.de/", "http://BÜCHER\u3002de./"):
        assert perms.explain("WebFetch", {"url": url, "prompt": "x"}).behavior == "deny", url


def test_a_host_that_cannot_be_read_asks_even_in_bypass_mode() -> None:
    perms = nts.Permissions(mode="bypassPermissions", deny=["WebFetch(domain:example.com)"], tools=nts.default_registry())
    explanation = perms.explain("WebFetch", {"url": "http://ex%61mple.com/", "prompt": "x"})
    assert explanation.behavior == "ask" and "cannot tell which host" in (explanation.message or "")


def test_other_hosts_are_not_caught_by_the_rule() -> None:
    perms = nts.Permissions(mode="bypassPermissions", deny=["WebFetch(domain:127.0.0.1)"], tools=nts.default_registry())
    for url in ("http://127.0.0.2/", "http://example.com/", "http://[::1]/"):
        assert perms.explain("WebFetch", {"url": url, "prompt": "x"}).behavior == "allow", url
