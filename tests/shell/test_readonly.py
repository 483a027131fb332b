"""The read-only verdict: reasons, tricky commands, the cwd check, benign exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbtoolsched.shell._readonly import ReadOnlyVerdict, analyze, is_benign_exit, is_read_only
from nbtoolsched.shell._sed import sed_problem


@pytest.mark.parametrize(("command", "reason"), [
    ("ls > out.txt", "redirection to a file: > out.txt"),
    ("ls >&2file", "redirection to a file: >&2file"),
    ("sed -i 's/a/b/' f", "sed -i edits files in place"),
    ("echo \"$(id)\"", "command substitution $(id)"),
    ("echo $_", "parameter expansion $_"),
    ("sort -o out f", "sort -o writes its output to a file"),
    ("find . -delete", "find -delete deletes files"),
    ("find . -exec rm {} \\;", "find -exec runs a command"),
    ("git -c core.pager=evil log", "git -c sets configuration (which can run programs)"),
    ("git branch newname", "git branch newname creates a branch"),
    ("xargs rm", "xargs runs rm, which is not safe with arguments from input"),
    ("FOO=1 ls", "environment assignment before the command: FOO=1"),
    ("ls *.py", "unquoted glob *.py"),
    ("cd x && git status", "cd combined with git (bare repository attack)"),
    ("f(){ rm x; }; f", "function definition: f(){ rm x; }"),
    ("ls &", "background job: &"),
    ("rm x", "rm is not on the read-only allowlist"),
    ("bash -c 'ls'", "bash runs other commands"),
    ("cat <<EOF\n$HOME\nEOF", "heredoc body: parameter expansion $HOME"),
    ("ls\u00a0-la", "unusual character U+00A0 (no-break space)"),
    ("ls\r", "control character U+000D"),
    ("echo 'x", "cannot parse: syntax error"),
    ("", "empty command"),
])
def test_reasons_name_the_part(command: str, reason: str) -> None:
    verdict = analyze(command)
    assert verdict == ReadOnlyVerdict(False, verdict.reason)
    assert verdict.reason.startswith(reason), verdict.reason


def test_read_only_reason_lists_the_commands() -> None:
    assert analyze("git log | head -5") == ReadOnlyVerdict(True, "read-only: git, head", uses_git=True)
    assert is_read_only("ls -la")
    assert not is_read_only("rm -rf x")


@pytest.mark.parametrize(("command", "read_only"), [
    ("git branch --abbrev 7", False),  # --abbrev takes only an attached value: creates 7
    ("git branch --column always", False),
    ("git tag -n 5", True),  # -n lists (5 is a pattern)
    # Anything that points git at other config or another repository.
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log", False),
    ("GIT_DIR=x; git log", False),
    ("export GIT_DIR=x; git log", False),
    ("git --work-tree=/tmp log", False),
    ("git --config-env=core.pager=X log", False),
    ("git tag -n 5 v1", True),
    ("git branch --abbrev=7 -v", True),
    ("git branch --merged main", True),
    ("git branch -v newname", False),
    ("git log --format=%H -3 --", True),
    ("git log --oneline -- -p", True),  # after --, -p is a path
    ("git diff -S foo", True),
    ("git diff -S -foo", False),  # a value that looks like an option is refused
    ("git for-each-ref --sort=-refname", True),
    ("git ls-remote origin", True),
    ("git ls-remote https://x.example/r", False),
    ("git remote show origin", True),
    ("git remote show a b", False),
    ("grep -A20 -rn foo .", True),
    ("grep -rnZ foo .", True),
    ("grep -rnQ foo .", False),
    ("grep -e -v f", True),
    ("rg --pre=x foo", False),
    ("sort -rk2,2 f", True),
    ("sort -ro out f", False),
    ("sort -- -o", True),  # a file named -o
    ("tree -o out", False),
    ("fd -e py", True),
    ("fd -x rm", False),
    ("xargs -0 -n1 grep -l x", True),
    ("xargs -I{} cat {}", True),
    ("xargs -Ix cat x", False),
    ("xargs -- rm", False),
    ("xargs grep -r x $y", False),
    ("ps -ef", True),
    ("ps aux", True),
    ("ps auxe", False),
    ("date +%F", True),
    ("date 0101", False),
    ("hostname -f", True),
    ("hostname x", False),
    ("uniq -c f", True),
    ("uniq f out", False),
    ("jq -r .a f", True),
    ("jq -L lib .a f", False),
    ("cd", True),
    ("cd a b", False),
    ("printf '%s' x", True),
    ("printf -v x y", False),
    ("history 5", True),
    ("history -w f", False),
    ("/usr/bin/git status", True),
    ("./git status", False),
    ("/tmp/bin/ls", False),
    ("test -f x", True),
    ("test -v x", False),
    ("[[ 3 -gt 2 ]]", True),
    ("[[ x -gt 2 ]]", False),
    ("[[ $x == y ]]", False),
    ("[[ a == *.py ]]", True),  # a pattern, not a glob, inside [[ ]]
    ("echo a > /dev/null b", True),
    ("cat < /dev/udp/1.2.3.4/53", False),
    ("docker inspect x", True),
    ("docker exec x ls", False),
    ("node -v", False),  # node may be a version manager's shim (see EXACT_READONLY)
    ("node -v --run x", False),
    ("pwd -P", True),
    ("pwd x", False),
    ("ifconfig eth0", True),
    ("time", False),
    ("nice -n 5 ls", True),
    ("timeout 5 nohup ls", False),
])
def test_verdicts(command: str, read_only: bool) -> None:
    assert analyze(command).read_only is read_only, analyze(command).reason


@pytest.mark.parametrize(("argv", "ok"), [
    (["sed", "-n", "1,5p", "f"], True),
    (["sed", "-n", "/a/,/b/p;$p", "f"], True),
    (["sed", "-n", "/a\\/b/Ip"], True),
    (["sed", "s|a|b|g"], True),
    (["sed", "s/a;b/c/2"], True),
    (["sed", "-e", "1d", "-e", "y/abc/xyz/"], True),
    (["sed", "-n", "/x/{p;q}", "f"], True),
    (["sed", "0~2d"], True),
    (["sed", "10q"], True),
    (["sed", "s/a/b/w f"], False),
    (["sed", "s/a/b/e"], False),
    (["sed", "s/a/b/gw f"], False),
    (["sed", "1e ls"], False),
    (["sed", "w out"], False),
    (["sed", "r /etc/passwd"], False),
    (["sed", "a\\text"], False),
    (["sed", "s/a/b"], False),
    (["sed", "-i", "p"], False),
    (["sed", "-s", "-i.bak", "p"], False),
    (["sed", "--in-place=.bak", "p"], False),
    (["sed", "-f", "x.sed"], False),
    (["sed"], False),
    (["sed", "-n", "p", "--", "-i"], True),  # a file named -i
])
def test_sed_scripts(argv: list[str], ok: bool) -> None:
    assert (sed_problem(argv) is None) is ok, sed_problem(argv)


def test_git_in_a_bare_repository_is_not_read_only(tmp_path: Path) -> None:
    (tmp_path / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "objects").mkdir()
    (tmp_path / "refs").mkdir()
    assert analyze("git status").read_only
    verdict = analyze("git status", cwd=str(tmp_path))
    assert not verdict.read_only and "bare repository" in verdict.reason
    assert analyze("ls", cwd=str(tmp_path)).read_only
    (tmp_path / ".git").mkdir()  # not a git directory: git still uses the bare one
    assert not analyze("git status", cwd=str(tmp_path)).read_only


def test_analyze_never_raises() -> None:
    assert not analyze(None).read_only  # type: ignore[arg-type]
    assert not analyze(b"ls").read_only  # type: ignore[arg-type]
    assert not analyze("\ud800").read_only  # a lone surrogate


@pytest.mark.parametrize(("command", "code", "benign"), [
    ("grep foo f", 1, True),
    ("grep foo f", 2, False),
    ("rg foo", 1, True),
    ("egrep x f", 1, True),
    ("fgrep x f", 1, True),
    ("diff a b", 1, True),
    ("diff a b", 2, False),
    ("cmp a b", 1, True),
    ("test -f x", 1, True),
    ("[ -f x ]", 1, True),
    ("[[ -f x ]]", 1, True),
    ("cat f | grep x", 1, True),
    ("grep x f | wc -l", 1, False),
    ("cd src && grep -r x .", 1, True),
    ("ls; diff a b", 1, True),
    ("timeout 5 grep x f", 1, True),
    ("timeout 5 grep x f", 124, False),
    ("/usr/bin/grep x f", 1, True),
    ("git grep foo", 1, True),
    ("git diff --quiet", 1, True),
    ("git diff", 1, False),
    ("npm test", 1, False),
    ("pytest", 1, False),
    ("! grep x f", 1, False),
    ("grep x f &", 1, False),
    ("if grep x f; then ls; fi", 1, False),
    ("grep \"$x\" f", 1, False),
    ("grep 'unterminated", 1, False),
    ("ls", 0, True),
])
def test_is_benign_exit(command: str, code: int, benign: bool) -> None:
    assert is_benign_exit(command, code) is benign


# GNU tools take any unambiguous prefix of a long option (--out is --output): a refused
# option must stay refused however it is abbreviated.
def _refused_long_options() -> list[tuple[str, str]]:
    from nbtoolsched.shell._allowlists import WRITE_FLAGS

    return sorted((tool, flag) for tool, flag in WRITE_FLAGS if flag.startswith("--"))


@pytest.mark.parametrize(("tool", "flag"), _refused_long_options())
def test_an_abbreviated_refused_option_is_never_read_only(tool: str, flag: str) -> None:
    from nbtoolsched.shell._allowlists import FLAG_COMMANDS

    known = {name for key, spec in FLAG_COMMANDS.items() if key[0] == tool for name in spec.flags}
    for end in range(3, len(flag) + 1):
        prefix = flag[:end]
        if prefix in known:
            continue  # an exact option of the tool: getopt_long takes that one
        for command in (f"{tool} {prefix} x", f"{tool} {prefix}=x y", f"git {prefix} status", f"git log {prefix}"):
            if command.startswith("git") != (tool == "git"):
                continue
            assert not analyze(command).read_only, command


def test_jq_options_and_modules_that_load_files_are_not_read_only() -> None:
    for command in ("jq -nf prog.jq", "jq -rL /tmp .", "jq --rawf x f .", "jq -n 'import \"m\" as $m; $m'",
                    "jq -n 'include \"m\"; .'", "jq -n '\"m\" | modulemeta'", "jq -n '$__loc__'"):
        verdict = analyze(command)
        assert not verdict.read_only, command
    assert analyze("jq -r '.important' f.json").read_only
