"""Write and Edit through the real Scheduler: read-before-write, atomicity, exact matching."""

from __future__ import annotations

import os
import stat

import nbtoolsched as nts
from nbtoolsched.tools.files import FILE_TOOLS


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".tmp")]


async def test_write_creates_a_file_and_its_directories(files):
    text = await files.ok("Write", file_path="new/dir/f.txt", content="hello\nworld\n")
    assert (files.root / "new/dir/f.txt").read_text() == "hello\nworld\n"
    assert "Created" in text and "2 lines" in text
    assert mode_of(files.root / "new/dir/f.txt") == 0o666 & ~current_umask()  # not mkstemp's 0600


async def test_write_over_an_unread_file_is_refused_and_leaves_it_alone(files):
    (files.root / "keep.txt").write_text("precious\n")
    text = await files.error("Write", file_path="keep.txt", content="oops\n")
    assert "has not been read" in text
    assert (files.root / "keep.txt").read_text() == "precious\n"


async def test_write_after_a_full_read_replaces_and_shows_a_diff(files):
    (files.root / "f.txt").write_text("a\nb\n")
    await files.ok("Read", file_path="f.txt")
    text = await files.ok("Write", file_path="f.txt", content="a\nc\n")
    assert (files.root / "f.txt").read_text() == "a\nc\n"
    assert "-b" in text and "+c" in text
    assert leftovers(files.root) == []


async def test_write_after_a_partial_read_is_refused(files):
    (files.root / "f.txt").write_text("".join(f"{i}\n" for i in range(50)))
    await files.ok("Read", file_path="f.txt", offset=1, limit=5)
    assert "Only part of this file was read" in await files.error("Write", file_path="f.txt", content="x")


async def test_write_into_a_directory_path_is_refused(files):
    (files.root / "d").mkdir()
    assert "is a directory" in await files.error("Write", file_path="d", content="x")


async def test_edit_of_an_unread_file_is_refused(files):
    (files.root / "f.py").write_text("x = 1\n")
    text = await files.error("Edit", file_path="f.py", old_string="x = 1", new_string="x = 2")
    assert "has not been read" in text and "Read" in text
    assert (files.root / "f.py").read_text() == "x = 1\n"


async def test_edit_of_a_file_changed_since_read_is_refused(files):
    path = files.root / "f.py"
    path.write_text("x = 1\n")
    await files.ok("Read", file_path="f.py")
    path.write_text("x = 1\ny = 2\n")  # someone else edits it (size changes, so mtime granularity is moot)
    text = await files.error("Edit", file_path="f.py", old_string="x = 1", new_string="x = 3")
    assert "changed on disk" in text
    await files.ok("Read", file_path="f.py")
    await files.ok("Edit", file_path="f.py", old_string="x = 1", new_string="x = 3")
    assert path.read_text() == "x = 3\ny = 2\n"


async def test_edit_replaces_a_unique_string_keeps_mode_and_leaves_no_temp_files(files):
    path = files.root / "run.sh"
    path.write_text("#!/bin/sh\necho one\n")
    path.chmod(0o751)
    await files.ok("Read", file_path="run.sh")
    text = await files.ok("Edit", file_path="run.sh", old_string="echo one", new_string="echo two")
    assert path.read_text() == "#!/bin/sh\necho two\n"
    assert mode_of(path) == 0o751
    assert "-echo one" in text and "+echo two" in text
    assert leftovers(files.root) == []


async def test_edit_ambiguous_string_needs_replace_all(files):
    path = files.root / "f.txt"
    path.write_text("foo\nbar\nfoo\n")
    await files.ok("Read", file_path="f.txt")
    text = await files.error("Edit", file_path="f.txt", old_string="foo", new_string="baz")
    assert "occurs 2 times" in text and "replace_all" in text
    text = await files.ok("Edit", file_path="f.txt", old_string="foo", new_string="baz", replace_all=True)
    assert path.read_text() == "baz\nbar\nbaz\n" and "2 occurrences" in text


async def test_edit_errors_for_missing_string_same_strings_and_missing_file(files):
    (files.root / "f.txt").write_text("hello\n")
    await files.ok("Read", file_path="f.txt")
    assert "not found" in await files.error("Edit", file_path="f.txt", old_string="bye", new_string="x")
    assert "identical" in await files.error("Edit", file_path="f.txt", old_string="hello", new_string="hello")
    assert "does not exist" in await files.error("Edit", file_path="nope.txt", old_string="a", new_string="b")
    assert "NotebookEdit" in await files.error("Edit", file_path="n.ipynb", old_string="a", new_string="b")


async def test_edit_with_empty_old_string_creates_a_file_but_never_clobbers_one(files):
    await files.ok("Edit", file_path="made.txt", old_string="", new_string="fresh\n")
    assert (files.root / "made.txt").read_text() == "fresh\n"
    await files.ok("Read", file_path="made.txt")
    assert "already has content" in await files.error("Edit", file_path="made.txt", old_string="", new_string="x")


async def test_consecutive_edits_need_no_reread_after_our_own_write(files):
    (files.root / "f.txt").write_text("a b c\n")
    await files.ok("Read", file_path="f.txt")
    await files.ok("Edit", file_path="f.txt", old_string="a", new_string="A")
    await files.ok("Edit", file_path="f.txt", old_string="b", new_string="B")
    assert (files.root / "f.txt").read_text() == "A B c\n"


async def test_edit_keeps_crlf_line_endings_and_matches_lf_old_strings(files):
    path = files.root / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await files.ok("Read", file_path="win.txt")
    await files.ok("Edit", file_path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_matches_curly_quotes_with_straight_ones(files):
    path = files.root / "q.md"
    path.write_text("He said \u201chello\u201d.\n")
    await files.ok("Read", file_path="q.md")
    await files.ok("Edit", file_path="q.md", old_string='"hello"', new_string='"bye"')
    assert path.read_text() == 'He said "bye".\n'


async def test_edit_through_a_symlink_changes_the_target_and_keeps_the_link(files):
    (files.root / "real.txt").write_text("v1\n")
    (files.root / "link.txt").symlink_to("real.txt")
    await files.ok("Read", file_path="link.txt")
    await files.ok("Edit", file_path="link.txt", old_string="v1", new_string="v2")
    assert (files.root / "link.txt").is_symlink()
    assert (files.root / "real.txt").read_text() == "v2\n"


async def test_edits_are_serial_and_reads_parallel(files):
    blocks = [files.block(n, **i) for n, i in [
        ("Grep", {"pattern": "x"}), ("Read", {"file_path": "a"}), ("Edit", {"file_path": "a", "old_string": "a", "new_string": "b"}),
        ("Glob", {"pattern": "*"}), ("Read", {"file_path": "a"}), ("Write", {"file_path": "b", "content": ""}),
        ("NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "x", "new_source": ""}),
    ]]
    batches = nts.partition_tool_calls(blocks, files.sched.registry)
    assert [(b.names, b.concurrency_safe) for b in batches] == [
        (["Grep", "Read"], True), (["Edit"], False), (["Glob", "Read"], True), (["Write"], False), (["NotebookEdit"], False),
    ]


async def test_read_edit_read_in_one_turn_runs_in_order(files):
    (files.root / "f.txt").write_text("old\n")
    results = await files.sched.run([
        files.block("Read", file_path="f.txt"),
        files.block("Edit", file_path="f.txt", old_string="old", new_string="new"),
        files.block("Read", file_path="f.txt"),
    ])
    assert [r.is_error for r in results] == [None, None, None]
    assert "old" in results[0].text and "new" in results[2].text


def test_file_tool_flags():
    flags = {t.name: (t.permission_kind, t().is_concurrency_safe(None), t().is_read_only(None)) for t in FILE_TOOLS}
    assert flags == {
        "Read": ("read", True, True), "Glob": ("read", True, True), "Grep": ("read", True, True),
        "Write": ("edit", False, False), "Edit": ("edit", False, False), "NotebookEdit": ("edit", False, False),
    }


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
