"""HTML to text: what pages look like, and hostile pages that must convert in linear time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from nbtoolsched.tools._html_text import MAX_HTML_CHARS, html_to_text

BASE = "http://h/"


def test_links_do_not_nest() -> None:
    # A new <a> ends the open one, as browsers do (the old extractor nested them and
    # re-joined the whole tail for every unclosed link).
    out = html_to_text('<p><a href="/1">one<a href="/2">two</a> end</p>', BASE)
    assert out == "[one](http://h/1)[two](http://h/2) end"


def test_a_quoted_attribute_may_hold_a_closing_bracket() -> None:
    out = html_to_text('<p title="a>b"><a title=\'x>y\' href="/z">link</a></p>', BASE)
    assert out == "[link](http://h/z)"


def test_raw_text_elements_hide_their_markup() -> None:
    out = html_to_text("<p>a</p><SCRIPT>if (x < 1) { s = '</p><h1>no</h1>'; }</script ><p>b</p>", BASE)
    assert out == "a\n\nb"


def test_an_unfinished_tag_or_comment_at_the_end_is_dropped() -> None:
    assert html_to_text("<p>kept</p><a href='/x' ", BASE) == "kept"
    assert html_to_text("<p>kept</p><!-- never closed <p>hidden</p>", BASE) == "kept"


def test_entities_self_closing_tags_and_declarations() -> None:
    out = html_to_text("<!DOCTYPE html><?xml x?><p>x &amp; y&#33;<br/>z &#" + "9" * 5000 + ";</p>", BASE)
    assert out.startswith("x & y!\nz &#999")


def test_trailing_blanks_go_from_every_line() -> None:
    assert html_to_text("<pre>a   \t\n" + " " * 1000 + "b" + " " * 1000 + "</pre>", BASE) == "```\na\n" + " " * 1000 + "b\n```"


def test_the_output_budget_and_the_stop_event_end_the_conversion() -> None:
    page = "<p>" + "word " * 100_000 + "</p>" + "<p>more</p>" * 10_000
    cut = html_to_text(page, BASE, max_chars=1000)
    assert cut.endswith("[The rest of the page was not converted.]") and len(cut) < 700_000
    stop = threading.Event()
    stop.set()
    stopped = html_to_text("<p>x</p>" * 10_000, BASE, stop=stop)
    assert stopped.endswith("[The rest of the page was not converted.]")
    assert html_to_text("<p>x</p>", BASE).endswith("x")


def test_input_beyond_the_cap_is_not_converted() -> None:
    out = html_to_text("<p>" + "a" * MAX_HTML_CHARS + "</p><p>beyond</p>", BASE)
    assert "beyond" not in out and out.endswith("[The rest of the page was not converted.]")


# Pages that took the old extractor (html.parser and a backtracking regex) seconds at
# 50-100 KB and hours at a megabyte. Each is converted in a child process that must
# finish well within the limit; linear work takes well under a second.
HOSTILE = {
    "pre_blanks": '"<pre>" + " " * 1_000_000 + "x</pre>"',
    "nested_links": '"<a href=x>" * 200_000 + "t"',
    "open_tags": '"<a " * 400_000',
    "open_quotes": "'<a x=\"' * 200_000",
    "end_tags": '"</a " * 300_000',
    "declarations": '"<!x" * 300_000',
    "many_attributes": '"<a " + "b=c " * 300_000 + ">t"',
    "charrefs": '"&#" + "9" * 1_000_000',
}


@pytest.mark.heavy  # a subprocess per page, each large enough to show linear time
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_pages_convert_in_linear_time(name: str) -> None:
    code = textwrap.dedent(f"""
        from nbtoolsched.tools._html_text import html_to_text
        html_to_text({HOSTILE[name]}, "http://h/")
        print("converted")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"converting the {name} page took more than 60 s") from None
    assert "converted" in done.stdout, done.stderr[-500:]
