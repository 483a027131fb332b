"""Every git option on the allowlist, followed by a word: refused, or really read-only.

Whether ``--opt WORD`` gives WORD to the option or leaves it a positional is git's
choice (an option with an optional argument takes only ``--opt=WORD``). Where the check
and git disagree, ``git branch --abbrev 7`` created the branch ``7``. So each option is
run by real git, in the environment the Bash tool gives read-only commands, and the
repository (work tree and .git, byte for byte) must be unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from nbtoolsched.shell._readonly import analyze
from nbtoolsched.shell._allowlists import GIT_READONLY
from nbtoolsched.tools._bash import command_env, private_git_index

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.heavy,  # runs real git for every option of every allowed command
]
# Words that a positional-taking git command would turn into a ref, a path or a revision.
VALUES = ("7", "probe")
SKIP = {("git", "ls-remote"), ("git", "remote", "show")}  # these contact a remote


def snapshot(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(directory, name), root)] = "dir"
        for name in files:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = hashlib.sha1(Path(path).read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("flags") / "repo"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=root, env=env, check=True, capture_output=True)
    git("init", "-q")
    for text in ("one\n", "two\n"):
        (root / "f.txt").write_text(text)
        git("add", ".")
        git("commit", "-qm", text.strip())
    git("tag", "v1")
    (root / "f.txt").write_text("three\n")
    git("stash", "-q")
    return root


def commands() -> list[str]:
    found = []
    for key, spec in GIT_READONLY.items():
        if key in SKIP:
            continue
        for flag in sorted({item.partition("=")[0].removesuffix("[") for item in spec.split()}):
            found.extend(f"{' '.join(key)} {flag} {value}" for value in VALUES)
    return found


def test_the_audit_covers_the_options_that_bit() -> None:
    assert "git branch --abbrev 7" in commands()
    assert "git tag --column probe" in commands()


@pytest.mark.parametrize("command", commands())
def test_an_option_and_a_word_is_refused_or_writes_nothing(repo: Path, command: str) -> None:
    if not analyze(command, str(repo)).read_only:
        return
    before = snapshot(repo)
    with private_git_index(command, str(repo), True) as index:
        env = command_env(read_only=True, git_index=index)
        subprocess.run(["bash", "-c", command], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert snapshot(repo) == before, f"{command} is called read-only but changed the repository"
