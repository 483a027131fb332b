"""Read through the real Scheduler: numbering, slices, refusals, what it records."""

from __future__ import annotations

import os

import nbformat

from nbtoolsched.tools.files._read import ReadTool
from nbtoolsched.tools.files._read import MAX_FILE_BYTES, MAX_LINE_CHARS


async def test_numbers_lines_like_cat_n_and_records_a_full_read(files):
    (files.root / "a.txt").write_text("alpha\nbeta\n\ngamma\n")
    text = await files.ok("Read", file_path="a.txt")
    assert text.splitlines() == ["     1\talpha", "     2\tbeta", "     3\t", "     4\tgamma"]
    state = files.ctx.file_state.get(str(files.root / "a.txt"))
    assert state is not None and not state.partial


async def test_offset_and_limit_show_a_slice_and_record_it_as_partial(files):
    (files.root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = await files.ok("Read", file_path=str(files.root / "n.txt"), offset=4, limit=3)
    assert text.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "offset=7" in text
    assert files.ctx.file_state.get(str(files.root / "n.txt")).partial


async def test_offset_past_the_end_says_so_without_failing(files):
    (files.root / "s.txt").write_text("one\ntwo\n")
    text = await files.ok("Read", file_path="s.txt", offset=10)
    assert "2 lines" in text and "offset 10" in text


async def test_empty_file_is_reported_as_empty(files):
    (files.root / "e.txt").write_text("")
    assert "empty" in await files.ok("Read", file_path="e.txt")


async def test_directory_is_refused_with_a_pointer_to_glob(files):
    (files.root / "d").mkdir()
    text = await files.error("Read", file_path="d")
    assert "is a directory" in text and "Glob" in text


async def test_binary_files_are_refused_by_content_and_by_extension(files):
    (files.root / "blob.dat").write_bytes(b"abc\0def")
    (files.root / "lib.so").write_bytes(b"ELF")
    assert "binary file" in await files.error("Read", file_path="blob.dat")
    assert "binary file" in await files.error("Read", file_path="lib.so")


async def test_missing_file_suggests_close_names(files):
    (files.root / "config.yaml").write_text("x: 1\n")
    text = await files.error("Read", file_path="config.yml")
    assert "does not exist" in text and "config.yaml" in text


async def test_big_file_needs_a_slice_and_long_lines_are_cut(files):
    big = files.root / "big.txt"
    big.write_text("x" * (MAX_LINE_CHARS + 50) + "\n" + ("y" * 99 + "\n") * (MAX_FILE_BYTES // 100 + 10))
    refusal = await files.error("Read", file_path="big.txt")
    assert "offset and limit" in refusal
    text = await files.ok("Read", file_path="big.txt", offset=1, limit=2)
    first, second = text.splitlines()[:2]
    assert first.endswith("[line cut: 50 more characters]") and len(first) < MAX_LINE_CHARS + 100
    assert second == "     2\t" + "y" * 99


async def test_crlf_lines_are_shown_without_carriage_returns(files):
    (files.root / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await files.ok("Read", file_path="w.txt") == "     1\tone\n     2\ttwo"


async def test_large_output_is_never_persisted(files):
    (files.root / "wide.txt").write_text(("z" * 150 + "\n") * 1000)  # ~160 KB of output, over any persist threshold
    text = await files.ok("Read", file_path="wide.txt")
    assert "persisted-output" not in text and len(text) > 150_000


async def test_image_comes_back_as_an_image_block(files):
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
    (files.root / "p.png").write_bytes(png)
    result = await files.call("Read", file_path="p.png")
    assert not result.is_error
    kinds = [block.type for block in result.content]
    assert kinds[0] == "image" and result.content[0].source["media_type"] == "image/png"


async def test_notebook_is_shown_as_cells_with_ids_and_outputs(files):
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print('hi')", id="c1")
    code.outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="m1"), code]
    nbformat.write(nb, files.root / "n.ipynb")
    text = await files.ok("Read", file_path="n.ipynb")
    assert '<cell id="m1" index="0" type="markdown">' in text and "# Title" in text
    assert '<cell id="c1" index="1" type="code">' in text and "hi" in text.split("c1")[1]


async def test_bad_input_names_the_field(files):
    text = await files.error("Read", file_path="a.txt", limit=0)
    assert "limit" in text
    text = await files.error("Read")
    assert "file_path" in text


def test_read_is_read_only_safe_and_shows_hooks_an_absolute_path(tmp_path):
    import nbtoolsched as nts

    tool = ReadTool()
    parsed = tool.input_model.model_validate({"file_path": "x.txt"})
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    assert tool.max_result_size_chars == float("inf") and tool.permission_kind == "read"
    assert tool.get_path(parsed) == "x.txt"
    observable = {"file_path": "x.txt"}
    tool.backfill_observable_input(observable, nts.ToolContext(tmp_path))
    assert observable["file_path"] == os.path.join(str(tmp_path.resolve()), "x.txt")


async def test_a_fifo_is_refused_instead_of_blocking_forever(files):
    os.mkfifo(files.root / "pipe")
    assert "not a regular file" in await files.error("Read", file_path="pipe")
