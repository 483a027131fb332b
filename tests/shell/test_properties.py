"""Invariants of the read-only check and the parser (hypothesis).

The two bash differentials run the real shell with an empty PATH, in a temporary
directory, and log what it would execute through ``command_not_found_handle``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nbtoolsched.shell._readonly import ReadOnlyVerdict, analyze
from nbtoolsched.shell._parse import parse_command

from .corpus import CORPUS

READ_ONLY = sorted(case.command for case in CORPUS if analyze(case.command).read_only)
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")
pytestmark = pytest.mark.heavy  # random commands, many compared with what a real bash does

# Ways to make any command do more than read. Newlines end comments and heredocs.
ESCALATIONS = [
    "{cmd}\nrm -rf x",
    "{cmd}; rm -rf x",  # after a comment this is still only a comment...
    "{{ {cmd}\n}} > f",
    "{{ {cmd}\n}} >> ~/.bashrc",
    "{cmd}\necho \"$(id)\"",
    "{cmd}\necho `id`",
    "{cmd}\ncat <(id)",
    "{cmd}\necho $HOME",
    "FOO=1 {cmd}",
    "{cmd}\nls *",
    "{cmd} &",
    "f() {{ {cmd}\n}}",
    "{cmd}\nsed -i s/a/b/ f",
    "{cmd}\nxargs rm",
]
SAME_LINE = frozenset({"{cmd}; rm -rf x", "{cmd} &"})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(READ_ONLY), st.sampled_from(ESCALATIONS))
def test_escalating_a_read_only_command_is_never_read_only(cmd: str, template: str) -> None:
    if template in SAME_LINE:
        # "ls # c; rm -rf x": the rm would sit inside the comment (or a heredoc body).
        assume("#" not in cmd and "\n" not in cmd)
    command = template.format(cmd=cmd)
    assert not analyze(command).read_only, command


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(READ_ONLY), st.sampled_from(READ_ONLY))
def test_read_only_commands_compose(first: str, second: str) -> None:
    for joined in (f"{first}\n{second}", f"{{ {first}\n}} && {{ {second}\n}}"):
        verdict = analyze(joined)
        if not verdict.read_only:
            # Refused on purpose: cd + git. Refused safely: a tree-sitter-bash misparse
            # ("a | b | c\n[ x ] && y" merges two lines), caught by the coverage check.
            expected = ("cd combined with git", "misread")
            assert any(e in verdict.reason for e in expected), (joined, verdict.reason)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_random_text_always_gets_a_verdict(command: str) -> None:
    verdict = analyze(command, use_cache=False)
    assert isinstance(verdict, ReadOnlyVerdict)
    assert verdict.reason
    parsed = parse_command(command)
    assert not any("internal parser error" in e for e in parsed.errors), parsed.errors


SHELLISH = st.lists(
    st.sampled_from([
        "a", "b", "ls", "-o", "x y", "'", '"', "\\", " ", " ", "\t", "\n", ";", "&", "|",
        "&&", "||", "#", "$", "(", ")", "{", "}", "<", ">", "2>&1", "`", "*", "~", "=",
        "!", ",", "\\\n", "$'", "<<", "EOF", ";;", "[", "]",
    ]),
    max_size=14,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(SHELLISH)
def test_shellish_text_always_gets_a_verdict(command: str) -> None:
    verdict = analyze(command, use_cache=False)
    assert isinstance(verdict, ReadOnlyVerdict) and verdict.reason
    assert not any("internal parser error" in e for e in parse_command(command).errors)


# --------------------------------------------------------------- bash differentials
# Each external command bash would run is recorded by ``command_not_found_handle`` in a
# file of its own, created with O_EXCL (``set -C``), so a background command and a
# foreground one can never interleave their records; names sort by the time of the call.
# Every shell holds fd 3, a pipe: its end of file says that all of them have finished.
_LOGGER = (
    "command_not_found_handle() { local s= n=0 f; for x in \"$@\"; do s+=\"$x\"$'\\037'; done;"
    " while f=\"$NTS_RECORDS/$EPOCHREALTIME.$BASHPID.$n\"; ! (set -C; : > \"$f\") 2>/dev/null;"
    " do n=$((n+1)); done; printf '%s' \"$s\" > \"$f\"; return 0; }\n"
)


def _bash_runs(command: str) -> list[tuple[str, ...]]:
    """The argv of every external command bash would run (none exist on its PATH)."""
    assert BASH is not None
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryDirectory() as tmp:
        records = os.path.join(tmp, ".records")
        work = os.path.join(tmp, "work")
        os.mkdir(records)
        os.mkdir(work)
        try:
            proc = subprocess.Popen(
                [BASH, "--norc", "--noprofile", "-c", f"exec 3>&{write_fd}\n{_LOGGER}{command}"],
                cwd=work, env={"PATH": "/nonexistent", "HOME": "~", "NTS_RECORDS": records},
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            pipe.read()  # end of file: every shell, background ones included, has exited
        proc.wait(timeout=10)
        found = []
        for name in sorted(os.listdir(records), key=_record_order):
            with open(os.path.join(records, name), "rb") as file:
                found.append(tuple(file.read().decode("utf-8", "replace").split("\x1f")[:-1]))
    return found


def _record_order(name: str) -> tuple[float, int, int]:
    seconds, pid, n = name.rsplit(".", 2)
    return float(seconds), int(pid), int(n)


WORDS = st.sampled_from([
    "a", "b", "c", "-o", "'x y'", '"q"', "\\;", "'#'", "a\\ b", "$'t'", "\\#", "'", '"',
    "\\", "}", "{", "\\}", "=x", "a=b",
])
SEPARATORS = st.sampled_from([
    " ", " ", " ", ";", "&&", "||", "|", "\n", " # ", "\\\n", "\\ ", "\t", "(", ")", "{ ",
    " }", "&", "!", " > /dev/null ", " 2>&1 ", "<<<", "`", "$(", ";;", " \\\n ",
])
COMMANDS = st.lists(st.tuples(WORDS, SEPARATORS), min_size=1, max_size=6).map(
    lambda pairs: "".join(word + sep for word, sep in pairs)
)


@needs_bash
@settings(max_examples=200, deadline=None)
@given(COMMANDS)
def test_bash_runs_only_the_commands_we_found(command: str) -> None:
    parsed = parse_command(command)
    assume(not parsed.errors)
    assume(all(c.kind in ("subshell", "group", "negation", "background")
               for c in parsed.constructs))
    assume(not any(cmd.is_dynamic for cmd in parsed.commands))
    ours = {cmd.argv for cmd in parsed.commands}
    for argv in _bash_runs(command):
        assert argv in ours, (command, argv, ours)


ARG_CHARS = st.lists(
    st.sampled_from(list("ab -='\"\\#~{},*.:/") + ["\\\n", "$'", "\\'", "a b", "--x", "{a,b}"]),
    min_size=1, max_size=12,
).map("".join)


@needs_bash
@settings(max_examples=200, deadline=None)
@given(ARG_CHARS)
def test_static_words_match_bash(args: str) -> None:
    parsed = parse_command(f"a {args}")
    assume(not parsed.errors and not parsed.constructs and len(parsed.commands) == 1)
    (cmd,) = parsed.commands
    assume(cmd.argv[0] == "a" and not cmd.is_dynamic and not cmd.redirects)
    assert _bash_runs(f"a {args}") == [cmd.argv], args


# Expansions that make bash evaluate a variable's value as code: with P (and $_) holding
# "a[$(mark)]" and Q "$(mark)", bash runs `mark` for some forms. Each such form must
# count as running code (no allow rule may match the command holding it).
_NAMES = ["P", "_", "x", "1", "$P", "${P}", "Q"]
_FORMS = sorted({
    template.format(v=v)
    for v in _NAMES
    for template in [
        "$(({v}))", "$[{v}]", "${{b[{v}]}}", "${{#b[{v}]}}", "${{!{v}}}", "${{x:{v}}}",
        "${{x:1:{v}}}", "${{x[@]:{v}}}", "${{{v}@P}}", "${{{v}@Q}}", "${{{v}@E}}", "${{{v}:-y}}",
        "${{{v}:+$(({v}))}}", "\"${{b[{v}]}}\"", "${{b[@]}}", "${{{v}/a/b}}", "${{#{v}}}",
    ]
    if "{v}" not in template or not (v.startswith("$") and "@" in template)
})
_SETUP = "P='a[$(mark)]'; Q='$(mark)'; x=(1 2 3); b=(1 2); : \"$P\"; "


@needs_bash
@pytest.mark.parametrize("form", _FORMS)
def test_expansions_bash_evaluates_as_code_count_as_running_code(form: str) -> None:
    from nbtoolsched.shell._parse import subcommand_strings

    parsed = parse_command(f"git log {form}")
    if ("mark",) in _bash_runs(f"{_SETUP}echo {form}"):
        assert subcommand_strings(f"git log {form}") is None, form
        assert parsed.errors or parsed.commands[0].runs_code, form  # (a parse error also refuses)


# What the deny rules see (invocations.py) against what bash runs, through the runners
# bash itself provides (the external ones, env or xargs, cannot run without a PATH).
_SPELLINGS = [
    "\\rm -x a", "\"rm\" -x a", "r''m -x a", "'r'\"m\" -x", "command rm -x", "command -p rm -x",
    "builtin command rm -x", "exec rm -x", "eval rm -x", "eval 'rm -x'", "eval \"command rm\" -x",
    "time rm -x", "time -p rm -x", "trap 'rm -x' EXIT", "trap -- 'rm -x' EXIT", "! rm -x",
    "{ rm -x; }", "(rm -x)", "f() { rm -x; }; f", "echo $(rm -x)", "echo `rm -x`", "cat <(rm -x)",
    "echo \"${u:-$(rm -x)}\"", "x=$(rm -x)", "rm -x | rm -y", "if rm -x; then rm -y; fi",
    "eval eval rm -x", "command eval 'exec rm -x'", "export X=$(rm -x)", "local x=`rm -x`",
    "for i in $(rm -x); do :; done", "case $(rm -x) in $(rm -y)) :;; esac", "(( $(rm -x) ))",
    "a=(1 $(rm -x))", "echo > $(rm -x)", "cat <<E\n$(rm -x)\nE", "[[ $(rm -x) ]]",
]


@needs_bash
@pytest.mark.parametrize("command", _SPELLINGS)
def test_every_program_bash_runs_is_an_invocation(command: str) -> None:
    from nbtoolsched.shell._invocations import command_line

    line = command_line(command)
    assert line.problems == (), line.problems
    found = {inv.words for inv in line.invocations}
    for argv in _bash_runs(command):  # None (a computed word) stands for any word
        assert any(len(words) == len(argv) and all(w in (None, a) for w, a in zip(words, argv))
                   for words in found), (command, argv, found)


# Builtins that evaluate an argument as code: with the payload in a static word or in $P.
_CODE_COMMANDS = [
    "printf -v 'a[$(mark)]' x", "printf -v \"$P\" x", "printf -v\"$P\" x", "read \"$P\" <<< x",
    "test -v \"$P\"", "[ -v \"$P\" ]", "[[ -v $P ]]", "[[ $P -eq 1 ]]", "[[ 1 -lt P ]]", "let \"$P\"",
    "let P", "sleep 0 & wait -n -p \"$P\"", "a=(); unset \"$P\"", "compgen -W '$(mark)' x",
    "printf -v x '%s' \"$P\"", "read x <<< \"$P\"", "test -n \"$P\"", "[[ -n $P ]]", "[[ 1 -eq 1 ]]",
]


@needs_bash
@pytest.mark.parametrize("command", _CODE_COMMANDS)
def test_builtins_that_evaluate_an_argument_count_as_running_code(command: str) -> None:
    from nbtoolsched.shell._parse import subcommand_strings

    if ("mark",) in _bash_runs(f"{_SETUP}{command}"):
        assert subcommand_strings(command) is None, command
