"""Grep through ripgrep must judge each line by the file it really came from.

rg prints a file name as is, newlines included, before the NUL that ends it. Content
and count output were read line by line, so for ``secrets/a<newline>b`` only the last
piece, ``b``, was taken as the name: the Read deny rule on ``secrets/**`` was asked
about ``b`` and the secret's lines were shown under that name.
"""

from __future__ import annotations

import pytest

from nbtoolsched.tools.files._ripgrep import find_rg

from .conftest import READ_DENIES, SECRET, Refuser, run_one, scheduler

pytestmark = pytest.mark.skipif(find_rg() is None, reason="needs the ripgrep binary")


@pytest.mark.parametrize(
    "extra",
    [
        {"output_mode": "content"},
        {"output_mode": "content", "-C": 1},
        {"output_mode": "content", "head_limit": 1},
        {"output_mode": "count"},
    ],
)
async def test_a_protected_file_with_a_newline_in_its_name_stays_hidden(project, extra):
    (project / "secrets" / "a\nb").write_text(f"{SECRET} in a name with a newline\n")
    result = await run_one(scheduler(project, Refuser(), deny=READ_DENIES), "Grep", pattern="SECRET", **extra)
    assert SECRET not in str(result.content)
    assert "b:" not in str(result.content)


async def test_a_protected_file_after_a_binary_file_warning_stays_hidden(project):
    # rg prints "<path>: WARNING: stopped searching binary file ..." without a NUL; it
    # must not be taken for the start of the next file's name.
    (project / "a.bin").write_bytes(b"SECRET-free match\n" + b"x" * 100_000 + b"\0\n")
    result = await run_one(scheduler(project, Refuser(), deny=READ_DENIES), "Grep", pattern="SECRET", output_mode="content")
    assert SECRET not in str(result.content)


async def test_an_unprotected_file_with_a_newline_in_its_name_keeps_its_name(project):
    (project / "victim" / "two\nlines.txt").write_text("needle here\n")
    (project / "victim" / "zz.txt").write_text("needle too\n")
    sched = scheduler(project, Refuser(), deny=READ_DENIES)
    content = await run_one(sched, "Grep", pattern="needle", output_mode="content")
    assert "victim/two\nlines.txt:1:needle here" in str(content.content)
    assert "victim/zz.txt:1:needle too" in str(content.content)
    count = await run_one(sched, "Grep", pattern="needle", output_mode="count")
    assert "victim/two\nlines.txt:1" in str(count.content)
