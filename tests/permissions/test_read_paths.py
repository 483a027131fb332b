"""Read deny rules against paths the kernel resolves differently from their text, and
against options that hide what a command reads (abbreviations, bundles, jq modules)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.permissions._engine import Permissions
from nbtoolsched.shell import paths_for_check, shell_paths_for_check
from nbtoolsched.shell._reads import read_targets

from .toolbox import outcome

DENY = ("Read(secrets/**)",)
NOWHERE = os.path.join(os.sep, "nonexistent-nbtoolsched")


@pytest.fixture
def linked(project):
    """{P}/a/b/c and {P}/hop -> a/b/c: "hop/../../../secrets/key.txt" is {P}/secrets/key.txt
    to the kernel, while folding ".." first gives a path outside the project."""
    proj, _ = project
    (proj / "a" / "b" / "c").mkdir(parents=True)
    os.symlink(proj / "a" / "b" / "c", proj / "hop")
    return proj


def test_dotdot_after_a_symlink_is_resolved_as_the_kernel_does(linked):
    forms = paths_for_check("hop/../../../secrets/key.txt", str(linked))
    assert str(linked / "secrets" / "key.txt") in forms


async def test_the_read_tool_cannot_reach_a_denied_file_through_a_symlink_and_dotdot(linked):
    perms = Permissions("bypassPermissions", deny=DENY, cwd=linked)
    got, _ = await outcome(perms, "Read", {"file_path": str(linked / "hop/../../../secrets/key.txt")}, str(linked))
    assert got == "deny"


@pytest.mark.parametrize("command", [
    "cat hop/../../../secrets/key.txt",
    "tac /proc/self/cwd/secrets/key.txt",
    "rev /proc/thread-self/cwd/../x/secrets/key.txt",
    "cat /dev/fd/../cwd/secrets/key.txt",
    "cat < /proc/self/cwd/secrets/key.txt",
    "cat selflink/secrets/key.txt",
])
async def test_a_shell_path_through_the_process_own_links_is_not_auto_allowed(linked, command):
    os.symlink("/proc/self/cwd", linked / "selflink")
    perms = Permissions("default", deny=DENY, allow=("Bash(cat:*)", "Bash(tac:*)", "Bash(rev:*)"), cwd=linked)
    got, decision = await outcome(perms, "Bash", {"command": command}, str(linked))
    assert got in ("ask", "deny"), decision


def test_shell_paths_through_proc_self_cannot_be_told(tmp_path):
    os.symlink("/dev/fd/0", tmp_path / "stdin")
    for path in ("/proc/self/cwd/x", "/proc/./self/root", "/dev//fd/3", "/dev/stdin", str(tmp_path / "stdin")):
        assert shell_paths_for_check(path, str(tmp_path)) is None, path
    assert shell_paths_for_check("x/../y", str(tmp_path)) == [str(tmp_path / "y")]


@pytest.mark.parametrize("command", [
    "grep --recur SECRET .", "grep --derefer SECRET", "grep -d recurse SECRET .", "grep --dir=rec SECRET .",
    "grep -nr SECRET", "ls --recu", "git status -v", "git status -vv", "git status --verb", "git log -sp",
    "git log -np1", "git log --patch-with-stat", "git show HEAD", "git log -W",
])
def test_options_that_read_the_tree_are_seen_in_every_spelling(tmp_path, command):
    targets = read_targets(command, [str(tmp_path)])
    assert targets.unknown or "." in targets.trees, targets


@pytest.mark.parametrize("command", [
    "jq -n 'import \"s\\u0065crets/x\" as $k; $k'", "jq -n 'include \"lib\"; f'", "jq -nf prog.jq",
    "jq -L /tmp -n 'import \"m\" as m; 1'", "jq --rawf x secrets/x .", "wc --files0=list", "awk -f p.awk f",
    "awk 'BEGIN { ARGV[1] = \"s\" \"ecrets/key.txt\"; ARGC = 2 } { print }'", "awk '{ print | \"cat .e\" \"nv\" }' f",
    "yq 'load(\"s\" + \"ecrets/x\")' f.yaml",
])
def test_commands_that_compute_what_they_read_are_unknown(tmp_path, command):
    assert read_targets(command, [str(tmp_path)]).unknown


@pytest.mark.parametrize("command", ["git log --oneline", "git status -sb", "git status -uno", "git log --color",
                                     "git branch -vv", "grep -n x f", "ls -la", "jq .important f.json", "awk '{print $1}' f"])
def test_plain_options_are_not_mistaken_for_reading_more(tmp_path, command):
    targets = read_targets(command, [str(tmp_path)])
    assert not targets.unknown and "." not in targets.trees, targets


GIT_NAMES_ONLY_BUNDLES = st.lists(st.sampled_from("snrbz1"), min_size=1, max_size=4).map(lambda c: "-" + "".join(c))


@settings(deadline=None, max_examples=100)
@given(GIT_NAMES_ONLY_BUNDLES, st.sampled_from("puUcmSGLW"), st.integers(0, 4))
def test_a_patch_flag_anywhere_in_a_git_log_bundle_is_seen(bundle, flag, at):
    word = bundle[: 1 + at] + flag + bundle[1 + at:]
    assert "." in read_targets(f"git log {word}", [NOWHERE]).trees, word


@settings(deadline=None, max_examples=100)
@given(st.sampled_from(["--recursive", "--dereference-recursive", "--directories=recurse"]), st.integers(3, 30))
def test_any_abbreviation_of_grep_recursion_is_seen(option, length):
    name, eq, value = option.partition("=")
    word = name[: max(3, min(length, len(name)))] + eq + value
    assert "." in read_targets(f"grep {word} SECRET", [NOWHERE]).trees, word
