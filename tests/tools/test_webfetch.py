"""WebFetch against a real HTTP server on 127.0.0.1 (stdlib, in a thread)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched._registry import ToolRegistry
from nbtoolsched.tools._webfetch import DomainRules, WebFetchTool, html_to_text

PAGE = b"""<!doctype html><html><head><title>Test page</title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body><nav><a href="/home">Home</a></nav>
<h1>Main title</h1><p>First paragraph with a <a href="/docs/intro">relative link</a>.</p>
<h2>Section</h2><ul><li>alpha</li><li>beta</li></ul>
<pre>def f():\n    return 1</pre><noscript>enable js</noscript></body></html>"""

STOP = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        route = {
            "/page.html": lambda: self._send(200, "text/html; charset=utf-8", PAGE),
            "/data.json": lambda: self._send(200, "application/json", b'{"answer": 42}'),
            "/image.png": lambda: self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(100)),
            "/missing": lambda: self._send(404, "text/html", b"<h1>Nothing here</h1>"),
            "/same-host": lambda: self._redirect("/page.html"),
            "/other-host": lambda: self._redirect(f"http://localhost:{self.server.server_port}/page.html"),
            "/loop": lambda: self._redirect("/loop"),
            "/big": self._big,
            "/slow": self._slow,
        }.get(self.path)
        if route is None:
            self._send(404, "text/plain", b"no route")
        else:
            route()

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _big(self) -> None:
        line = b"x" * 1023 + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(line) * 4096))  # 4 MB
        self.end_headers()
        try:
            for _ in range(4096):
                self.wfile.write(line)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap: expected

    def _slow(self) -> None:
        STOP.wait(20)
        self._send(200, "text/plain", b"too late")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # a quick shutdown()
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        STOP.set()
        server.shutdown()
        server.server_close()


def fetch_use(url: str, id: str = "w1") -> dict:
    return {"type": "tool_use", "id": id, "name": "WebFetch", "input": {"url": url, "prompt": "what is on the page?"}}


async def fetch(url: str, tool: WebFetchTool | None = None, tmp_path=None) -> nts.ToolResultBlock:
    sched = nts.Scheduler(ToolRegistry([tool or WebFetchTool(timeout=10)]), cwd=tmp_path)
    [result] = await sched.run([fetch_use(url)])
    return result


async def test_html_becomes_readable_text(base_url: str) -> None:
    result = await fetch(f"{base_url}/page.html")
    assert not result.is_error
    text = result.text
    assert "# Main title" in text and "## Section" in text
    assert f"[relative link]({base_url}/docs/intro)" in text
    assert "- alpha\n- beta" in text
    assert "def f():\n    return 1" in text
    assert "secret" not in text and "color: red" not in text and "enable js" not in text


async def test_json_is_returned_as_is(base_url: str) -> None:
    result = await fetch(f"{base_url}/data.json")
    assert not result.is_error and '{"answer": 42}' in result.text


async def test_binary_content_is_refused(base_url: str) -> None:
    result = await fetch(f"{base_url}/image.png")
    assert result.is_error and "image/png" in result.text


async def test_big_body_stops_at_the_byte_cap(base_url: str) -> None:
    tool = WebFetchTool(max_bytes=256 * 1024, max_content_chars=1_000_000, timeout=10)
    result = await fetch(f"{base_url}/big", tool)
    assert not result.is_error
    assert "stopped at the 262144-byte limit" in result.text


async def test_long_text_is_cut_with_a_note(base_url: str) -> None:
    tool = WebFetchTool(max_bytes=64 * 1024, max_content_chars=10_000, timeout=10)
    result = await fetch(f"{base_url}/big", tool)
    assert "[Content cut: showing the first" in result.text
    assert len(result.text) < 11_000


@pytest.mark.heavy  # waits for a one-second timeout
async def test_slow_response_times_out(base_url: str) -> None:
    started = time.monotonic()
    result = await fetch(f"{base_url}/slow", WebFetchTool(timeout=1))
    assert result.is_error and "timed out after 1 seconds" in result.text
    assert time.monotonic() - started < 15


async def test_same_host_redirect_is_followed(base_url: str) -> None:
    result = await fetch(f"{base_url}/same-host")
    assert not result.is_error and "# Main title" in result.text and "/page.html" in result.text


async def test_redirect_to_another_host_is_reported_not_followed(base_url: str) -> None:
    result = await fetch(f"{base_url}/other-host")
    assert not result.is_error
    assert "different host" in result.text and "localhost" in result.text
    assert "Main title" not in result.text


async def test_redirect_loop_gives_up(base_url: str) -> None:
    result = await fetch(f"{base_url}/loop")
    assert result.is_error and "redirects" in result.text


async def test_404_is_an_error_naming_the_status(base_url: str) -> None:
    result = await fetch(f"{base_url}/missing")
    assert result.is_error and "HTTP 404" in result.text and "Nothing here" in result.text


async def test_connection_refused_is_a_clear_error() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = await fetch(f"http://127.0.0.1:{port}/")
    assert result.is_error and "failed" in result.text


@pytest.mark.parametrize(
    "url, needle",
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://127.0.0.1/x", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("http://", "no host"),
        ("http://user:pw@127.0.0.1/", "password"),
        ("http://127.0.0.1:99999/", "not a valid URL"),
    ],
)
async def test_bad_urls_are_refused_before_any_request(url: str, needle: str) -> None:
    result = await fetch(url)
    assert result.is_error and needle in result.text


async def test_domain_rules(base_url: str) -> None:
    blocked = await fetch(f"{base_url}/page.html", WebFetchTool(blocked_domains=["127.0.0.1"]))
    assert blocked.is_error and "blocked" in blocked.text
    not_allowed = await fetch(f"{base_url}/page.html", WebFetchTool(allowed_domains=["example.com"]))
    assert not_allowed.is_error and "not in the allowed domains (example.com)" in not_allowed.text
    allowed = await fetch(f"{base_url}/page.html", WebFetchTool(allowed_domains=["127.0.0.1"]))
    assert not allowed.is_error


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "[::ffff:7f00:1]", "127\u30020\u30020\u30021"])
async def test_a_blocked_address_stays_blocked_in_its_other_spellings(base_url: str, host: str) -> None:
    port = base_url.rsplit(":", 1)[1]
    result = await fetch(f"http://{host}:{port}/page.html", WebFetchTool(blocked_domains=["127.0.0.1"]))
    assert result.is_error and "blocked" in result.text and "Main title" not in result.text


async def test_a_url_whose_host_cannot_be_read_is_refused() -> None:
    result = await fetch("http://ex%61mple.com/")
    assert result.is_error and "cannot tell which host" in result.text


def test_domain_rules_cover_subdomains_only() -> None:
    rules = DomainRules.of(allow=["example.com"], block=["bad.example.com"])
    assert rules.refusal("docs.example.com") is None
    assert rules.refusal("EXAMPLE.com.") is None
    assert rules.refusal("notexample.com") is not None
    assert rules.refusal("x.bad.example.com") is not None


async def test_fetches_run_in_parallel(base_url: str, tmp_path) -> None:
    sched = nts.Scheduler(ToolRegistry([WebFetchTool(timeout=10)]), cwd=tmp_path)
    results = await sched.run([fetch_use(f"{base_url}/page.html", "a"), fetch_use(f"{base_url}/data.json", "b")])
    assert [bool(r.is_error) for r in results] == [False, False]
    assert len(sched.partition([fetch_use("http://x/", "a"), fetch_use("http://y/", "b")])) == 1


async def test_summarizer_receives_text_and_prompt(base_url: str) -> None:
    seen = {}

    async def summarize(text: str, prompt: str) -> str:
        seen.update(text=text, prompt=prompt)
        return "summary!"

    result = await fetch(f"{base_url}/page.html", WebFetchTool(summarizer=summarize))
    assert "summary!" in result.text
    assert seen["prompt"] == "what is on the page?" and "# Main title" in seen["text"]


@given(st.text(alphabet=st.characters(blacklist_characters="<>&"), max_size=300))
def test_html_to_text_keeps_words_and_drops_scripts_and_tags(text: str) -> None:
    out = html_to_text(f"<p>{text}</p><script>hiddenScriptMarker()</script>")
    assert "hiddenScriptMarker" not in out and "<p>" not in out
    assert out.split() == text.split()  # words kept in order, whitespace normalised
