"""Writes into git's or fish's config folder in the home directory (a config place like
.git/hooks): a name that reaches it only once joined to the folder the line moved to, or
once its ``.`` and ``..`` parts are resolved, asks in bypass mode."""

from __future__ import annotations

import pytest

from ..conftest import Refuser, run_one, scheduler

# A name that reaches git's or fish's own config folder only once joined to the folder the
# line works in, or once its `.` and `..` parts are resolved.
HOME_WRITES = [
    "cd ~/.config && cp ~-/x git/config",
    "cd ~/.config; cp ~-/x fish/config.fish",
    "cd ~/.config/fish && cp ../../../proj/x ../git/config",
    "cp x ~/.config/fish/../git/config",
    "cp x ~/.config/./git/config",
    "cp x ~/.config//git/config",
]


@pytest.mark.parametrize("command", HOME_WRITES)
async def test_a_write_into_git_or_fish_config_from_a_folder_the_line_moved_to_asks(project, tmp_path, monkeypatch, command):
    home = tmp_path / "home"
    for folder in ("git", "fish"):
        (home / ".config" / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (project / "x").write_text("#!/bin/sh\necho pwned\n")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    written = [p.name for p in (home / ".config").rglob("*") if p.is_file()]
    assert not written, f"{command!r} wrote {written}: {result.text}"
    assert refuser.asked, f"{command!r} ran unasked: {result.text}"
