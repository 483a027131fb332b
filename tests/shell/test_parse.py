"""split_command, parse errors and the permission-matching helpers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.shell._parse import ShellParseError, parse_command, split_command, strip_env_prefix, strip_wrappers, subcommand_strings, wrapper_prefix_len


def argvs(command: str) -> list[tuple[str, ...]]:
    return [cmd.argv for cmd in split_command(command)]


@pytest.mark.parametrize(("command", "expected"), [
    ("ls -la", [("ls", "-la")]),
    ("a && b || c; d", [("a",), ("b",), ("c",), ("d",)]),
    ("a | b |& c", [("a",), ("b",), ("c",)]),
    ("a\nb\n\nc", [("a",), ("b",), ("c",)]),
    ("(a; b) && { c; }", [("a",), ("b",), ("c",)]),
    ("! a", [("a",)]),
    ("if a; then b; else c; fi", [("a",), ("b",), ("c",)]),
    ("echo 'a b' \"c d\" e\\ f", [("echo", "a b", "c d", "e f")]),
    ("echo \"a\\\"b\" 'it'\\''s' $'\\t'", [("echo", 'a"b', "it's", "\t")]),
    ("echo \"x\ny\"", [("echo", "x\ny")]),
    ("ls # rm -rf /", [("ls",)]),
    ("ls \\\n  -la", [("ls", "-la")]),
    ("[ -f x ] && [[ a == b* ]]", [("[", "-f", "x", "]"), ("[[", "a", "==", "b*", "]]")]),
    ("cat <<EOF | grep x && ls\nbody\nEOF", [("cat",), ("grep", "x"), ("ls",)]),
])
def test_split_command(command: str, expected: list[tuple[str, ...]]) -> None:
    assert argvs(command) == expected


def test_words_after_a_redirection_belong_to_the_command() -> None:
    # tree-sitter puts -o and out among the redirect's targets; bash passes them to sort.
    (sort,) = split_command("sort >/dev/null -o out in")
    assert sort.argv == ("sort", "-o", "out", "in")
    assert [(r.op, r.target.value) for r in sort.redirects] == [(">", "/dev/null")]


def test_trailing_redirection_binds_to_the_last_command() -> None:
    first, last = split_command("ls | wc > /dev/null -l")
    assert first.redirects == ()
    assert last.argv == ("wc", "-l")
    assert last.redirects[0].target.value == "/dev/null"


def test_single_bracket_comparison_is_a_redirection() -> None:
    (test,) = split_command("[ a > b ]")
    assert test.argv == ("[", "a", "]")
    assert test.redirects[0].op == ">" and test.redirects[0].target.value == "b"


def test_redirections_are_reported() -> None:
    (cmd,) = split_command("FOO=1 cmd <<<'here' 2>&1 >out <in >>log &>all 3>&-")
    assert [a.text for a in cmd.assignments] == ["FOO=1"]
    assert [(r.op, r.fd) for r in cmd.redirects] == [
        ("<<<", None), (">&", 2), (">", None), ("<", None), (">>", None), ("&>", None),
        (">&-", 3),
    ]
    assert cmd.redirects[0].target.value == "here"


def test_heredoc_body_and_quoting() -> None:
    (quoted,) = split_command("cat <<'EOF'\n$(x) $y\nEOF")
    assert quoted.redirects[0].is_heredoc and quoted.redirects[0].target.is_static
    open_, inner = split_command("cat <<EOF\n$(x) $y\nEOF")
    assert open_.redirects[0].target.runs_code
    assert open_.is_dynamic
    assert inner.argv == ("x",)  # what the substitution runs is a command of its own


@pytest.mark.parametrize(("word", "issue"), [
    ("$(x)", "command substitution $(x)"),
    ("`x`", "backtick command substitution `x`"),
    ("<(x)", "process substitution <(x)"),
    ("$HOME", "parameter expansion $HOME"),
    ("${a:-b}", "parameter expansion ${a:-b}"),
    ("$_", "parameter expansion $_"),
    ("$((1+2))", "arithmetic expansion $((1+2))"),
    ("*.py", "unquoted glob *.py"),
    ("a?", "unquoted glob a?"),
    ("{a,b}", "brace expansion {a,b}"),
    ("x{1..3}", "brace expansion {1..3}"),
    ("~root", "tilde expansion ~root"),
    ("!!", "! (history expansion) in !!"),
    ("\"$x\"", "parameter expansion $x"),
])
def test_dynamic_words(word: str, issue: str) -> None:
    cmd = split_command(f"echo {word}")[0]  # a substitution's own command follows
    assert cmd.is_dynamic
    assert issue in cmd.issues


@pytest.mark.parametrize("word", [
    "'$(x)'", "'*.py'", "\"*.py\"", "\\*", "'{a,b}'", "\\$HOME", "~", "~/x", "HEAD@{1}",
    "'!x'", "--x=y", "-", "\"\"",
])
def test_static_words(word: str) -> None:
    (cmd,) = split_command(f"echo {word}")
    assert not cmd.is_dynamic, cmd.issues


@pytest.mark.parametrize("command", [
    "echo \"unterminated",
    "echo 'unterminated",
    "ls &&",
    "ls |",
    "echo $(ls",
    "(ls",
    "if true; then ls",
    "ls \\",
    "echo \\ #; rm x",  # tree-sitter drops "\ " and reads a comment; bash runs rm
    "echo \t\n\\rm x",  # tree-sitter keeps the newline inside a word
    "cat a\\\nb",  # bash joins a\<newline>b into one word
    "echo }\\;x",  # tree-sitter splits one bash word in two
    "echo ;;",
    "echo hi 3<>f",
])
def test_parse_errors_are_reported(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.errors, parsed
    with pytest.raises(ShellParseError) as info:
        split_command(command)
    assert info.value.errors == parsed.errors
    assert subcommand_strings(command) is None


def test_constructs_are_recorded() -> None:
    kinds = {c.kind for c in parse_command("f(){ a; }; (b) & for x in y; do c; done").constructs}
    assert {"function", "subshell", "background", "for"} <= kinds


def test_status_command_is_the_last_of_the_list() -> None:
    assert parse_command("a && b | c").status_command.argv == ("c",)
    assert parse_command("a; (b; c)").status_command.argv == ("c",)
    assert parse_command("a | b > /dev/null").status_command.argv == ("b",)
    assert parse_command("! a").status_command is None
    assert parse_command("a &").status_command is None


@pytest.mark.parametrize(("command", "expected"), [
    ("git status && git log --oneline", ["git status", "git log --oneline"]),
    ("FOO=1 ls 'a b' 2>/dev/null | wc", ["FOO=1 ls 'a b'", "wc"]),
    ("cd x && ls \\\n -la", ["cd x", "ls -la"]),
    ("(a; b) & c", ["a", "b", "c"]),
    ("", []),
])
def test_subcommand_strings(command: str, expected: list[str]) -> None:
    assert subcommand_strings(command) == expected


@pytest.mark.parametrize("command", [
    "echo $(rm x)", "ls `id`", "diff <(a) b", "f() { a; }", "if a; then b; fi",
    "for a in b; do c; done", "cat <<EOF\n$(x)\nEOF",
])
def test_subcommand_strings_refuses_what_it_cannot_split(command: str) -> None:
    assert subcommand_strings(command) is None


@pytest.mark.parametrize(("command", "safe_only", "expected"), [
    ("FOO=1 BAR=\"a b\" npm test", False, "npm test"),
    ("NODE_ENV=production LANG=C npm test", True, "npm test"),
    ("NODE_ENV=production EVIL=1 npm test", True, "EVIL=1 npm test"),
    ("LANG=\"C\" ls", True, "LANG=\"C\" ls"),
    ("ls", False, "ls"),
    ("FOO=1", False, "FOO=1"),
    ("A=1 ls && B=2 ls", False, "A=1 ls && B=2 ls"),
])
def test_strip_env_prefix(command: str, safe_only: bool, expected: str) -> None:
    assert strip_env_prefix(command, safe_only=safe_only) == expected


@pytest.mark.parametrize(("command", "expected"), [
    ("timeout 10 npm test", "npm test"),
    ("timeout -s KILL --preserve-status 5m make", "make"),
    ("time -p ls -la", "ls -la"),
    ("nice -n 10 nohup stdbuf -oL grep x f", "grep x f"),
    ("nice -5 ls", "ls"),
    ("nohup ./server", "./server"),
    ("timeout npm test", "timeout npm test"),  # no duration: not the wrapper form
    ("time -o f ls", "time -o f ls"),
    ("timeout 5", "timeout 5"),
    ("ls", "ls"),
])
def test_strip_wrappers(command: str, expected: str) -> None:
    assert strip_wrappers(command) == expected


def test_wrapper_prefix_len() -> None:
    assert wrapper_prefix_len(["timeout", "5", "nice", "ls"]) == 3
    assert wrapper_prefix_len(["ls"]) == 0
    assert wrapper_prefix_len(["timeout", "-x", "5", "ls"]) is None


def test_non_ascii_offsets() -> None:
    command = "echo 'é' && cat ünï.txt"
    first, second = split_command(command)
    assert second.argv == ("cat", "ünï.txt")
    assert command[second.start:second.end] == "cat ünï.txt"
    assert subcommand_strings(command) == ["echo 'é'", "cat ünï.txt"]


def test_parse_is_cached_and_immutable() -> None:
    assert parse_command("ls -la") is parse_command("ls -la")
    with pytest.raises(AttributeError):
        parse_command("ls").commands[0].words = ()  # type: ignore[misc]


def test_the_package_imports_nothing_else_from_nbtoolsched() -> None:
    """A pure layer: importable with an empty parent package, taking only the errors."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "import sys, types\n"
        "pkg = types.ModuleType('nbtoolsched'); pkg.__path__ = ['nbtoolsched']\n"
        "sys.modules['nbtoolsched'] = pkg\n"
        "import nbtoolsched.shell\n"
        "print(sorted(m for m in sys.modules if m.startswith('nbtoolsched.')"
        " and not m.startswith('nbtoolsched.shell')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "['nbtoolsched._errors']"


@pytest.mark.heavy  # a subprocess that imports the package
def test_code_points_that_crash_tree_sitter_bash_are_harmless() -> None:
    """"{" then a plane-16 character segfaults tree-sitter-bash 0.25 (nondeterministically).

    The parser only ever sees an ASCII copy; run in a child so a crash fails one test.
    """
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "from nbtoolsched.shell._parse import _parse\n"
        "for cp in (0xEFFFF, 0xFFFFF, 0x100000, 0x10F18A, 0x10FFFF):\n"
        "    for _ in range(200):\n"
        "        _parse('{' + chr(cp)); _parse('{{' + chr(cp) + ' x')\n"
        "print(_parse('echo {' + chr(0x10FFFF)).commands[0].argv[1] == '{' + chr(0x10FFFF))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize(("command", "values"), [
    ("cat café.txt", ["cat", "café.txt"]),
    ("echo ☃ && ls 日本", ["echo", "☃", "ls", "日本"]),
    ("grep 'ü' \"ö$x\"", ["grep", "ü", "ö$x"]),
])
def test_non_ascii_values_come_from_the_original_text(command: str, values: list[str]) -> None:
    words = [w for cmd in split_command(command) for w in cmd.words]
    assert [w.value for w in words] == values
    assert all(command[w.start:w.end] == w.text for w in words)


# -- bounds: the analysis runs on the event loop -----------------------------------------------


def test_a_command_longer_than_the_bound_is_not_analysed() -> None:
    from nbtoolsched.shell._parse import MAX_COMMAND_CHARS
    from nbtoolsched.shell._readonly import analyze

    command = "echo " + "a" * MAX_COMMAND_CHARS
    assert "not analysed" in parse_command(command).errors[0]
    assert subcommand_strings(command) is None
    verdict = analyze(command)
    assert not verdict.read_only and "not analysed" in verdict.reason


@pytest.mark.parametrize("command", [
    "true;" * 1001,
    "".join(f"cat <<E{i}\nx\nE{i}\n" for i in range(1001)),
    "cat" + " < a" * 1001,
    "echo" + " a" * 10_001,
])
def test_more_simple_commands_or_heredocs_than_the_bound_are_not_analysed(command: str) -> None:
    errors = parse_command(command).errors
    assert errors and "not analysed" in errors[0]


def test_many_heredocs_below_the_bound_are_each_read() -> None:
    command = "".join(f"cat <<E{i}\nline {i}\nE{i}\n" for i in range(900))
    parsed = parse_command(command)
    assert parsed.ok and len(parsed.commands) == 900
    assert parsed.commands[-1].redirects[0].target.value == "line 899\n"


def test_a_stray_heredoc_operator_among_many_literal_spans_is_found() -> None:
    # Many quoted "<<" (literal spans), then one the parser reads as a test operator.
    command = "echo " + " ".join("'<<'" for _ in range(500)) + "; [ x <<EOF ]\nrm -rf x\nEOF"
    assert any("heredoc" in e for e in parse_command(command).errors)


@settings(deadline=None, max_examples=200)
@given(
    text=st.text(alphabet="<\\ x", max_size=40),
    spans=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 12)), max_size=8),
)
def test_operator_coverage_check_agrees_with_its_definition(text: str, spans: list[tuple[int, int]]) -> None:
    from nbtoolsched.shell._heredoc import HeredocError
    from nbtoolsched.shell._parse import _backslashes_before, _every_operator_is_known

    literal = [(start, start + size) for start, size in spans]
    expected = all(
        _backslashes_before(text, pos) % 2 or any(start <= pos < end for start, end in literal)
        for pos in range(len(text) - 1) if text.startswith("<<", pos)
    )
    try:
        _every_operator_is_known(text, literal)
        found = True
    except HeredocError:
        found = False
    assert found == expected
