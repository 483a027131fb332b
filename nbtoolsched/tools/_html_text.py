"""HTML to readable text, in time linear in the page (a hostile page cannot stall a worker).

Not ``html.parser``: at the end of the input it rescans every unfinished tag to the end
(``"<a " * 15000`` takes seconds, a megabyte takes hours). The tokenizer here finds each
tag's end once, with cached searches that only move forward, so every character is
looked at a bounded number of times; quoted attribute values may hold ``>`` as in a
browser. Links never nest (a new ``<a>`` closes the open one, as browsers do), and
lines lose trailing blanks without a backtracking regex. Input beyond ``MAX_HTML_CHARS``
is not converted, and a caller may end the conversion early (an output budget, a stop
event for a call that timed out).
"""

from __future__ import annotations

import html as html_module
import re
import threading
from urllib.parse import urljoin

MAX_HTML_CHARS = 3_000_000  # the text shown is cut at 100,000 characters anyway
MAX_ATTRIBUTES = 64  # attributes read per tag; the rest of the tag is skipped

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head"})
_RAW_TEXT = frozenset({"script", "style"})  # content is not markup (as html.parser and browsers read it)
_BLOCK = frozenset({
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol", "table",
    "tr", "blockquote", "form", "figure", "figcaption", "dl", "dt", "dd", "hr", "address", "details", "summary",
})
_PARAGRAPH = frozenset({"p", "blockquote", "table", "ul", "ol"})
_HEADINGS = {f"h{i}": i for i in range(1, 7)}

_TAG_NAME = re.compile(r"[a-zA-Z][^\s/>\x00]*")
_BLANKS = re.compile(r"[\s/]*")
_ATTRIBUTE = re.compile(r"""([^\s/>"'=][^\s/>"'=]*|=[^\s/>"'=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'][^\s>]*)))?""")
_RAW_END = {name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE) for name in _RAW_TEXT}
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")


class _TextExtractor:
    """Collects readable text: block elements break lines, headings and links keep their form."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.title: list[str] | None = None
        self.title_text = ""
        self.link: tuple[str, int] | None = None  # (href, position in out) of the open <a>
        self.size = 0  # characters written so far (at least as many as the text will have)

    def _emit(self, text: str) -> None:
        self.out.append(text)
        self.size += len(text)

    def handle_starttag(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "title":
            self.title = []
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag in _HEADINGS:
            self._break(2)
            self._emit("#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK:
            self._break(2 if tag in _PARAGRAPH else 1)
        elif tag == "br":
            self._emit("\n")
        elif tag == "li":
            self._break(1)
            self._emit("- ")
        elif tag in ("td", "th"):
            self._emit(" | ")
        elif tag == "pre":
            self._break(2)
            self._emit("```\n")
            self.pre += 1
        elif tag == "a":
            if self.link is not None:  # links do not nest: the open one ends here
                self._close_link()
            self.link = (attrs.get("href") or "", len(self.out))
            self._emit("[")
        elif tag == "img":
            alt = (attrs.get("alt") or "").strip()
            if alt:
                self._emit(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title is not None:
            self.title_text = " ".join("".join(self.title).split())
            self.title = None
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in _HEADINGS or tag in _BLOCK:
            self._break(2 if tag in _HEADINGS or tag in _PARAGRAPH else 1)
        elif tag == "pre" and self.pre:
            self.pre -= 1
            self._emit("\n```")
            self._break(2)
        elif tag == "a" and self.link is not None:
            self._close_link()

    def handle_data(self, data: str) -> None:
        if self.title is not None:
            self.title.append(data)
        if self.skip:
            return
        if self.pre:
            self._emit(data)
            return
        text = _WHITESPACE.sub(" ", data)
        if not self.out or self.out[-1].endswith("\n"):
            text = text.lstrip()
        if text:
            self._emit(text)

    def _close_link(self) -> None:
        assert self.link is not None
        (href, at), self.link = self.link, None
        text = "".join(self.out[at + 1:]).strip()
        del self.out[at:]
        if not text:
            return
        target = urljoin(self.base_url, href) if href and not href.startswith(("javascript:", "#")) else ""
        if target:
            self._emit(f"[{text}]({target})")
        else:
            self.out.append(text)

    def _break(self, lines: int) -> None:
        self._emit("\n" * lines)

    def text(self) -> str:
        if self.link is not None:
            self._close_link()
        body = "\n".join(line.rstrip(" \t") for line in "".join(self.out).split("\n"))
        body = _BLANK_LINES.sub("\n\n", body).strip()
        if self.title_text and not body.startswith("# "):
            body = f"# {self.title_text}\n\n{body}"
        return body


class _Scanner:
    """Remembered searches: the next ``needle`` at or after a position is found once, so a
    run of unfinished tags does not search the same stretch of the page again."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[str, tuple[int, int]] = {}  # needle -> (searched from, found at or -1)

    def next(self, needle: str, start: int) -> int:
        """Position of the next ``needle`` at or after ``start``, or -1."""
        since, at = self.found.get(needle, (len(self.text) + 1, -1))
        if since <= start and (at == -1 or start <= at):
            return at
        at = self.text.find(needle, start)
        self.found[needle] = (start, at)
        return at


def _unescape(text: str) -> str:
    try:
        return html_module.unescape(text)
    except ValueError:  # a character reference with thousands of digits: leave the text as it is
        return text


def _tokenize(page: str, sink: _TextExtractor, budget: int, stop: threading.Event | None) -> bool:
    """Feed ``sink`` the tags and text of ``page``, in one forward pass; False when it
    stopped early (``budget`` characters written, or ``stop`` set)."""
    scan = _Scanner(page)
    pos, size = 0, len(page)
    count = 0
    while pos < size:
        count += 1
        if count % 512 == 0 and (sink.size > budget or (stop is not None and stop.is_set())):
            return False
        lt = scan.next("<", pos)
        if lt < 0:
            sink.handle_data(_unescape(page[pos:]))
            return True
        if lt > pos:
            sink.handle_data(_unescape(page[pos:lt]))
        if page.startswith("<!--", lt):
            end = page.find("-->", lt + 4)  # each comment is searched once
            if end < 0:
                return True  # an unfinished comment runs to the end
            pos = end + 3
            continue
        closing = page.startswith("</", lt)
        name = _TAG_NAME.match(page, lt + 1 + closing)
        if name is None:
            if page.startswith(("<!", "<?", "</"), lt):  # a declaration or a bogus comment: up to '>'
                end = scan.next(">", lt)
                if end < 0:
                    return True
                pos = end + 1
            else:
                sink.handle_data("<")
                pos = lt + 1
            continue
        tag = name.group().lower()
        attrs, end, self_closing = _attributes(page, name.end(), scan, keep=tag in ("a", "img") and not closing)
        if end < 0:
            return True  # a tag still open at the end of the page is dropped, as browsers do
        if closing:
            sink.handle_endtag(tag)
            pos = end + 1
            continue
        sink.handle_starttag(tag, attrs)
        pos = end + 1
        if self_closing:
            sink.handle_endtag(tag)
        elif tag in _RAW_TEXT:
            found = _RAW_END[tag].search(page, pos)
            if found is None:
                return True
            close = scan.next(">", found.end() - 1)
            sink.handle_endtag(tag)
            pos = size if close < 0 else close + 1
    return True


def _attributes(page: str, start: int, scan: _Scanner, *, keep: bool) -> tuple[dict[str, str], int, bool]:
    """The attributes of a tag whose name ends at ``start`` (only when ``keep``), the
    position of the ``>`` that closes it (-1: none; a quoted value may hold ``>``), and
    whether it ends with ``/>``."""
    attrs: dict[str, str] = {}
    pos = start
    for _ in range(MAX_ATTRIBUTES):
        blanks = _BLANKS.match(page, pos)
        assert blanks is not None  # the pattern matches the empty string
        pos = blanks.end()
        end = scan.next(">", pos)
        if end < 0 or end == pos:
            return attrs, end, "/" in blanks.group()
        found = _ATTRIBUTE.match(page, pos)
        if found is None:  # a stray quote: skip it
            pos += 1
            continue
        if keep:
            value = next((v for v in found.group(2, 3, 4) if v is not None), "")
            attrs.setdefault(found.group(1).lower(), _unescape(value))
        pos = found.end()
    return attrs, scan.next(">", pos), False


def html_to_text(html: str, base_url: str = "", *, max_chars: int | None = None, stop: threading.Event | None = None) -> str:
    """Readable text from HTML: no scripts or styles, headings as ``#``, links as ``[text](url)``.

    Linear in the size of ``html``; only the first ``MAX_HTML_CHARS`` are converted, and
    the conversion ends early once about ``max_chars`` characters of text are written
    (the caller shows no more) or when ``stop`` is set (the caller gave up waiting).
    """
    sink = _TextExtractor(base_url)
    budget = 2 * max_chars + 1000 if max_chars is not None else MAX_HTML_CHARS
    whole = _tokenize(html[:MAX_HTML_CHARS], sink, budget, stop)
    text = sink.text()
    if not whole or len(html) > MAX_HTML_CHARS:
        text += "\n\n[The rest of the page was not converted.]"
    return text
