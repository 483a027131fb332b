"""Grep's content mode keeps only the page it shows: memory does not grow with the matches.

Both engines hand their lines in output order to a sink that stops the search one
line past the page; ripgrep's output is read as it comes and cut into lines of bounded
size (a minified file's line keeps its head and a count of the rest).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.tools.files._grep import MAX_CONTENT_LINES, GrepTool
from nbtoolsched.tools.files._ripgrep import LINE_BYTES, LineSplitter, LongTail, find_rg
from nbtoolsched.tools.files._search import MAX_COLUMNS, cut_line

pytestmark = pytest.mark.heavy  # searches files of many MB, some in child processes

needs_rg = pytest.mark.skipif(find_rg() is None, reason="needs the rg binary")
ENGINES = ["python"] + (["rg"] if find_rg() else [])


def block(name: str, **input: object) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_bounds", "name": name, "input": input}


async def grep_text(root: Path, engine: str, **input: object) -> str:
    sched = nts.Scheduler(nts.ToolRegistry([GrepTool(engine=engine)]), cwd=root)
    (result,) = await sched.run([block("Grep", **input)])
    return ("ERROR " if result.is_error else "") + result.text


async def both(root: Path, **input: object) -> tuple[str, str]:
    return await grep_text(root, "rg", **input), await grep_text(root, "python", **input)


# -- the line splitter: long lines shown exactly as if read whole --------------------------------------

pieces = st.sampled_from(["a", "é", "€", "😀", "\r", "x" * 700, "\u00ff" * 300, "\r\r"])


@settings(deadline=None, max_examples=150)
@given(st.lists(pieces, max_size=80), st.integers(1, 9000), st.booleans())
def test_a_long_line_is_cut_as_if_read_whole(parts: list[str], chunk: int, broken: bool) -> None:
    text = "".join(parts) * 8
    raw = text.encode()
    if broken and len(raw) > LINE_BYTES:
        raw = raw[:LINE_BYTES] + b"\xe2\x82" + raw[LINE_BYTES:]  # an invalid sequence near the cut
    whole = b"dir/f.txt\x007:" + raw
    seen: list[tuple[bytes, LongTail | None]] = []
    splitter = LineSplitter(lambda head, tail: seen.append((head, tail)) is None)
    for start in range(0, len(whole) + 1, chunk):
        splitter.feed(whole[start:start + chunk] + (b"\n" if start + chunk > len(whole) else b""))
    splitter.finish()
    ((head, tail),) = seen
    assert len(head) <= LINE_BYTES + len(b"dir/f.txt\x00") + 1
    expected = cut_line(raw.decode("utf-8", "replace"))
    assert cut_line(head.split(b"\x007:", 1)[1].decode("utf-8", "replace"), tail) == expected


@needs_rg
@pytest.mark.parametrize("size", [MAX_COLUMNS - 20, LINE_BYTES * 3])
async def test_engines_agree_on_very_long_lines(tmp_path: Path, size: int) -> None:
    (tmp_path / "min.js").write_text("var a='é€';" + "x" * size + "\r\r\nshort a\r\n" + "a" * size + "\n")
    rg, py = await both(tmp_path, pattern="a", output_mode="content")
    assert rg == py
    assert ("more characters]" in rg) == (size > MAX_COLUMNS)


# -- order and paging --------------------------------------------------------------------------------


@needs_rg
async def test_content_comes_folder_by_folder_in_both_engines(tmp_path: Path) -> None:
    for rel in ["a-b", "a/b", "a.b", "a/c/d", "A", "é/q", "_x"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("foo\nfoo\n")
    rg, py = await both(tmp_path, pattern="foo", output_mode="content", **{"-C": 1})
    assert rg == py
    shown = [line.split(":")[0] for line in rg.splitlines() if ":" in line]
    assert shown[::2] == ["A", "_x", "a/b", "a/c/d", "a-b", "a.b", "é/q"]
    for offset in (0, 3, 13, 20):
        rg, py = await both(tmp_path, pattern="foo", output_mode="content", **{"-C": 1}, head_limit=4, offset=offset)
        assert rg == py, offset


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_page_says_whether_more_follow(tmp_path: Path, engine: str) -> None:
    (tmp_path / "f.txt").write_text("hit\n" * 10)
    text = await grep_text(tmp_path, engine, pattern="hit", output_mode="content", head_limit=3)
    assert text.endswith("(Showing lines 1-3 of more than 3; use offset=3 to see more.)")
    text = await grep_text(tmp_path, engine, pattern="hit", output_mode="content", head_limit=3, offset=8)
    assert text.endswith("(Showing lines 9-10 of 10.)")
    text = await grep_text(tmp_path, engine, pattern="hit", output_mode="content", offset=30)
    assert text.endswith("(offset=30 is past the last of the 10 lines.)")


@pytest.mark.parametrize("engine", ENGINES)
async def test_without_a_head_limit_a_call_shows_at_most_the_cap(tmp_path: Path, engine: str) -> None:
    (tmp_path / "f.txt").write_text("hit\n" * (MAX_CONTENT_LINES + 5))
    tool = GrepTool(engine=engine)
    ctx = nts.ToolContext(str(tmp_path))
    output = await tool.call(tool.input_model.model_validate({"pattern": "hit", "output_mode": "content"}), ctx)
    assert output.data == {"mode": "content", "num_results": MAX_CONTENT_LINES, "complete": False}
    assert output.content.endswith(f"of more than {MAX_CONTENT_LINES}; use offset={MAX_CONTENT_LINES} to see more.)")


# -- memory ---------------------------------------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import asyncio, resource, sys
    import nbtoolsched as nts
    from nbtoolsched.tools.files._grep import GrepTool

    project, engine = sys.argv[1], sys.argv[2]
    sched = nts.Scheduler(nts.ToolRegistry([GrepTool(engine=engine)]), cwd=project)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    block = {"type": "tool_use", "id": "toolu_1", "name": "Grep",
             "input": {"pattern": "a", "output_mode": "content", "head_limit": 5, "offset": 500000, "-C": 1}}
    (result,) = asyncio.run(sched.run([block]))
    print("GROWN_MB", (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, result.is_error)
    """
)


@pytest.mark.parametrize("engine", ENGINES)
def test_memory_does_not_grow_with_the_lines_skipped_or_matched(tmp_path: Path, engine: str) -> None:
    with open(tmp_path / "big.log", "w") as handle:
        handle.write("abcdefghi\n" * 1_600_000)  # 16 MB of short matching lines
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), engine], capture_output=True, text=True, timeout=120)
    assert "GROWN_MB" in done.stdout, done.stderr[-800:]
    grown = int(done.stdout.split("GROWN_MB")[1].split()[0])
    assert grown < 100, f"Grep ({engine}) grew the process by {grown} MB to show 5 lines"
    assert done.stdout.split()[-1] != "True", done.stdout  # not an error result


@needs_rg
async def test_stopping_ripgrep_early_never_hangs(tmp_path: Path) -> None:
    # A search that stops at its page kills rg while rg's pipe is full; the process's
    # wait() returns only after both pipes close, so they must be read to the end.
    (tmp_path / "big.log").write_text("abcdefghi\n" * 300_000)
    sched = nts.Scheduler(nts.ToolRegistry([GrepTool(engine="rg")]), cwd=tmp_path)

    async def searches() -> None:
        for offset in range(0, 80_000, 10_000):
            (result,) = await sched.run([block("Grep", pattern="a", output_mode="content", head_limit=2, offset=offset)])
            assert f"use offset={offset + 2}" in result.text

    await asyncio.wait_for(searches(), 60)  # a hang detector, not a timing test
