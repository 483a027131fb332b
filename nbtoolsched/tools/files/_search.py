"""Grep's two engines, ripgrep and pure Python, behind one result shape.

Both return, per file (a path relative to the search root), its matching-line count
and, in content mode, its match and context lines. Ordering and formatting happen
later, once, in ``grep.py``, so the engines can only differ in *what* they find, and
a test holds them to the same answer.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Literal, Protocol, Sequence, TypeVar

from ...tool._abort import AbortSignal
from ._globs import GlobSyntaxError
from ._ripgrep import BASE_FLAGS, VCS_GLOBS, RgRun, SearchTimeout, find_rg, run_rg
from ._walk import VCS_DIRS, WalkFilter, walk_files

__all__ = [
    "SearchSpec", "FileHits", "SearchError", "Engine", "RipgrepEngine", "PythonEngine", "Mode", "EngineChoice", "pick_engine",
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


class Engine(Protocol):
    name: str

    async def search(self, spec: SearchSpec, abort: AbortSignal) -> Results: ...

    async def list_files(self, root: str, abort: AbortSignal) -> list[str]:
        """Root-relative paths of every file under ``root`` a search would look at."""
        ...


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

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.binary = binary
        self.timeout = timeout

    async def search(self, spec: SearchSpec, abort: AbortSignal) -> Results:
        by_line = spec.mode == "content" or (spec.mode == "count" and spec.multiline)
        run = await run_rg(self.binary, self._args(spec, by_line), spec.root, abort, self.timeout)
        if run.returncode not in (0, 1) and not run.stdout:
            raise SearchError(_rg_error(run))
        if by_line:
            return _parse_lines(run.stdout)
        if spec.mode == "count":
            return _parse_counts(run.stdout)
        return {path: FileHits(1) for path in _null_separated(run.stdout)}

    async def list_files(self, root: str, abort: AbortSignal) -> list[str]:
        run = await run_rg(self.binary, [*BASE_FLAGS, "--files", "--null", *VCS_GLOBS, "--", "."], root, abort, self.timeout)
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
            if spec.mode == "content":
                args += ["--before-context", str(spec.before), "--after-context", str(spec.after)]
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


_RG_LINE = re.compile(rb"^([^\0\n]*)\0(\d+)([:-])(.*)$", re.MULTILINE)


def _parse_lines(stdout: bytes) -> Results:
    """rg's ``--null -n`` lines: ``path NUL number : text`` (match) or ``- text`` (context);
    ``--`` separators do not match. One regex pass: this is the hot loop of big searches."""
    results: dict[bytes, FileHits] = {}
    for path, number, sep, text in _RG_LINE.findall(stdout):
        hits = results.get(path)
        if hits is None:
            hits = results[path] = FileHits()
        is_match = sep == b":"
        hits.lines[int(number)] = (text.decode("utf-8", "replace"), is_match)
        hits.count += is_match
    return {_clean(path.decode("utf-8", "replace")): hits for path, hits in results.items()}


def _parse_counts(stdout: bytes) -> Results:
    results: Results = {}
    for line in stdout.decode("utf-8", "replace").splitlines():
        path, _, count = line.rpartition("\0")
        if path:
            results[_clean(path)] = FileHits(int(count))
    return results


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

    async def search(self, spec: SearchSpec, abort: AbortSignal) -> Results:
        regex = compile_pattern(spec)
        if spec.file and not os.path.isfile(os.path.join(spec.root, spec.file)):
            raise SearchError(f"{spec.file} is not a regular file (a pipe, socket or device), so it cannot be searched")
        walk_filter = _walk_filter(spec.globs, spec.types)
        return await self._in_thread(abort, lambda stop: _search_tree(spec, regex, walk_filter, stop))

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


def _search_tree(spec: SearchSpec, regex: re.Pattern[str], walk_filter: WalkFilter, stop: threading.Event) -> Results:
    paths = [spec.file] if spec.file else walk_files(spec.root, walk_filter, stop.is_set)
    results: Results = {}
    for rel in paths:
        if stop.is_set():
            break
        hits = _search_file(os.path.join(spec.root, rel), regex, spec)
        if hits is not None:
            results[rel] = hits
    return results


def _search_file(path: str, regex: re.Pattern[str], spec: SearchSpec) -> FileHits | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"\0" in data:
        return None  # binary: ripgrep skips it too
    text = data.decode("utf-8-sig", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    matched = _matched_multiline(text, regex, lines) if spec.multiline else {
        i for i, line in enumerate(lines) if regex.search(line)
    }
    if not matched:
        return None
    hits = FileHits(len(matched))
    if spec.mode == "content":
        for i in matched:
            for j in range(max(0, i - spec.before), min(len(lines), i + spec.after + 1)):
                hits.lines[j + 1] = (lines[j], j in matched)
    return hits


def _matched_multiline(text: str, regex: re.Pattern[str], lines: list[str]) -> set[int]:
    """0-based indexes of the lines any match touches."""
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    matched: set[int] = set()
    for m in regex.finditer(text):
        if m.start() >= len(text) and text.endswith("\n"):
            continue  # an empty match after the final newline is not on any line
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.start(), m.end() - 1)) - 1
        matched.update(range(first, last + 1))
    return {i for i in matched if 0 <= i < len(lines)}
