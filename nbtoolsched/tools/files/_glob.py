"""Glob: files whose paths match a pattern, newest first, .gitignore respected.

Patterns use gitignore glob syntax, as ripgrep's ``--glob`` does: a pattern without
``/`` matches at any depth (``*.py`` finds every Python file), ``**`` spans
directories, ``{a,b}`` alternates. ``rg --files`` (or the Python walker, which gives
the same list) lists what .gitignore lets through, and the pattern filters that list:
unlike ``rg --glob``, a pattern never brings an ignored file back.
"""

from __future__ import annotations

import os
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field

from ..._tool._base import ReadOnlyTool, ToolOutput, Validation
from ..._tool._context import ToolContext
from ._base import PathTool
from ._globs import GlobSyntaxError, path_matcher
from ._paths import display, missing_path_message, resolve
from ._protected import drop_protected, protected_filter
from ._ripgrep import SearchTimeout
from ._search import Engine, EngineChoice, SearchError, engine_in, pick_engine

__all__ = ["GlobTool", "GlobInput", "MAX_GLOB_RESULTS"]

MAX_GLOB_RESULTS = 100
_MAGIC = set("*?[{")


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description='The glob, e.g. "**/*.py" or "src/**/test_*.ts".')
    path: str | None = Field(None, description="The directory to search (default: the working directory).")


class GlobTool(ReadOnlyTool[GlobInput], PathTool[GlobInput]):
    name = "Glob"
    search_hint = "find files by name pattern"
    description = (
        "Find files by path pattern, most recently modified first.\n"
        '- Patterns use gitignore glob syntax: "**/*.js", "src/**/*.{ts,tsx}"; a pattern without "/" matches '
        'at any depth ("*.md" finds every Markdown file).\n'
        "- Files ignored by .gitignore are skipped; hidden files are included; .git is never listed.\n"
        f"- At most {MAX_GLOB_RESULTS} paths are returned; narrow the pattern or path when the list is cut."
    )
    input_model = GlobInput
    path_field = "path"
    permission_kind = "read"

    def __init__(self, engine: EngineChoice | Engine = "auto", timeout: float = 60.0) -> None:
        self.engine = pick_engine(engine, timeout)

    def get_path(self, input: GlobInput) -> str | None:
        """The folder the call lists: ``path``, unless the pattern moves it (``../x/*``,
        ``/etc/*``), so the permission step and a speculation judge where it really looks.

        A pattern that cannot be split is answered with "/" (everything): validation
        refuses it, and until then nothing may take it for a look inside cwd. Stricter
        than judging the ``path`` field alone, which let ``../x/*`` through unasked.
        """
        given = input.path or None
        try:
            root, _ = split_pattern(given or os.curdir, input.pattern)
        except GlobSyntaxError:
            return os.sep
        return given if root == (given or os.curdir) else root

    def _base(self, input: GlobInput, ctx: ToolContext) -> str:
        """The absolute ``path`` (or cwd), before the pattern moves it."""
        return resolve(ctx, input.path) if input.path else ctx.cwd

    async def validate_input(self, input: GlobInput, ctx: ToolContext) -> Validation:
        base = self._base(input, ctx)
        if not os.path.exists(base):
            return Validation.fail(missing_path_message(base, ctx.cwd, "Directory"))
        if not os.path.isdir(base):
            return Validation.fail(f"path must be a directory, but {base} is a file. Use Read to read it.")
        try:
            path_matcher(split_pattern(base, input.pattern)[1])
        except GlobSyntaxError as err:
            return Validation.fail(f"Invalid glob pattern: {err}")
        return Validation.OK

    async def call(self, input: GlobInput, ctx: ToolContext) -> ToolOutput:
        try:
            root, pattern = split_pattern(self._base(input, ctx), input.pattern)
        except GlobSyntaxError as err:
            return ToolOutput(f"Glob could not use the pattern {input.pattern!r}: {err}", is_error=True)
        seen = ctx.overlay.merged_path(root) if ctx.overlay is not None else root  # a speculation's overlay
        if seen is None or not os.path.isdir(seen):
            return ToolOutput(missing_path_message(root, ctx.cwd, "Directory"), is_error=True)
        try:
            rule = path_matcher(pattern)
            async with engine_in(self.engine, ctx.overlay) as engine:
                found = await engine.list_files(root, ctx.abort)
        except (GlobSyntaxError, SearchError) as err:
            return ToolOutput(f"Glob could not use the pattern {input.pattern!r}: {err}", is_error=True)
        except SearchTimeout as err:
            return ToolOutput(f"{err}. Glob a narrower path.", is_error=True)
        matched = drop_protected(root, [rel for rel in found if rule.matches(rel, False)], protected_filter(self, root, ctx))
        paths = newest_first(root, matched, ctx.overlay.merged_path if ctx.overlay is not None else None)
        shown = [display(p, ctx.cwd) for p in paths[:MAX_GLOB_RESULTS]]
        data = {"filenames": shown, "num_files": len(paths), "truncated": len(paths) > MAX_GLOB_RESULTS}
        return ToolOutput(data, content=_render(shown, len(paths)))


def split_pattern(root: str, pattern: str) -> tuple[str, str]:
    """(directory to walk, glob relative to it): an absolute pattern, or one with ``..``
    segments, moves the root to its fixed leading part (``../x/*.py`` walks ``../x``).

    A ``..`` after a wildcard would make the walked folder depend on what matches, so it
    is refused (GlobSyntaxError).
    """
    pattern = os.path.expanduser(pattern)
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = pattern.split("/")
    if not (os.path.isabs(pattern) or ".." in parts):
        return root, pattern
    static = next((i for i, part in enumerate(parts) if _MAGIC & set(part)), len(parts) - 1)
    if ".." in parts[static:]:
        raise GlobSyntaxError(
            f"'..' may only come before the wildcards and the last part of {pattern!r}; pass the folder to search as path instead"
        )
    base = os.path.normpath(os.path.join(root, "/".join(parts[:static]) or os.sep))
    return base, "/" + "/".join(parts[static:])


def newest_first(root: str, rel_paths: list[str], where: Callable[[str], str | None] | None = None) -> list[str]:
    """Absolute paths, newest modification first; ties by path, so the order is stable.
    ``where``: where a path is to be looked at (a speculation's overlay)."""
    stamped = []
    for rel in rel_paths:
        path = os.path.join(root, rel)
        try:
            mtime = os.stat((where(path) if where is not None else path) or path).st_mtime_ns
        except OSError:
            continue  # deleted since the walk
        stamped.append((-mtime, path))
    stamped.sort()
    return [path for _, path in stamped]


def _render(shown: list[str], total: int) -> str:
    if not shown:
        return "No files found."
    text = "\n".join(shown)
    if total > len(shown):
        text += f"\n\n(Showing the {len(shown)} most recently modified of {total} matching files. Narrow the pattern or path to see others.)"
    return text
