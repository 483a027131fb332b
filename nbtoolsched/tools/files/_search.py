"""Grep's two engines, ripgrep and pure Python, behind one result shape.

Both return, per file (a path relative to the search root), its matching-line count.
In content mode they instead hand their match and context lines, in output order
(files by path, compared folder by folder as ``rg --sort path`` does; lines in order),
to a ``LineSink``, which keeps only the page asked for and stops the search once it
has one line past it: memory is bounded by the page, not by the matches, and ripgrep
is killed as soon as nothing more is needed. Formatting happens later, once, in
``_grep.py``, so the engines can only differ in *what* they find, and a test holds
them to the same answer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, Literal, Protocol, Sequence, TypeVar

from ..._tool._abort import AbortSignal
from ._globs import GlobSyntaxError
from ._ripgrep import BASE_FLAGS, VCS_GLOBS, LineSplitter, LongTail, RgRun, SearchTimeout, find_rg, run_rg, stream_rg
from ._walk import VCS_DIRS, WalkFilter, walk_files

__all__ = [
    "SearchSpec", "FileHits", "SearchError", "Engine", "RipgrepEngine", "PythonEngine", "Mode", "EngineChoice", "pick_engine",
    "LineSink", "Row", "MAX_COLUMNS", "cut_line", "path_order",
]

Mode = Literal["content", "files_with_matches", "count"]
EngineChoice = Literal["auto", "rg", "python"]


class SearchError(ValueError):
    """The search could not run as asked (bad regex, bad glob, unknown type)."""


@dataclass(frozen=True, slots=True)
class SearchSpec:
    pattern: str
    root: str  # absolute directory the search runs in
    file: str | None = None  # a single file (name inside root) instead of the whole tree
    globs: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    ignore_case: bool = False
    multiline: bool = False
    mode: Mode = "files_with_matches"
    before: int = 0
    after: int = 0


@dataclass(slots=True)
class FileHits:
    count: int = 0  # matching lines
    lines: dict[int, tuple[str, bool]] = field(default_factory=dict)  # line number -> (text, is_match)


Results = dict[str, FileHits]
T = TypeVar("T")

MAX_COLUMNS = 500  # a matched line longer than this is cut (minified files)


def cut_line(text: str, tail: LongTail | None = None) -> str:
    """A line as shown: no trailing carriage returns, at most MAX_COLUMNS characters.

    ``tail`` describes the part of a long line that was not kept (see LongTail); the
    result is the same as for the whole line.
    """
    length = len(text)
    if tail is not None:
        length += tail.chars
        trailing = tail.trailing_cr + (len(text) - len(text.rstrip("\r")) if tail.only_cr else 0)
        length -= trailing
    else:
        text = text.rstrip("\r")
        length = len(text)
    if length <= MAX_COLUMNS:
        return text[:length]
    return f"{text[:MAX_COLUMNS]}... [{length - MAX_COLUMNS} more characters]"


def path_order(rel: str) -> list[str]:
    """The order results are shown in: folder by folder (``a/b`` before ``a-b``), as ``rg --sort path``."""
    return rel.split("/")


@dataclass(slots=True)
class Row:
    rel: str
    number: int
    text: str  # as shown (cut_line)
    is_match: bool


class LineSink:
    """Content-mode lines in output order: keeps the rows of the page ``[skip, skip + keep)``,
    counts the rows before it, and says stop at the first row past it.

    Rows are what Grep prints: lines, and a ``--`` (None) between groups that are not
    next to each other when context is shown. Files ``hidden`` says the rules protect
    are left out before anything is counted.
    """

    def __init__(self, skip: int, keep: int, grouped: bool, hidden: Callable[[str], bool] | None = None) -> None:
        self.skip, self.end = skip, skip + keep
        self.grouped = grouped
        self.hidden = hidden
        self.rows: list[Row | None] = []
        self.seen = 0  # rows so far (the total, when complete)
        self.complete = True  # False once a row past the page came: there is more
        self._file: str | None = None
        self._hide = False
        self._previous: int | None = None

    def add(self, rel: str, number: int, text: str, is_match: bool) -> bool:
        """Take one line; False when the page is full and the search should stop."""
        if rel != self._file:
            self._file, self._previous = rel, None
            self._hide = self.hidden is not None and self.hidden(rel)
        if self._hide:
            return True
        if self.grouped and self.seen and (self._previous is None or number != self._previous + 1):
            if not self._row(None):
                return False
        self._previous = number
        return self._row(Row(rel, number, text, is_match))

    def _row(self, row: Row | None) -> bool:
        if self.seen >= self.end:
            self.complete = False
            return False
        if self.seen >= self.skip:
            self.rows.append(row)
        self.seen += 1
        return True


class Engine(Protocol):
    name: str

    async def search(self, spec: SearchSpec, abort: AbortSignal, sink: LineSink | None = None) -> Results:
        """Per-file counts; in content mode the lines go to ``sink`` (and nothing is returned)."""
        ...

    async def list_files(self, root: str, abort: AbortSignal) -> list[str]:
        """Root-relative paths of every file under ``root`` a search would look at."""
        ...


@contextlib.asynccontextmanager
async def engine_in(engine: "Engine", overlay: Any) -> AsyncIterator["Engine"]:
    """``engine``, or, in a speculation's kernel overlay (``ctx.overlay``), ripgrep running
    inside the mounted overlay, so a search sees what the speculation's commands made."""
    if overlay is None:
        yield engine
        return
    binary = find_rg()
    if binary is None:
        raise SearchError("a speculation's kernel overlay is searched with ripgrep, and no ripgrep binary was found")
    base = engine if isinstance(engine, RipgrepEngine) else RipgrepEngine(binary, getattr(engine, "timeout", 60.0))
    async with overlay.held():
        yield base.inside(overlay.enter_at)


def pick_engine(choice: "EngineChoice | Engine", timeout: float = 60.0) -> "Engine":
    """ripgrep when asked or (for "auto") when found; the Python engine otherwise."""
    if not isinstance(choice, str):
        return choice
    if choice not in ("auto", "rg", "python"):
        raise ValueError(f"engine must be 'auto', 'rg' or 'python', not {choice!r}")
    binary = find_rg() if choice != "python" else None
    if choice == "rg" and binary is None:
        raise ValueError("engine='rg' was asked for, but no ripgrep binary was found (install the 'ripgrep' package)")
    return RipgrepEngine(binary, timeout) if binary else PythonEngine(timeout)


# -- ripgrep ------------------------------------------------------------------------------
class RipgrepEngine:
    name = "rg"

    def __init__(self, binary: str, timeout: float = 60.0, enter: Callable[[str], list[str]] | None = None) -> None:
        self.binary = binary
        self.timeout = timeout
        self.enter = enter  # the prefix that runs rg in a mount namespace, at a folder (a speculation's overlay)

    def inside(self, enter: Callable[[str], list[str]]) -> "RipgrepEngine":
        """The same engine, running rg behind ``enter(folder)`` (e.g. nsenter into an overlay)."""
        return RipgrepEngine(self.binary, self.timeout, enter)

    def _argv(self, args: list[str], root: str) -> tuple[str, list[str]]:
        if self.enter is None:
            return self.binary, args
        prefix = self.enter(root)
        return prefix[0], [*prefix[1:], self.binary, *args]

    async def search(self, spec: SearchSpec, abort: AbortSignal, sink: LineSink | None = None) -> Results:
        if spec.mode == "files_with_matches":
            run = await run_rg(*self._argv(self._args(spec, False), spec.root), spec.root, abort, self.timeout)
            if run.returncode not in (0, 1) and not run.stdout:
                raise SearchError(_rg_error(run))
            return {path: FileHits(1) for path in _null_separated(run.stdout)}
        by_line = spec.mode == "content" or spec.multiline  # count mode too, for multi-line matches
        reader = _RgReader(by_line, sink if spec.mode == "content" else None, spec.root, spec.file)
        splitter = LineSplitter(reader.line)
        status = await stream_rg(*self._argv(self._args(spec, by_line), spec.root), spec.root, abort, self.timeout, splitter.feed)
        if status.returncode is not None:
            splitter.finish()
        if status.returncode not in (None, 0, 1) and not reader.lines:
            raise SearchError(_rg_error(RgRun(status.returncode, b"", status.stderr)))
        return reader.results

    async def list_files(self, root: str, abort: AbortSignal) -> list[str]:
        run = await run_rg(*self._argv([*BASE_FLAGS, "--files", "--null", *VCS_GLOBS, "--", "."], root), root, abort, self.timeout)
        if run.returncode not in (0, 1) and not run.stdout:
            raise SearchError(_rg_error(run))
        return _null_separated(run.stdout)

    @staticmethod
    def _args(spec: SearchSpec, by_line: bool) -> list[str]:
        args = [*BASE_FLAGS]
        for glob in spec.globs:
            args += ["--glob", glob]
        args += VCS_GLOBS
        for name in spec.types:
            args += ["--type", name]
        if spec.ignore_case:
            args.append("--ignore-case")
        if spec.multiline:
            args += ["--multiline", "--multiline-dotall"]
        if by_line:  # a multi-line match comes out as one numbered line each
            args += ["--line-number", "--null", "--no-heading", "--with-filename", "--color", "never"]
            if spec.mode == "content":  # in the order shown, so the search can stop at the page's end
                args += ["--sort", "path", "--before-context", str(spec.before), "--after-context", str(spec.after)]
        elif spec.mode == "count":
            args += ["--count", "--null", "--with-filename"]
        else:
            args += ["--files-with-matches", "--null"]
        return [*args, "--regexp", spec.pattern, "--", spec.file or "."]


def _rg_error(run: RgRun) -> str:
    text = run.stderr.strip() or f"ripgrep exited with status {run.returncode}"
    return "\n".join(line.removeprefix("rg: ") for line in text.splitlines())


def _null_separated(stdout: bytes) -> list[str]:
    return [_clean(p) for p in stdout.decode("utf-8", "replace").split("\0") if p]


def _clean(path: str) -> str:
    return path[2:] if path.startswith("./") else path


_MAX_PIECES = 64  # lines without a NUL before a file line that are tried as pieces of its name
_RG_LINE = re.compile(rb"([^\0]*)\0(\d+)([:-])(.*)", re.DOTALL)


class _RgReader:
    """rg's lines as they come: content lines go to the sink; counts are kept per file.

    By line (``--null -n``): ``path NUL number : text`` (match) or ``- text`` (context);
    ``--`` separators do not match. Otherwise (``--count --null``): ``path NUL count``.

    A file name may hold a newline, which rg prints as is: the pieces before the NUL
    belong to the name. Read as lines of their own, the last piece alone would name
    another file, and a protected file's lines were judged, and shown, under that name.
    In content mode a piece cannot be told from rg's other lines without a NUL (a
    ``--`` separator, a binary file's warning), so every name the pieces could make is
    held to the rules: one that is protected hides the file (fail closed).
    """

    def __init__(self, by_line: bool, sink: LineSink | None, root: str = "", file: str | None = None) -> None:
        self.by_line = by_line
        self.sink = sink
        self.root = root
        self.file = file  # a single-file search: every line is this file's
        self.results: Results = {}
        self.lines = 0
        self._path = b""
        self._rel = ""
        self._pieces: list[bytes] = []  # lines without a NUL since the last file line

    def line(self, data: bytes, tail: LongTail | None) -> bool:
        if b"\0" not in data:
            if len(self._pieces) <= _MAX_PIECES:  # one more than are tried: enough to know it overflowed
                self._pieces.append(data)
            return True
        self.lines += 1
        pieces, self._pieces = self._pieces, []
        if len(pieces) > _MAX_PIECES:
            return True  # more name pieces than are checked: the line is left out (fail closed)
        if not self.by_line:
            path, _, count = data.rpartition(b"\0")
            if path and count.isdigit():  # count mode prints nothing else: every piece is the name's
                self.results[self._name(b"\n".join([*pieces, path]))] = FileHits(int(count))
            return True
        found = _RG_LINE.fullmatch(data)
        if found is None:
            return True
        path, number, sep, text = found.groups()
        rel, is_match = self._name(path), sep == b":"
        if self.file is not None:
            rel = self.file
        elif pieces and self.sink is not None:
            rel = self._guess(pieces, path)
        if self.sink is None:  # count mode, multi-line: the lines a match touches
            hits = self.results.get(rel)
            if hits is None:
                hits = self.results[rel] = FileHits()
            hits.count += is_match
            return True
        return self.sink.add(rel, int(number), cut_line(text.decode("utf-8", "replace"), tail), is_match)

    def _name(self, path: bytes) -> str:
        if path != self._path:
            self._path, self._rel = path, _clean(path.decode("utf-8", "replace"))
        return self._rel

    def _guess(self, pieces: list[bytes], path: bytes) -> str:
        """The name of a file line that came after lines without a NUL: a protected
        candidate if any (so the sink hides it), else the longest one on disk."""
        candidates = [_clean(b"\n".join([*pieces[i:], path]).decode("utf-8", "replace")) for i in range(len(pieces))]
        candidates.append(self._name(path))
        hidden = self.sink.hidden if self.sink is not None else None
        if hidden is not None:
            for name in candidates:
                if hidden(name):
                    return name
        return next((name for name in candidates if os.path.lexists(os.path.join(self.root, name))), candidates[-1])


# -- pure Python ------------------------------------------------------------------------
# Syntax Python's re accepts but ripgrep's regex engine rejects: refuse it the same way.
_UNSUPPORTED = (
    (re.compile(r"(?<!\\)(?:\\\\)*\(\?<?[=!]"), "look-around, including look-ahead and look-behind, is not supported"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "backreferences are not supported"),
    (re.compile(r"(?<!\\)(?:\\\\)*\(\?>"), "atomic groups are not supported"),
)
_LITERAL_NEWLINE = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")


def compile_pattern(spec: SearchSpec) -> re.Pattern[str]:
    """The regex as Python compiles it, refusing what ripgrep would refuse."""
    for detector, why in _UNSUPPORTED:
        if detector.search(spec.pattern):
            raise SearchError(f"regex parse error: {why}")
    if not spec.multiline and _LITERAL_NEWLINE.search(spec.pattern):
        raise SearchError('the literal "\\n" is not allowed in a regex unless multiline is true')
    flags = re.MULTILINE | (re.IGNORECASE if spec.ignore_case else 0) | (re.DOTALL if spec.multiline else 0)
    try:
        return re.compile(spec.pattern, flags)
    except re.error as err:
        raise SearchError(f"regex parse error: {err}") from None


class PythonEngine:
    """re + a gitignore-aware walk, in a worker thread that an abort stops."""

    name = "python"

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout

    async def search(self, spec: SearchSpec, abort: AbortSignal, sink: LineSink | None = None) -> Results:
        regex = compile_pattern(spec)
        if spec.file and not os.path.isfile(os.path.join(spec.root, spec.file)):
            raise SearchError(f"{spec.file} is not a regular file (a pipe, socket or device), so it cannot be searched")
        walk_filter = _walk_filter(spec.globs, spec.types)
        content = sink if spec.mode == "content" else None
        return await self._in_thread(abort, lambda stop: _search_tree(spec, regex, walk_filter, stop, content))

    async def list_files(self, root: str, abort: AbortSignal) -> list[str]:
        walk_filter = _walk_filter((), ())
        return await self._in_thread(abort, lambda stop: list(walk_files(root, walk_filter, stop.is_set)))

    async def _in_thread(self, abort: AbortSignal, work: "Callable[[threading.Event], T]") -> "T":
        """Run ``work`` in a thread; an abort or the timeout sets its stop flag and ends the wait."""
        stop = threading.Event()
        remove = abort.on_abort(lambda _: stop.set())
        try:
            result = await asyncio.wait_for(asyncio.to_thread(work, stop), self.timeout)
        except TimeoutError:
            raise SearchTimeout(f"the search did not finish within {self.timeout:g} seconds") from None
        finally:
            stop.set()
            remove()
        abort.raise_if_aborted()
        return result


def _walk_filter(globs: Sequence[str], types: Sequence[str]) -> WalkFilter:
    try:
        return WalkFilter([*globs, *(f"!{d}" for d in VCS_DIRS)], types)
    except (GlobSyntaxError, ValueError) as err:
        raise SearchError(str(err)) from None


def _search_tree(
    spec: SearchSpec, regex: re.Pattern[str], walk_filter: WalkFilter, stop: threading.Event, sink: LineSink | None
) -> Results:
    paths: Iterable[str] = [spec.file] if spec.file else walk_files(spec.root, walk_filter, stop.is_set)
    if sink is not None:
        paths = sorted(paths, key=path_order)  # lines go out in the order they are shown
    results: Results = {}
    for rel in paths:
        if stop.is_set():
            break
        lines = _file_lines(os.path.join(spec.root, rel), regex, spec.multiline)
        if lines is None:
            continue
        count, going = _feed(rel, lines, spec, sink, stop)
        if count:
            results[rel] = FileHits(count)
        if not going:
            break
    return results


_CHUNK = 1 << 16


def _file_lines(path: str, regex: re.Pattern[str], multiline: bool) -> Iterator[tuple[str, bool]] | None:
    """Each line of a text file and whether a match touches it, read as it is needed;
    None for a binary file (a NUL byte: ripgrep skips it too) or one that cannot be read.
    A multi-line pattern needs the whole file, as it does in ripgrep."""
    try:
        with open(path, "rb") as handle:
            if multiline:
                data = handle.read()
                if b"\0" in data:
                    return None
                return _multiline_lines(data.decode("utf-8-sig", "replace"), regex)
            while chunk := handle.read(_CHUNK):
                if b"\0" in chunk:
                    return None
    except OSError:
        return None
    return _single_lines(path, regex)


def _single_lines(path: str, regex: re.Pattern[str]) -> Iterator[tuple[str, bool]]:
    try:
        with open(path, "rb") as handle:
            encoding = "utf-8-sig"  # a byte order mark is dropped at the start only
            for raw in handle:
                line = raw[:-1] if raw.endswith(b"\n") else raw
                text = line.decode(encoding, "replace")
                encoding = "utf-8"
                yield text, regex.search(text) is not None
    except OSError:
        return


def _multiline_lines(text: str, regex: re.Pattern[str]) -> Iterator[tuple[str, bool]]:
    """The lines of ``text`` and whether any match touches them, without a list of all lines."""
    touched = _touched_lines(text, regex)
    next_touched = next(touched, None)
    start, index = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        while next_touched is not None and next_touched < index:
            next_touched = next(touched, None)
        yield text[start:end], next_touched == index
        start, index = end + 1, index + 1


def _touched_lines(text: str, regex: re.Pattern[str]) -> Iterator[int]:
    """0-based indexes of the lines any match touches, ascending, each once (a match may
    span lines; matches do not overlap, so they come in order)."""
    at, line, last = 0, 0, -1

    def line_of(position: int) -> int:
        nonlocal at, line
        line += text.count("\n", at, position)
        at = position
        return line

    for m in regex.finditer(text):
        if m.start() >= len(text) and text.endswith("\n"):
            continue  # an empty match after the final newline is not on any line
        first = line_of(m.start())
        final = line_of(max(m.start(), m.end() - 1))
        for index in range(max(first, last + 1), final + 1):
            yield index
        last = max(last, final)


def _feed(
    rel: str, lines: Iterator[tuple[str, bool]], spec: SearchSpec, sink: LineSink | None, stop: threading.Event
) -> tuple[int, bool]:
    """Count a file's matching lines; in content mode hand the sink its match and context
    lines in order. Returns the count and whether the search should go on."""
    count = 0
    before: collections.deque[tuple[int, str]] = collections.deque(maxlen=spec.before)
    after_left = 0
    for number, (text, is_match) in enumerate(lines, 1):
        if number % 4096 == 0 and stop.is_set():
            return count, False
        if is_match:
            count += 1
            if sink is None:
                if spec.mode == "files_with_matches":
                    return count, True
                continue
            for earlier, line in before:
                if not sink.add(rel, earlier, cut_line(line), False):
                    return count, False
            before.clear()
            if not sink.add(rel, number, cut_line(text), True):
                return count, False
            after_left = spec.after
        elif sink is not None:
            if after_left:
                after_left -= 1
                if not sink.add(rel, number, cut_line(text), False):
                    return count, False
            elif spec.before:
                before.append((number, text))
    return count, True
