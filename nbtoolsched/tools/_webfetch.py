"""WebFetch: fetch a URL over http(s) and return its content as readable text.

Domain rules decide which hosts may be fetched; redirects are followed only within
the same host (a redirect elsewhere is reported, so the model can decide to fetch
it); the download is streamed and capped in bytes and in time; HTML becomes text
with headings, links and paragraph breaks kept. With no summarizer configured the
text itself is the answer (Claude Code passes it through a small model with the
prompt; pass ``summarizer=`` to do the same).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field

from .._hosts import host_key, url_host
from .._tool._base import ReadOnlyTool, ToolOutput, Validation
from .._tool._context import ToolContext
from ._html_text import html_to_text

__all__ = ["WebFetchTool", "WebFetchInput", "DomainRules", "html_to_text", "FetchError"]

MAX_BYTES = 10 * 1024 * 1024
MAX_CONTENT_CHARS = 100_000
TIMEOUT_S = 30.0
MAX_REDIRECTS = 10
MAX_URL_LENGTH = 2000
USER_AGENT = "nbtoolsched-webfetch/0.1"

Summarizer = Callable[[str, str], Awaitable[str]]  # (content, prompt) -> answer


class FetchError(Exception):
    """A fetch that failed in a way the model should read (status, timeout, refusal)."""


class WebFetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The http(s) URL to fetch")
    prompt: str = Field(description="What to look for in the page")


@dataclass(frozen=True, slots=True)
class DomainRules:
    """Which hosts may be fetched. A rule ``example.com`` also covers its subdomains.

    ``allow=None`` means any host not blocked; a block always wins.
    """

    allow: frozenset[str] | None = None
    block: frozenset[str] = frozenset()

    @classmethod
    def of(cls, allow: Iterable[str] | None = None, block: Iterable[str] = ()) -> "DomainRules":
        return cls(None if allow is None else frozenset(_norm_host(d) for d in allow), frozenset(_norm_host(d) for d in block))

    def refusal(self, host: str) -> str | None:
        """Why ``host`` may not be fetched, or None when it may (any spelling of it: see _hosts)."""
        key = host_key(host)
        if key is None:
            return f"cannot tell which host {host!r} is"
        host = key
        if any(_covers(rule, host) for rule in self.block):
            return f"the domain {host} is blocked by the WebFetch domain rules"
        if self.allow is not None and not any(_covers(rule, host) for rule in self.allow):
            allowed = ", ".join(sorted(self.allow)) or "none"
            return f"the domain {host} is not in the allowed domains ({allowed})"
        return None


def _norm_host(host: str) -> str:
    key = host_key(host)
    if key is None:
        raise ValueError(f"WebFetch domain rules: {host!r} is not a host name or address")
    return key


def _covers(rule: str, host: str) -> bool:
    return host == rule or host.endswith("." + rule)


class WebFetchTool(ReadOnlyTool[WebFetchInput]):
    name = "WebFetch"
    permission_kind = "web"
    description = (
        "Fetches a URL (http or https) and returns its content as readable text: HTML is converted, "
        "keeping headings, links and paragraphs; long pages are cut. `prompt` says what you are looking for. "
        "A redirect to another host is reported, not followed: fetch the new URL yourself if you want it. "
        "Read-only; it cannot reach pages that need a login."
    )
    search_hint = "fetch web page url http download html content"
    input_model = WebFetchInput
    should_defer = True

    def __init__(
        self,
        *,
        allowed_domains: Iterable[str] | None = None,
        blocked_domains: Iterable[str] = (),
        max_bytes: int = MAX_BYTES,
        timeout: float = TIMEOUT_S,
        max_content_chars: int = MAX_CONTENT_CHARS,
        summarizer: Summarizer | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.rules = DomainRules.of(allowed_domains, blocked_domains)
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.max_content_chars = max_content_chars
        self.summarizer = summarizer
        self.transport = transport

    async def validate_input(self, input: WebFetchInput, ctx: ToolContext) -> Validation:
        problem = self.url_problem(input.url)
        return Validation.fail(problem) if problem else Validation.OK

    def url_problem(self, url: str) -> str | None:
        """Why ``url`` cannot be fetched, or None."""
        if len(url) > MAX_URL_LENGTH:
            return f"the URL is {len(url)} characters long; at most {MAX_URL_LENGTH} are accepted"
        try:
            parts = urlsplit(url.strip())
            port = parts.port  # raises on a malformed port
        except ValueError as err:
            return f"{url!r} is not a valid URL: {err}"
        if parts.scheme.lower() not in ("http", "https"):
            scheme = parts.scheme or "none"
            return f"only http and https URLs can be fetched; {url!r} has the scheme {scheme!r}"
        if not parts.hostname:
            return f"{url!r} has no host name"
        if parts.username or parts.password:
            return "URLs with a user name or password in them are refused; remove the credentials"
        del port
        host = url_host(url)  # the host httpx will connect to, in the spelling the permission rules use
        if host is None:
            return f"cannot tell which host {url!r} reaches (its host is not a plain name or address)"
        return self.rules.refusal(host)

    async def call(self, input: WebFetchInput, ctx: ToolContext) -> ToolOutput:
        try:
            async with asyncio.timeout(self.timeout):
                page = await self._fetch(input.url.strip(), ctx)
        except TimeoutError:
            return _failure(f"Fetching {input.url} timed out after {self.timeout:g} seconds.")
        except FetchError as err:
            return _failure(str(err))
        except httpx.HTTPError as err:
            return _failure(f"Fetching {input.url} failed: {type(err).__name__}: {err or 'no details'}")
        if isinstance(page, _Redirect):
            return ToolOutput(
                {"url": input.url, "redirect": page.location, "status": page.status},
                content=(
                    f"{input.url} redirects (HTTP {page.status}) to a different host: {page.location}\n"
                    "The redirect was not followed. To get that page, call WebFetch again with that URL."
                ),
            )
        text = self._truncate(page.text)
        if self.summarizer is not None:
            text = await self.summarizer(text, input.prompt)
        data = {"url": page.url, "status": page.status, "content_type": page.content_type, "bytes": page.size, "truncated": page.cut}
        header = f"Fetched {page.url} (HTTP {page.status}, {page.content_type or 'unknown type'}, {page.size} bytes)"
        if page.cut:
            header += f"; the download stopped at the {self.max_bytes}-byte limit"
        return ToolOutput(data, content=f"{header}\n\n{text}")

    # -- fetching ------------------------------------------------------------------------
    async def _fetch(self, url: str, ctx: ToolContext) -> "_Page | _Redirect":
        timeout = httpx.Timeout(self.timeout)
        headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/markdown, text/plain, */*;q=0.5"}
        async with httpx.AsyncClient(follow_redirects=False, timeout=timeout, transport=self.transport, headers=headers) as client:
            for _ in range(MAX_REDIRECTS + 1):
                async with client.stream("GET", url) as response:
                    if response.is_redirect:
                        target = urljoin(url, response.headers.get("location", ""))
                        if not _same_site(url, target):
                            return _Redirect(target, response.status_code)
                        url = target
                        continue
                    if response.status_code >= 400:
                        body = await _read_capped(response, 2000)
                        raise FetchError(_status_text(url, response, body[0]))
                    return await self._page(url, response, ctx)
        raise FetchError(f"Fetching {url} failed: more than {MAX_REDIRECTS} redirects")

    async def _page(self, url: str, response: httpx.Response, ctx: ToolContext) -> "_Page":
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if _is_binary(content_type):
            raise FetchError(f"{url} is {content_type} content, which WebFetch cannot show as text")
        body, cut = await _read_capped(response, self.max_bytes, ctx)
        raw = body.decode(response.encoding or "utf-8", errors="replace")
        text = await self._convert(raw, url) if _is_html(content_type, raw) else raw
        return _Page(url, response.status_code, content_type, len(body), cut, text)

    async def _convert(self, raw: str, url: str) -> str:
        """HTML to text off the event loop, so other calls and the notebook keep running
        and the tool's timeout applies: when it fires, the conversion is told to stop."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(html_to_text, raw, url, max_chars=self.max_content_chars, stop=stop)
        finally:
            stop.set()

    def _truncate(self, text: str) -> str:
        limit = self.max_content_chars
        if len(text) <= limit:
            return text
        head = text[:limit]
        cut = head.rfind("\n\n")
        if cut > limit // 2:
            head = head[:cut]
        return f"{head}\n\n[Content cut: showing the first {len(head)} of {len(text)} characters.]"


@dataclass(slots=True)
class _Page:
    url: str
    status: int
    content_type: str
    size: int
    cut: bool
    text: str


@dataclass(slots=True)
class _Redirect:
    location: str
    status: int


def _failure(text: str) -> ToolOutput:
    return ToolOutput({"error": text}, content=text, is_error=True)


def _same_site(a: str, b: str) -> bool:
    """Same scheme family and host, ignoring a leading ``www.``."""
    pa, pb = urlsplit(a), urlsplit(b)
    if pb.scheme not in ("http", "https"):
        return False
    host_a, host_b = url_host(a), url_host(b)  # as httpx reads them: a parser quirk cannot move the host
    if host_a is None or host_b is None:
        return False
    return host_a.removeprefix("www.") == host_b.removeprefix("www.") and (pa.port or _default_port(pa.scheme)) == (pb.port or _default_port(pb.scheme))


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


async def _read_capped(response: httpx.Response, limit: int, ctx: ToolContext | None = None) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body, and whether more was left unread."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if ctx is not None:
            ctx.progress({"bytes": size})
        if size >= limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _status_text(url: str, response: httpx.Response, body: bytes) -> str:
    reason = response.reason_phrase or ""
    excerpt = body.decode("utf-8", errors="replace").strip()
    if "html" in response.headers.get("content-type", ""):
        excerpt = html_to_text(excerpt)
    excerpt = excerpt[:500]
    return f"Fetching {url} failed: HTTP {response.status_code} {reason}".rstrip() + (f"\n{excerpt}" if excerpt else "")


_TEXTUAL = ("json", "xml", "javascript", "yaml", "csv", "markdown", "x-sh", "toml")


def _is_binary(content_type: str) -> bool:
    if not content_type or content_type.startswith("text/"):
        return False
    return not any(word in content_type for word in _TEXTUAL)


def _is_html(content_type: str, raw: str) -> bool:
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    return not content_type and raw.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
