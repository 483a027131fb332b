"""WebFetch against a local server: domain deny rules, and pages that stall the event loop."""

from __future__ import annotations

import http.server
import threading
from typing import Iterator

import pytest

from tests.bypass_kit import loop_lag

from .conftest import Refuser, run_one, scheduler

LOCAL_SECRET = "LOCAL-ONLY-7c1e"


def _serve(body: bytes, content_type: str, served: list[str] | None = None) -> Iterator[int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if served is not None:
                served.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # a quick shutdown()
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def secret_server() -> Iterator[int]:
    yield from _serve(LOCAL_SECRET.encode(), "text/plain")


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "[::ffff:7f00:1]", "127\u30020\u30020\u30021"])
async def test_deny_rule_on_an_address_holds_for_its_other_spellings(project, secret_server, host):
    # domain_rule_matches compares the URL's host text with the rule; the resolver reads
    # 127.1, 2130706433, 0x7f000001 and ::ffff:7f00:1 as 127.0.0.1, and httpx maps the
    # ideographic full stop U+3002 to "." (IDNA/UTS 46), which also dodges any rule on a
    # domain name (evil\u3002com). bypassPermissions must still obey deny rules ("a deny
    # rule beats everything").
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=["WebFetch(domain:127.0.0.1)"])
    result = await run_one(sched, "WebFetch", url=f"http://{host}:{secret_server}/", prompt="what is there")
    assert LOCAL_SECRET not in result.text
    assert result.is_error


# Pages a few hundred KB long whose HTML-to-text conversion is quadratic. It runs on the
# event loop, where the tool's own asyncio timeout cannot interrupt it, so every other
# call, progress event and the notebook UI wait; at the 10 MB download cap it would be
# hours. Sizes are chosen so each takes 10-30 s today.
HOSTILE_PAGES = {
    # re.sub(r"[ \t]+\n", ...) over a long run of blanks kept verbatim inside <pre>.
    "pre_blanks": b"<pre>" + b" " * 100_000 + b"x</pre>",
    # _close_link joins the whole tail of the output once per unclosed <a>.
    "nested_links": b"<a href=x>" * 48_000 + b"t",
    # html.parser (this Python) rescans an unterminated start tag from its beginning.
    "open_tags": b"<a " * 15_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PAGES))
async def test_a_hostile_page_does_not_stall_the_event_loop(project, name):
    served: list[str] = []
    for port in _serve(HOSTILE_PAGES[name], "text/html", served):
        refuser = Refuser()
        sched = scheduler(project, refuser, allow=["WebFetch(domain:127.0.0.1)"])
        async with loop_lag() as lag:
            result = await run_one(sched, "WebFetch", url=f"http://127.0.0.1:{port}/", prompt="summarise")
        longest = lag.longest
        assert served, f"the page was never fetched: {result.text[:300]}"
        assert longest < 3.0, f"the event loop was blocked for {longest:.1f} s by one page"
