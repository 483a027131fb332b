"""Grep: search file contents with a regex, through ripgrep or its pure-Python twin.

The engines only find; this module orders and formats, once, so both give the same
text: files by newest modification (files_with_matches), paths in order (count; content
comes in order from the engines), context groups split by ``--``, long lines cut,
head_limit/offset applied. Content mode keeps only the page it shows: the engines stop
one line past it (at most ``MAX_CONTENT_LINES`` lines without a head_limit), so a search
that matches millions of lines costs no more memory than one that matches a page.
"""

from __future__ import annotations

import os
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..._tool._base import ReadOnlyTool, ToolOutput, Validation
from ..._tool._context import ToolContext
from ._base import PathTool
from ._globs import split_glob_argument
from ._paths import display, missing_path_message
from ._protected import drop_protected, protected_filter
from ._ripgrep import SearchTimeout
from ._search import MAX_COLUMNS, Engine, EngineChoice, FileHits, LineSink, Row, SearchError, SearchSpec, engine_in, pick_engine
from ._glob import newest_first

__all__ = ["GrepTool", "GrepInput", "MAX_COLUMNS"]

MAX_CONTENT_LINES = 20_000  # content lines shown by one call without a head_limit (then: use offset)


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(min_length=1, description="The regular expression (ripgrep syntax) to search for.")
    path: str | None = Field(None, description="File or directory to search (default: the working directory).")
    glob: str | None = Field(None, description='Only files matching these globs, e.g. "*.py" or "*.{ts,tsx}" or "!*.min.js".')
    file_type: str | None = Field(None, alias="type", description='Only files of this ripgrep type, e.g. "py", "js", "rust".')
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        "files_with_matches", description="content: matching lines; files_with_matches: file paths; count: matches per file."
    )
    case_insensitive: bool = Field(False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(True, alias="-n", description="Show line numbers (content mode).")
    after: int | None = Field(None, alias="-A", ge=0, description="Lines of context after each match (content mode).")
    before: int | None = Field(None, alias="-B", ge=0, description="Lines of context before each match (content mode).")
    context: int | None = Field(None, alias="-C", ge=0, description="Lines of context around each match (content mode).")
    multiline: bool = Field(False, description="Let the pattern span lines ('.' matches newlines).")
    head_limit: int | None = Field(None, ge=1, description="Show only the first N lines/files/counts.")
    offset: int = Field(0, ge=0, description="Skip the first N lines/files/counts (with head_limit, to page).")


class GrepTool(ReadOnlyTool[GrepInput], PathTool[GrepInput]):
    name = "Grep"
    search_hint = "search file contents with regular expressions"
    description = (
        "Search file contents with a regular expression (ripgrep syntax: escape literal braces, e.g. `interface\\{\\}`).\n"
        "- output_mode: files_with_matches (default; newest first), content (matching lines, with -n line numbers "
        "and -A/-B/-C context), or count.\n"
        '- Narrow with glob ("*.py", "src/**/*.ts") or type ("py", "js", "rust"); -i ignores case; multiline lets a '
        "pattern span lines.\n"
        "- .gitignore is respected; hidden files are searched; binary files are skipped.\n"
        "- head_limit and offset page through long results. Use this tool rather than grep or rg in Bash."
    )
    input_model = GrepInput
    path_field = "path"
    permission_kind = "read"
    max_result_size_chars = 20_000

    def __init__(self, engine: EngineChoice | Engine = "auto", timeout: float = 60.0) -> None:
        self.engine = pick_engine(engine, timeout)

    async def validate_input(self, input: GrepInput, ctx: ToolContext) -> Validation:
        target = self.target(input, ctx)
        if not os.path.exists(target):
            return Validation.fail(missing_path_message(target, ctx.cwd, "Path"))
        return Validation.OK

    async def call(self, input: GrepInput, ctx: ToolContext) -> ToolOutput:
        target = self.target(input, ctx)
        spec = self.spec(input, target)
        hidden = protected_filter(self, target, ctx)
        sink = None
        if spec.mode == "content":
            grouped = bool(spec.before or spec.after)
            sink = LineSink(input.offset, input.head_limit or MAX_CONTENT_LINES, grouped, _relative(spec.root, hidden))
        try:
            async with engine_in(self.engine, ctx.overlay) as engine:  # a speculation's overlay: inside it
                found = await engine.search(spec, ctx.abort, sink)
        except SearchError as err:
            return ToolOutput(f"Grep could not run the pattern {input.pattern!r}: {err}", is_error=True)
        except SearchTimeout as err:
            return ToolOutput(f"{err}. Search a narrower path or add a glob or type filter.", is_error=True)
        if sink is not None:
            window = _content_rows(sink.rows, spec, input.line_numbers, ctx.cwd)
            data = {"mode": spec.mode, "num_results": sink.seen, "complete": sink.complete}
            return ToolOutput(data, content=_page(window, sink.seen, "lines", input, spec, complete=sink.complete))
        shown = drop_protected(spec.root, found, hidden)
        found = {rel: found[rel] for rel in shown}
        lines, total, unit = _render(spec, found, ctx.cwd)
        window = lines[input.offset : input.offset + input.head_limit if input.head_limit else None]
        matched = sum(hits.count for hits in found.values())
        return ToolOutput({"mode": spec.mode, "num_results": total}, content=_page(window, total, unit, input, spec, matched=matched))

    @staticmethod
    def spec(input: GrepInput, target: str) -> SearchSpec:
        """What to search, engine-neutral."""
        is_file = not os.path.isdir(target)
        content = input.output_mode == "content"
        return SearchSpec(
            pattern=input.pattern,
            root=os.path.dirname(target) if is_file else target,
            file=os.path.basename(target) if is_file else None,
            globs=tuple(split_glob_argument(input.glob or "")),
            types=(input.file_type,) if input.file_type else (),
            ignore_case=input.case_insensitive,
            multiline=input.multiline,
            mode=input.output_mode,
            before=_context(input.before, input.context) if content else 0,
            after=_context(input.after, input.context) if content else 0,
        )


def _context(specific: int | None, both: int | None) -> int:
    return specific if specific is not None else (both or 0)


def _relative(root: str, hidden: Callable[[str], bool] | None) -> Callable[[str], bool] | None:
    """``hidden`` (a test for absolute paths) for paths relative to ``root``."""
    return None if hidden is None else (lambda rel: hidden(os.path.join(root, rel)))


def _render(spec: SearchSpec, found: dict[str, FileHits], cwd: str) -> tuple[list[str], int, str]:
    """All result lines of the files and count modes (before paging), how many, and what a result is called."""
    if spec.mode == "files_with_matches":
        files = [display(p, cwd) for p in newest_first(spec.root, list(found))]
        return files, len(files), "files"
    ordered = sorted(found)
    return [f"{display(os.path.join(spec.root, rel), cwd)}:{found[rel].count}" for rel in ordered], len(ordered), "files"


def _content_rows(rows: list[Row | None], spec: SearchSpec, numbers: bool, cwd: str) -> list[str]:
    labels: dict[str, str] = {}
    out: list[str] = []
    for row in rows:
        if row is None:
            out.append("--")
            continue
        label = labels.get(row.rel)
        if label is None:
            label = labels[row.rel] = display(os.path.join(spec.root, row.rel), cwd)
        sep = ":" if row.is_match else "-"
        out.append(f"{label}{sep}{row.number}{sep}{row.text}" if numbers else f"{label}{sep}{row.text}")
    return out


def _page(
    window: list[str], total: int, unit: str, input: GrepInput, spec: SearchSpec, *, complete: bool = True, matched: int = 0
) -> str:
    """The page of results with its footer; ``total`` is a lower bound when not ``complete``."""
    if not total:
        return "No files found." if spec.mode != "content" else "No matches found."
    if spec.mode == "files_with_matches":
        body = "\n".join([f"Found {_plural(total, 'file')}", *window])
    elif spec.mode == "count":
        body = "\n".join(window) + f"\n\nFound {_plural(matched, 'matching line')} in {_plural(total, 'file')}."
    else:
        body = "\n".join(window)
    end = input.offset + len(window)
    if not window:
        body += f"\n\n(offset={input.offset} is past the last of the {total} {unit}.)"
    elif input.offset or end < total or not complete:
        more = f"; use offset={end} to see more" if end < total or not complete else ""
        of = f"of {total}" if complete else f"of more than {end}"
        body += f"\n\n(Showing {unit} {input.offset + 1}-{end} {of}{more}.)"
    return body.strip("\n")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
