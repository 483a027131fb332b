"""Grep through the real Scheduler, with each engine: modes, flags, filters, errors, abort."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import nbtoolsched as nts
from nbtoolsched.tools.files._grep import GrepTool
from nbtoolsched.tools.files._ripgrep import find_rg


@pytest.fixture
def tree(engine_files):
    root = engine_files.root
    write(root / "app.py", "import os\n\ndef main():\n    print('Hello')\n    return 0\n", mtime=1_000_000)
    write(root / "lib/util.py", "def helper():\n    return 'hello world'\n", mtime=3_000_000)
    write(root / "lib/notes.md", "Hello notes\n", mtime=2_000_000)
    write(root / "dist/bundle.js", "hello from build\n", mtime=4_000_000)
    write(root / ".gitignore", "dist/\n")
    return engine_files


def write(path: Path, text: str, mtime: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime:
        os.utime(path, (mtime, mtime))


async def test_files_with_matches_is_newest_first_and_skips_ignored(tree):
    text = await tree.ok("Grep", pattern="hello", **{"-i": True})
    assert text.splitlines() == ["Found 3 files", "lib/util.py", "lib/notes.md", "app.py"]


async def test_content_mode_with_line_numbers_and_context(tree):
    text = await tree.ok("Grep", pattern="print", output_mode="content", **{"-B": 1})
    assert text.splitlines() == ["app.py-3-def main():", "app.py:4:    print('Hello')"]
    text = await tree.ok("Grep", pattern="def", output_mode="content", **{"-n": False})
    assert text.splitlines() == ["app.py:def main():", "lib/util.py:def helper():"]
    text = await tree.ok("Grep", pattern="import|return 0", output_mode="content", **{"-C": 0, "-A": 0})
    assert text.splitlines() == ["app.py:1:import os", "app.py:5:    return 0"]


async def test_context_groups_are_separated(tree):
    text = await tree.ok("Grep", pattern="import|return", output_mode="content", **{"-A": 1})
    assert text.splitlines() == [
        "app.py:1:import os", "app.py-2-", "--", "app.py:5:    return 0", "--", "lib/util.py:2:    return 'hello world'",
    ]


async def test_count_mode(tree):
    text = await tree.ok("Grep", pattern="e", output_mode="count")
    assert text.splitlines()[:3] == ["app.py:3", "lib/notes.md:1", "lib/util.py:2"]
    assert "Found 6 matching lines in 3 files." in text


async def test_glob_and_type_filters(tree):
    assert (await tree.ok("Grep", pattern="ello", glob="*.md")).splitlines()[1:] == ["lib/notes.md"]
    assert (await tree.ok("Grep", pattern="ello", type="py")).splitlines()[1:] == ["lib/util.py", "app.py"]
    assert (await tree.ok("Grep", pattern="ello", glob="!*.py,!*.md")) == "No files found."


async def test_path_can_be_a_directory_or_a_file(tree):
    assert (await tree.ok("Grep", pattern="hello", path="lib")).splitlines()[1:] == ["lib/util.py"]
    text = await tree.ok("Grep", pattern="main", path="app.py", output_mode="content")
    assert text == "app.py:3:def main():"


async def test_head_limit_and_offset_page_through_results(tree):
    text = await tree.ok("Grep", pattern=".", glob="*.py", output_mode="content", head_limit=2)
    assert text.splitlines()[:2] == ["app.py:1:import os", "app.py:3:def main():"]
    assert "offset=2" in text
    text = await tree.ok("Grep", pattern=".", glob="*.py", output_mode="content", head_limit=2, offset=2)
    assert text.splitlines()[:2] == ["app.py:4:    print('Hello')", "app.py:5:    return 0"]


async def test_multiline(tree):
    text = await tree.ok("Grep", pattern=r"main\(\):\s+print", multiline=True, output_mode="content")
    assert text.splitlines() == ["app.py:3:def main():", "app.py:4:    print('Hello')"]
    assert "No matches" in await tree.ok("Grep", pattern=r"main\(\):\s+print", output_mode="content")


async def test_bad_regex_names_the_regex(tree):
    text = await tree.error("Grep", pattern="foo(bar")
    assert "'foo(bar'" in text and "regex" in text
    assert "look-around" in await tree.error("Grep", pattern="a(?=b)")


async def test_bad_path_type_and_glob(tree):
    assert "does not exist" in await tree.error("Grep", pattern="x", path="nowhere")
    assert "unrecognized file type" in await tree.error("Grep", pattern="x", type="klingon")
    assert "glob" in await tree.error("Grep", pattern="x", glob="[oops")
    assert "-A" in await tree.error("Grep", pattern="x", **{"-A": -1})


async def test_no_matches(tree):
    assert await tree.ok("Grep", pattern="zzzz") == "No files found."
    assert await tree.ok("Grep", pattern="zzzz", output_mode="content") == "No matches found."


def test_unknown_engine_names_are_refused():
    with pytest.raises(ValueError, match="engine must be"):
        GrepTool(engine="grep")  # type: ignore[arg-type]


def rg_processes_reading(name: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if name.encode() in cmdline and b"rg" in cmdline.split(b"\0")[0]:
                pids.append(int(pid))
    return pids


@pytest.mark.skipif(find_rg() is None or not os.path.isdir("/proc"), reason="needs the rg binary and /proc")
async def test_abort_kills_a_running_rg(tmp_path):
    fifo = tmp_path / "blocking-fifo-7c1e"
    os.mkfifo(fifo)  # rg blocks reading it until killed
    sched = nts.Scheduler(nts.ToolRegistry([GrepTool(engine="rg")]), cwd=tmp_path)
    abort = nts.AbortSignal()
    block = {"type": "tool_use", "id": "g1", "name": "Grep", "input": {"pattern": "x", "path": str(fifo)}}
    task = asyncio.ensure_future(sched.run([block], abort=abort))
    for _ in range(200):
        if rg_processes_reading(fifo.name):
            break
        await asyncio.sleep(0.05)
    assert rg_processes_reading(fifo.name), "rg never started"
    abort.abort()
    (result,) = await asyncio.wait_for(task, 20)
    assert result.is_error and "interrupted" in result.text
    assert rg_processes_reading(fifo.name) == []


@pytest.mark.skipif(find_rg() is None, reason="needs the rg binary")
async def test_timeout_kills_rg_and_says_so(tmp_path):
    fifo = tmp_path / "slow-fifo"
    os.mkfifo(fifo)
    sched = nts.Scheduler(nts.ToolRegistry([GrepTool(engine="rg", timeout=0.5)]), cwd=tmp_path)
    (result,) = await asyncio.wait_for(sched.run([{"type": "tool_use", "id": "g", "name": "Grep",
                                                   "input": {"pattern": "x", "path": str(fifo)}}]), 30)
    assert result.is_error and "did not finish within 0.5 seconds" in result.text


async def test_offset_past_the_end_says_so(tree):
    text = await tree.ok("Grep", pattern="hello", **{"-i": True}, offset=10)
    assert text.startswith("Found 3 files") and "offset=10 is past the last of the 3 files" in text


async def test_python_engine_skips_fifos_while_walking_and_refuses_one_by_name(python_files):
    files = python_files
    (files.root / "a.txt").write_text("needle\n")
    os.mkfifo(files.root / "pipe")
    assert (await files.ok("Grep", pattern="needle")).splitlines() == ["Found 1 file", "a.txt"]
    assert "not a regular file" in await files.error("Grep", pattern="needle", path="pipe")
