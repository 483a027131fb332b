"""Which repository git uses from a directory, and whether its config can run programs.

Real git builds every repository; what the check decides is compared with what git
itself finds (``git rev-parse``) and, for the attacks, with what git really runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from nbtoolsched.shell._readonly import analyze
from nbtoolsched.shell._gitrepo import find_repository, repository_problem

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, env=CLEAN_ENV, capture_output=True, text=True, check=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "f.txt").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    return root


def problem(path: Path) -> str | None:
    return repository_problem(str(path), CLEAN_ENV)


def test_a_clean_repository_is_fine_and_found_like_git_does(repo: Path) -> None:
    (repo / "sub").mkdir()
    found = find_repository(str(repo / "sub"))
    assert found is not None and found.work_tree == str(repo)
    assert found.git_dir == git(repo / "sub", "rev-parse", "--absolute-git-dir").strip()
    assert problem(repo / "sub") is None
    assert analyze("git log --oneline", str(repo / "sub")).read_only


def test_outside_any_repository_there_is_nothing_to_check(tmp_path: Path) -> None:
    assert problem(tmp_path) is None
    assert analyze("git status", str(tmp_path)).read_only  # git only fails: not a repository


@pytest.mark.parametrize(("key", "value"), [
    ("core.fsmonitor", "./watch"),
    ("core.fsmonitor", "true"),  # the built-in daemon: a process that outlives the command
    ("core.pager", "less"),
    ("pager.log", "sh -c x"),
    ("diff.external", "./differ"),
    ("diff.evil.textconv", "./conv"),
    ("diff.evil.command", "./differ"),
    ("filter.evil.clean", "./clean"),
    ("filter.evil.process", "./proc"),
    ("core.sshCommand", "./ssh"),
    ("core.askPass", "./pass"),
    ("credential.helper", "./helper"),
    ("gpg.program", "./gpg"),
    ("gpg.ssh.program", "./sign"),
    ("gpg.ssh.defaultKeyCommand", "./key"),
    ("log.showSignature", "true"),
    ("hook.evil.command", "./x"),
    ("trace2.normalTarget", "/tmp/trace"),
    ("remote.origin.uploadpack", "./up"),
    ("remote.origin.vcs", "evil"),
    ("protocol.ext.allow", "always"),
    ("url.ext::sh -c x.insteadOf", "https://"),
    ("extensions.partialClone", "origin"),
    ("merge.evil.driver", "./m"),
    ("difftool.evil.cmd", "./d"),
    ("core.alternateRefsCommand", "./refs"),
    ("core.splitIndex", "true"),  # git diff then writes .git/sharedindex.<sha>
])
def test_config_that_runs_programs_is_refused(repo: Path, key: str, value: str) -> None:
    assert problem(repo) is None
    git(repo, "config", key, value)
    found = problem(repo)
    assert found is not None and key.rpartition(".")[2].lower() in found.lower(), found
    verdict = analyze("git status", str(repo))
    assert not verdict.read_only and verdict.reason.startswith("git: ")
    assert analyze("ls", str(repo)).read_only  # only git obeys the repository's config


@pytest.mark.parametrize(("key", "value"), [
    ("core.fsmonitor", "false"),
    ("alias.st", "!touch pwned"),  # aliases never replace built-in commands
    ("http.https://github.com/.extraheader", "AUTHORIZATION: basic x"),
    ("remote.origin.url", "https://example.com/r.git"),
    ("core.hooksPath", ".husky/_"),
    ("diff.evil.xfuncname", "^def"),
    ("user.email", "a@example.com"),
])
def test_ordinary_config_stays_read_only(repo: Path, key: str, value: str) -> None:
    git(repo, "config", key, value)
    assert problem(repo) is None
    assert analyze("git log -p", str(repo)).read_only


def test_includes_are_followed_whatever_their_condition(repo: Path, tmp_path: Path) -> None:
    (repo / "evil.cfg").write_text("[core]\n\tfsmonitor = ./watch\n")
    git(repo, "config", "includeIf.onbranch:no-such-branch.path", "../evil.cfg")
    found = problem(repo)
    assert found is not None and "evil.cfg" in found and "core.fsmonitor" in found


def test_nested_includes_and_missing_ones(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "a.cfg").write_text("[include]\n\tpath = b.cfg\n\tpath = missing.cfg\n")
    (tmp_path / "b.cfg").write_text("[diff \"x\"]\n\ttextconv = ./conv\n")
    git(repo, "config", "include.path", str(tmp_path / "a.cfg"))
    assert "textconv" in (problem(repo) or "")
    (tmp_path / "b.cfg").write_text("[user]\n\tname = x\n")
    assert problem(repo) is None  # revalidated: the included file changed


@pytest.mark.parametrize("target", ["%(prefix)/etc/x", "self"])
def test_includes_that_cannot_be_followed_fail_closed(repo: Path, target: str) -> None:
    if target == "self":  # includes itself: git gives up at its depth limit
        git(repo, "config", "include.path", "config")
    else:
        git(repo, "config", "include.path", target)
    assert problem(repo) is not None


def test_a_config_git_cannot_parse_fails_closed(repo: Path) -> None:
    with open(repo / ".git" / "config", "a") as file:
        file.write("[core\n\tfsmonitor = x\n")
    assert problem(repo) is not None


@pytest.mark.parametrize("hook", ["post-index-change", "reference-transaction"])
def test_hooks_read_commands_can_run_are_refused(repo: Path, hook: str) -> None:
    (repo / ".git" / "hooks" / hook).write_text("#!/bin/sh\ntouch pwned\n")
    assert hook in (problem(repo) or "")


def test_hooks_in_a_configured_hooks_path(repo: Path) -> None:
    (repo / "hooks").mkdir()
    (repo / "hooks" / "pre-commit").write_text("#!/bin/sh\n")  # not run by read commands
    git(repo, "config", "core.hooksPath", "hooks")
    assert problem(repo) is None
    (repo / "hooks" / "post-index-change").write_text("#!/bin/sh\ntouch pwned\n")
    assert "post-index-change" in (problem(repo) or "")


def test_every_bare_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert "bare repository" in (problem(bare) or "")
    assert "bare repository" in (problem(bare / "refs") or "")  # found walking up, as git does


def test_a_bare_repository_committed_inside_a_clone(repo: Path) -> None:
    """The classic attack: a clone's files include a directory shaped like a bare repository."""
    inner = repo / "docs"
    (inner / "objects").mkdir(parents=True)
    (inner / "refs").mkdir()
    (inner / "HEAD").write_text("ref: refs/heads/main\n")
    (inner / "config").write_text("[core]\n\tfsmonitor = ./watch\n")
    assert git(inner, "rev-parse", "--is-bare-repository").strip() == "true"
    assert "bare repository" in (problem(inner) or "")
    (inner / "HEAD").write_text("not a head\n")  # git no longer takes it: the outer repo counts
    assert git(inner, "rev-parse", "--show-toplevel").strip() == str(repo)
    assert problem(inner) is None


def test_an_empty_dot_git_does_not_hide_a_bare_repository(tmp_path: Path) -> None:
    (tmp_path / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "objects").mkdir()
    (tmp_path / "refs").mkdir()
    (tmp_path / ".git").mkdir()
    assert "bare repository" in (problem(tmp_path) or "")


def test_a_dot_git_file_points_to_the_config_that_counts(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    git(repo, "worktree", "add", "-q", str(elsewhere))
    assert problem(elsewhere) is None
    git(repo, "config", "diff.x.textconv", "./conv")  # the common config governs worktrees
    assert "textconv" in (problem(elsewhere) or "")
    git(repo, "config", "--unset", "diff.x.textconv")
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(elsewhere, "config", "--worktree", "core.fsmonitor", "./watch")
    assert "config.worktree" in (problem(elsewhere) or "")
    assert problem(repo) is None


def test_a_gitdir_file_to_a_hostile_git_dir(tmp_path: Path, repo: Path) -> None:
    hostile = tmp_path / "hostile.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(hostile))
    (hostile / "config").write_text("[core]\n\tbare = false\n\tfsmonitor = ./watch\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {hostile}\n")
    assert "fsmonitor" in (problem(work) or "")
    (work / ".git").write_text("gibberish\n")
    assert problem(work) is not None  # git dies on it; we do not guess


def test_submodule_repositories_are_checked(repo: Path) -> None:
    sub = repo / ".git" / "modules" / "lib" / "inner"
    sub.mkdir(parents=True)
    (sub / "config").write_text("[core]\n\tfsmonitor = ./watch\n")
    assert "submodule" in (problem(repo) or "")


def test_a_split_index_is_refused(repo: Path) -> None:
    git(repo, "update-index", "--split-index")
    assert "split index" in (problem(repo) or "")


@pytest.mark.parametrize("target", ["/dev/zero", "elsewhere"])
def test_an_index_that_is_no_regular_file_is_refused(repo: Path, target: str) -> None:
    # A read-only git command runs on a private copy of the index: a link (to /dev/zero,
    # endless) or a FIFO cannot be copied, and is no index an archive should hold anyway.
    index = repo / ".git" / "index"
    index.unlink()
    if target == "/dev/zero":
        os.symlink(target, index)
    else:
        os.mkfifo(index)
    assert "not a regular file" in (problem(repo) or "")
    assert not analyze("git status", str(repo)).read_only


def test_an_index_too_large_to_copy_is_refused(repo: Path) -> None:
    from nbtoolsched.shell._gitrepo import MAX_INDEX_BYTES

    with open(repo / ".git" / "index", "r+b") as index:
        index.truncate(MAX_INDEX_BYTES + 1)  # sparse: costs no disk
    assert "larger than" in (problem(repo) or "")


def test_gitlinks_are_found_in_an_index_read_in_chunks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbtoolsched.shell import _gitrepo

    monkeypatch.setattr(_gitrepo, "_SCAN_CHUNK", 7)  # the mode straddles chunk borders
    sub = repo / "lib"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "x").write_text("x\n")
    git(sub, "add", ".")
    git(sub, "commit", "-qm", "x")
    git(repo, "add", "lib")
    (sub / ".git" / "config").write_text("[core]\n\tfsmonitor = ./watch\n")
    assert "submodule lib" in (problem(repo) or "")


def test_the_environment_pointing_git_elsewhere_is_refused(repo: Path) -> None:
    assert "GIT_DIR" in (repository_problem(str(repo), {**CLEAN_ENV, "GIT_DIR": "/x"}) or "")


def test_the_cache_follows_changes(repo: Path) -> None:
    assert problem(repo) is None
    git(repo, "config", "core.pager", "less")
    assert problem(repo) is not None
    git(repo, "config", "--unset", "core.pager")
    assert problem(repo) is None
    (repo / ".git" / "hooks" / "post-index-change").write_text("")
    assert problem(repo) is not None


def test_checked_out_submodules_with_their_own_git_dir(repo: Path, tmp_path: Path) -> None:
    """git status in the superproject runs git status in each submodule, under its config."""
    sub = repo / "lib"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "a.txt").write_text("a\n")
    git(sub, "add", ".")
    git(sub, "commit", "-qm", "a")
    git(repo, "add", "lib")
    git(repo, "commit", "-qm", "submodule")
    assert "160000" in git(repo, "ls-files", "--stage", "lib")
    assert problem(repo) is None
    marker = tmp_path / "PWNED"
    git(sub, "config", "core.fsmonitor", f"sh -c 'touch {marker}'")
    subprocess.run(["git", "status", "--short"], cwd=repo, env={**CLEAN_ENV, "GIT_OPTIONAL_LOCKS": "0"},
                   capture_output=True, check=True)
    assert marker.exists(), "the attack must be real: git status runs the submodule's fsmonitor"
    assert "the submodule lib" in (problem(repo) or "")


def test_an_alias_never_replaces_a_built_in_command(repo: Path, tmp_path: Path) -> None:
    """Why alias.* is not checked: git runs its own status, not the alias."""
    marker = tmp_path / "PWNED"
    git(repo, "config", "alias.status", f"!touch {marker}")
    git(repo, "status")
    assert not marker.exists() and problem(repo) is None
