"""Grep and Glob never show what a Read deny or ask rule protects, with either engine."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

import nbtoolsched as nts
from nbtoolsched.tools.files._glob import GlobTool
from nbtoolsched.tools.files._grep import GrepTool
from nbtoolsched.tools.files._ripgrep import find_rg

ENGINES = ["python"] + (["rg"] if find_rg() else [])

SECRET = "SECRET-91c2"
_ids = itertools.count()


class Approver:
    def __init__(self, answer: str) -> None:
        self.answer, self.asked = answer, []

    async def __call__(self, request: Any) -> nts.ApprovalAnswer:
        self.asked.append(request)
        return nts.ApprovalAnswer.allow() if self.answer == "allow" else nts.ApprovalAnswer.deny("no")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel, text in {
        ".env": f"TOKEN={SECRET}\n",
        "secrets/key.txt": f"{SECRET} key\n",
        "secrets/deep/more.txt": f"{SECRET} more\n",
        "src/app.py": f"print('{SECRET[:6]}')\n",
        "src/.env": f"NESTED={SECRET}\n",
        "notes.md": "SECRET-free notes\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.symlink(root / ".env", root / "env-link.txt")
    return root.resolve()


async def call(root: Path, engine: str, name: str, approver: Approver | None = None, **rules_and_input: Any) -> nts.ToolResultBlock:
    rules = {k: rules_and_input.pop(k) for k in ("deny", "ask") if k in rules_and_input}
    perms = nts.Permissions(cwd=root, approver=approver or Approver("deny"), **rules)
    tools = nts.ToolRegistry([GrepTool(engine=engine), GlobTool(engine=engine)])
    sched = nts.Scheduler(tools, permissions=perms, cwd=root)
    (result,) = await sched.run([{"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": rules_and_input}])
    return result


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_over_a_folder_leaves_denied_files_out(tree, engine, mode):
    result = await call(tree, engine, "Grep", deny=["Read(.env)", "Read(secrets/**)"], pattern="SECRET", output_mode=mode)
    assert not result.is_error
    assert ".env" not in result.text and "secrets" not in result.text and "env-link" not in result.text
    assert f"TOKEN={SECRET}" not in result.text and "notes.md" in result.text


@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_leaves_denied_files_out(tree, engine):
    result = await call(tree, engine, "Glob", deny=["Read(.env)", "Read(secrets/**)"], pattern="**/*")
    listed = set(result.text.splitlines())
    assert listed == {"notes.md", "src/app.py"}, result.text


@pytest.mark.parametrize("engine", ENGINES)
async def test_ask_rules_hide_files_inside_a_search_but_an_answered_target_shows(tree, engine):
    hidden = await call(tree, engine, "Grep", ask=["Read(secrets/**)"], pattern="SECRET", output_mode="content")
    assert "secrets" not in hidden.text and "notes.md" in hidden.text
    approver = Approver("allow")
    shown = await call(tree, engine, "Grep", approver, ask=["Read(secrets/**)"], pattern="SECRET", path="secrets", output_mode="content")
    assert f"{SECRET} key" in shown.text and f"{SECRET} more" in shown.text and len(approver.asked) == 1


@pytest.mark.parametrize("engine", ENGINES)
async def test_rules_for_the_search_tool_itself_count_as_read_rules(tree, engine):
    grep = await call(tree, engine, "Grep", deny=["Grep(src/**)"], pattern="SECRET")
    glob = await call(tree, engine, "Glob", deny=["Grep(src/**)"], pattern="**/*.py")
    assert "src/app.py" not in grep.text and "src/app.py" in glob.text


@pytest.mark.parametrize("engine", ENGINES)
async def test_searching_a_denied_folder_is_denied_outright(tree, engine):
    result = await call(tree, engine, "Grep", deny=["Read(secrets/**)"], pattern="SECRET", path="secrets")
    assert result.is_error and "Read(secrets/**)" in result.text and SECRET not in result.text
