"""Where a Bash line's relative names lead, and when it may change a tool's config
(shell/_places.py, shell/_writes.py), checked against what the real bash does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.shell._writes import config_write
from nbtoolsched.shell._places import relative_bases
from tests.bypass_kit import Refuser, make_project, run_one, scheduler

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

FOLDERS = ["a", "b", "a/b", "..", "../..", "l", "c", ".", "a/b/..", "l/..", "~", "~/a", "/"]
MOVES = ["cd {}", "cd -P {}", "cd -L {}", "cd -- {}", "cd -P -- {}", "pushd {} >/dev/null", "pushd -n {} >/dev/null",
         "builtin cd {}", "command cd {}"]
PLAIN = ["popd >/dev/null", "pushd >/dev/null", "cd", "pushd +1 >/dev/null", "popd -n >/dev/null", "ls", "echo x"]


def _tree(root: Path) -> Path:
    """root/w is the working folder: folders a, a/b, c, b and a link l -> a/b in it."""
    work = root / "w"
    for folder in ("a/b", "c", "b"):
        (work / folder).mkdir(parents=True, exist_ok=True)
    if not (work / "l").exists():
        (work / "l").symlink_to("a/b")
    return work


_step = st.one_of(st.builds(str.format, st.sampled_from(MOVES), st.sampled_from(FOLDERS)), st.sampled_from(PLAIN))
_line = st.builds(
    lambda steps, seps: steps[0] + "".join(sep + s for s, sep in zip(steps[1:], seps)) + "\npwd -P",
    st.lists(_step, min_size=1, max_size=4),
    st.lists(st.sampled_from([" && ", "; ", " || ", "\n"]), min_size=4, max_size=4),
)


@needs_bash
@settings(max_examples=300, deadline=None, derandomize=True)
@given(line=_line)
def test_the_folder_bash_ends_in_is_always_one_of_the_bases(tmp_path_factory: pytest.TempPathFactory, line: str) -> None:
    root = tmp_path_factory.getbasetemp() / "places"
    work = _tree(root)
    env = {"PATH": os.environ["PATH"], "HOME": os.path.expanduser("~")}  # the HOME the check expands ~ with
    done = subprocess.run([BASH or "bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=10)
    ended = os.path.realpath(done.stdout.splitlines()[-1])
    bases = relative_bases(line, str(work))
    if bases is None:
        return
    reachable = {os.path.realpath(b) for b in bases}
    assert ended in reachable, f"{line!r} ended in {ended}, not one of {sorted(reachable)}"


@pytest.mark.parametrize("line", ["cd a && cd b && cat x", "cd -P a/b; cat ../x", "pushd a >/dev/null && popd", "builtin cd a",
                                  "cd l && cd .. && ls", "ln -s a l2", "cp -r a d", "mkdir -p build && cd build && ls"])
def test_moves_the_check_can_follow_have_bases(tmp_path: Path, line: str) -> None:
    work = _tree(tmp_path)
    bases = relative_bases(line, str(work))
    assert bases is not None and bases[0] == str(work)


def test_each_cd_moves_from_where_the_last_one_went(tmp_path: Path) -> None:
    work = _tree(tmp_path)
    bases = relative_bases("cd a && cd b && cat ../../x", str(work))
    assert bases is not None and str(work / "a" / "b") in bases


@pytest.mark.parametrize("line", ["env -C a/b cat ../x", "env --chdir=a/b cat x", "sudo -D a/b cat x", "tar -C a -C b -cf - x",
                                  "tar --directory=a/b -cf - x", "git -C a -C b diff --no-index x y", "cd a; env -C b cat x"])
def test_a_folder_a_runner_or_program_is_told_to_work_in_is_a_base(tmp_path: Path, line: str) -> None:
    work = _tree(tmp_path)
    bases = relative_bases(line, str(work))
    assert bases is not None and str(work / "a" / "b") in bases and bases[0] == str(work)


@needs_bash
@pytest.mark.parametrize("line", ["env -C a/b pwd -P", "env --ch=a -C b pwd -P", "env -C l/.. pwd -P", "git -C a -C b rev-parse --show-prefix"])
def test_where_bash_runs_a_told_program_is_a_base(tmp_path: Path, line: str) -> None:
    work = _tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    done = subprocess.run([BASH or "bash", "-c", line], cwd=work, capture_output=True, text=True, timeout=10, check=True)
    out = done.stdout.strip()
    ended = os.path.realpath(out if out.startswith("/") else work / out)
    bases = relative_bases(line, str(work))
    assert bases is not None and ended in {os.path.realpath(b) for b in bases}, (line, ended, bases)


@pytest.mark.parametrize("line", [
    'cd "$D" && cat x', "cd - && cat x", "HOME=a; cd; cat x", "HOME=a/b; cat ~/x", "cat ~+/x", "cat ~-/x",
    "shopt -s cdable_vars; D=a; cd D", "bash -O cdable\"\"_vars -c 'cd D'", "BASHOPTS=cdable_vars bash -c 'cd D'",
    "for i in 1 2; do cd a; done; cat x", "bash -c 'cd a; cat ../x'", "eval cd a; cat x", "c=cd; $c a; cat x",
    "ln -s a/b l2; cat l2/../x", "cp -s $PWD/x k; cat k", "cd -x a", "cd a*", "CDPATH=a cd b", "x=$(cd a; pwd)",
    "export HO''ME=a; cd", "declare HO\\ME=a; cat ~/x", "export CDP\"\"ATH=a; cd b", "mapfile -C 'cd a' -c 1 x <<< y",
    "bash <<< 'cd a; cat ../x'", "find a -execdir cat ../x \\;", "sudo -R / cat x", "tar Cxf a t.tar",
    "BASH_ENV=rc bash -c 'cat x'", "env -C \"$D\" cat x",
])
def test_moves_the_shell_decides_have_no_bases(tmp_path: Path, line: str) -> None:
    assert relative_bases(line, str(_tree(tmp_path))) is None


@pytest.mark.parametrize("line", [
    "dd if=x of=.git/hooks/pre-commit", "sort -o .git/hooks/pre-commit x", "tar xf t.tar -C .git", "tar -C.git -xf t.tar",
    "perl -pi -e s/a/b/ .git/config", "env cp x .claude/settings.json", "xargs cp x <<< .git/hooks/pre-commit",
    "H=.git/hooks/pre-commit; cp x $H", "cd .git && cp ../x hooks/pre-commit", "ln -s .git g", "cp -l .git/config c",
    "bash -c 'cp x .git/hooks/pre-commit'", "git config core.hooksPath h", "git -C . config --local core.fsmonitor x",
    "git clone --template=t u r", "echo x | tee -a ~/.bashrc", "rm -rf .vscode", "cp x .husky/pre-commit",
    "tee -a ~/.config/git/config < x", "cp x ~/.config/fish/config.fish", "ln -sf x ~/.zlogin",
    "cp x .gi?/config", "cp x .[g]it/config", "cp x .[[:alpha:]]it/config", "GLOBIGNORE=x; cp x */config",
    "shopt -s dotglob; cp x */config", "cp x .GI?/config", "tee .gi{t,}/config", "cp x ${u:-.git}/config",
    "cp x $HOME/.bashrc", "cp x .git/config -S .bak", "install x .git/hooks/pre-commit -m 755", "cp x -- -d/../.git/config",
    "cp --suffix .bak x .git/config", "git -c alias.x=config x core.hooksPath d",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=config git x a b",
    "for d in .gi?; do cp x $d/config; done", "a=(.git); cp x ${a[0]}/config", "declare -a a=(.gi?); cp x $a/config",
    "H=./././././././././././././././././././././././././././.git/config; cp x $H", "c=cp; $c x .git/config",
])
def test_lines_that_may_change_a_config_say_why(tmp_path: Path, line: str) -> None:
    assert config_write(line, [str(tmp_path)]) is not None


@pytest.mark.parametrize("line", ["cp .claude/notes.md out.md", "cp -r .git/hooks backup", "git commit -m 'see .git/hooks docs'",
                                  "git status", "mkdir -p build", "install -m 644 .claude/x y", "git add .gitignore",
                                  "rm -rf build/*", "cp src/*.py dist/", "cp -S .bak x y", "install -m 755 x bin/x", "cp x{,.bak}",
                                  "cp -t dist .claude/x", "rm -f *.o",
                                  "for f in *.md; do cp $f docs/; done", "git commit -m \"$(date) see .git/hooks\"",
                                  "git commit -m \"$(cat <<'EOF'\nsee .claude/settings.json\nEOF\n)\"",
                                  "echo \"see .claude/x for $x\" >> notes.md"])
def test_lines_that_only_read_a_config_are_not_flagged(tmp_path: Path, line: str) -> None:
    assert config_write(line, [str(tmp_path)]) is None


def _git_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "notes.md").write_text("notes\n")
    return project


async def test_an_allow_rule_does_not_cover_a_write_into_git(tmp_path: Path) -> None:
    project = _git_project(tmp_path)
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(dd:*)"])
    result = await run_one(sched, "Bash", command="dd if=README.md of=.git/hooks/pre-commit")
    assert refuser.asked and result.is_error and not (project / ".git/hooks/pre-commit").exists()


@pytest.mark.parametrize("command", ["git config --get core.bare", "cp .claude/notes.md out.md", "cd a && cd b && ls"])
async def test_bypass_mode_runs_reads_of_a_config_unasked(tmp_path: Path, command: str) -> None:
    project = _git_project(tmp_path)
    (project / "a" / "b").mkdir(parents=True)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=["Read(secrets/**)"])
    result = await run_one(sched, "Bash", command=command)
    assert not refuser.asked and not result.is_error, result.text


@pytest.mark.parametrize("path", [".husky/pre-commit", "home/.config/git/config", "home/.zlogin"])
async def test_accept_edits_asks_before_writing_a_hook_or_a_startup_file(tmp_path: Path, path: str) -> None:
    project = _git_project(tmp_path)
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits")
    result = await run_one(sched, "Write", file_path=str(project / path), content="echo pwned\n")
    assert refuser.asked and result.is_error and not (project / path).exists()
