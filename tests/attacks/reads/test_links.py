"""Read deny rules through Bash: a folder a command reads may hold symlinks to a denied path.

The read check judged a folder (``grep -R x docs``, ``cat docs/*``) by its path alone:
``Read(secrets/**)`` cannot match anything under ``docs``, so the command was allowed,
and grep -R, diff -r and a glob follow the links in it into ``secrets``.
"""

from __future__ import annotations

import os

import pytest

from ..conftest import SECRET, Refuser, run_one, scheduler

DENY = ["Read(secrets/**)"]  # anchored: it names ./secrets only


@pytest.fixture
def linked(project):
    docs = project / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("a\n")
    os.symlink("../secrets/key.txt", docs / "k")  # a link to a denied file
    (project / "victim" / "k").write_text("other\n")  # so diff -r compares the contents
    return project


@pytest.mark.parametrize("command", ["grep -R SECRET docs", "diff -r docs victim"])
async def test_a_link_in_a_searched_folder_reaches_a_denied_file(linked, command):
    refuser = Refuser()
    result = await run_one(scheduler(linked, refuser, deny=DENY), "Bash", command=command)
    assert SECRET not in result.text
    assert refuser.asked


async def test_a_glob_over_a_folder_with_a_link_under_an_allow_rule(linked):
    refuser = Refuser()
    result = await run_one(scheduler(linked, refuser, deny=DENY, allow=["Bash(cat:*)"]), "Bash", command="cat docs/*")
    assert SECRET not in result.text
    assert refuser.asked


async def test_a_chain_of_folder_links_reaches_a_denied_folder(project):
    # docs/other -> ../other (harmless), other/s -> ../secrets (denied): grep -R follows both.
    (project / "docs").mkdir()
    (project / "other").mkdir()
    os.symlink("../other", project / "docs" / "other")
    os.symlink("../secrets", project / "other" / "s")
    refuser = Refuser()
    result = await run_one(scheduler(project, refuser, deny=DENY), "Bash", command="grep -R SECRET docs")
    assert SECRET not in result.text
    assert refuser.asked


async def test_a_folder_without_links_stays_allowed(linked):
    os.unlink(linked / "docs" / "k")
    refuser = Refuser()
    result = await run_one(scheduler(linked, refuser, deny=DENY), "Bash", command="grep -R a docs")
    assert not refuser.asked
    assert "docs/a.txt" in result.text
