"""The real mcp-server-git, started over stdio on a temporary repository.

Read-only git tools (readOnlyHint) run in parallel, writing ones one at a time, and the
results come back in block order.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import AsyncIterator

import pytest
import pytest_asyncio

import nbtoolsched as nts
from nbtoolsched.tools import default_registry
from nbtoolsched.tools.mcp._manager import McpManager, connect_mcp_servers

# One server and one repository for the module: starting the server costs seconds.
pytestmark = [pytest.mark.timeout(90), pytest.mark.asyncio(loop_scope="module")]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp-git") / "repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.name", "Tester")
    git(path, "config", "user.email", "tester@example.com")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-qm", "first commit")
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mcp(repo: Path) -> AsyncIterator[McpManager]:
    config = {"mcpServers": {"git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}}}
    async with connect_mcp_servers(config, call_timeout=30) as manager:
        assert manager.errors == {}
        yield manager


def call(id: str, tool: str, **args: object) -> dict:
    return {"type": "tool_use", "id": id, "name": f"mcp__git__{tool}", "input": args}


async def test_tools_are_exposed_with_truthful_safety(mcp: McpManager, repo: Path) -> None:
    tools = {t.name: t for t in mcp.tools}
    assert {"mcp__git__git_status", "mcp__git__git_log", "mcp__git__git_add", "mcp__git__git_commit"} <= set(tools)
    status, commit = tools["mcp__git__git_status"], tools["mcp__git__git_commit"]
    status_input = status.input_model.model_validate({"repo_path": str(repo)})
    commit_input = commit.input_model.model_validate({"repo_path": str(repo), "message": "m"})
    assert status.is_mcp and status.should_defer
    assert status.is_read_only(status_input) and status.is_concurrency_safe(status_input)
    assert not commit.is_read_only(commit_input) and not commit.is_concurrency_safe(commit_input)
    registry = default_registry(include_mcp=mcp)
    assert "mcp__git__git_status" not in {t["name"] for t in registry.api_tools()}
    sent = {t["name"]: t for t in registry.api_tools({"mcp__git__git_status"})}
    assert sent["mcp__git__git_status"]["input_schema"]["required"] == ["repo_path"]


async def test_read_only_tools_run_in_parallel(mcp: McpManager, repo: Path) -> None:
    sched = nts.Scheduler(default_registry(include_mcp=mcp), cwd=repo)
    blocks = [
        call("status", "git_status", repo_path=str(repo)),
        call("log", "git_log", repo_path=str(repo), max_count=5),
        call("diff", "git_diff_unstaged", repo_path=str(repo)),
        call("branch", "git_branch", repo_path=str(repo), branch_type="local"),
    ]
    assert len(sched.partition(blocks)) == 1
    results = await sched.run(blocks)
    assert [r.tool_use_id for r in results] == ["status", "log", "diff", "branch"]
    assert not any(r.is_error for r in results), [r.text for r in results]
    assert "first commit" in results[1].text
    spans = sched.last_trace.states()
    assert max(s.started_at for s in spans) < min(s.finished_at for s in spans), "the reads did not overlap"


async def test_writing_tools_run_one_at_a_time_in_order(mcp: McpManager, repo: Path) -> None:
    (repo / "new.txt").write_text("new file\n")
    sched = nts.Scheduler(default_registry(include_mcp=mcp), cwd=repo)
    blocks = [
        call("status1", "git_status", repo_path=str(repo)),
        call("add", "git_add", repo_path=str(repo), files=["new.txt"]),
        call("commit", "git_commit", repo_path=str(repo), message="add new.txt"),
        call("log", "git_log", repo_path=str(repo), max_count=1),
        call("status2", "git_status", repo_path=str(repo)),
    ]
    assert [len(b.calls) for b in sched.partition(blocks)] == [1, 1, 1, 2]
    results = await sched.run(blocks)
    assert [r.tool_use_id for r in results] == [b["id"] for b in blocks]
    assert not any(r.is_error for r in results), [r.text for r in results]
    assert "new.txt" in results[0].text
    assert "add new.txt" in results[3].text
    spans = {s.tool_use_id: s for s in sched.last_trace.states()}
    order = ["status1", "add", "commit", "log"]
    for before, after in zip(order, order[1:]):
        assert spans[before].finished_at <= spans[after].started_at, f"{after} started before {before} finished"
    assert "add new.txt" in subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s"], capture_output=True, text=True).stdout


async def test_bad_arguments_are_caught_before_the_server(mcp: McpManager, repo: Path) -> None:
    sched = nts.Scheduler(default_registry(include_mcp=mcp), cwd=repo)
    [result] = await sched.run([call("x", "git_log", max_count="many")])
    assert result.is_error
    assert "repo_path" in result.text and "max_count" in result.text
    assert "ToolSearch" in result.text  # the schema was never loaded: the model is told how to load it
