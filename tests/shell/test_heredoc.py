"""Heredocs are read from the text as bash reads them, and checked against tree-sitter.

tree-sitter-bash starts an indented body after its blanks, with no expansion nodes, so
``cat <<EOF`` + `` $(touch x)`` looked read-only and bash ran the substitution. The
differential runs real bash (tests/shell/test_properties.py: every external command it
would run is recorded, none exists) on generated heredocs.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.shell._readonly import analyze
from nbtoolsched.shell._parse import parse_command
from nbtoolsched.shell._heredoc import HeredocError, body_expansions, read_body, read_delimiter

from .test_properties import _bash_runs, needs_bash

# Substitutions bash runs from an unquoted body, whatever the indentation.
HIDDEN = [
    "cat <<EOF\n $(touch PWNED)\nEOF",
    "grep x <<EOF\n\t`touch f`\nEOF",
    "cat <<-EOF\n\t$(touch f)\n\tEOF",
    "cat <<EOF\n  ${x:-$(touch f)}\nEOF",
    "cat <<EOF\n\n  $((1+$(touch f)))\nEOF",
    "cat <<EOF | wc -l\nplain\n   `touch f`\nEOF",
]
# Places where tree-sitter ends (or starts) a body where bash does not.
MISREAD = [
    "cat <<EOF\nx\n EOF\n$(touch f)\nEOF",  # "<<": an indented line is not the delimiter
    "cat <<-EOF\n  EOF\n$(touch f)\nEOF",  # "<<-" strips tabs, not spaces
    "cat <<EOF\nEOF \n$(touch f)\nEOF",  # trailing blank: not the delimiter
    "cat <<EOF\nfoo \\\nEOF\ncat '$(touch f)' <<EOF\nEOF",  # backslash-newline joins lines
    "cat <<A >/dev/null 3<<-B\na\nA\n\t$(touch f)\n\tB",  # two heredocs on one line
    "cat <<EOF\n $(touch f)",  # no delimiter line
]
# A heredoc tree-sitter takes for something else, parsing its body as commands.
UNSEEN = ["[ x <<ls ]\necho '$(touch f)'\nls", "[ x <<-ls ]\necho '$(touch f)'\nls"]


@pytest.mark.parametrize("command", HIDDEN + MISREAD + UNSEEN)
def test_substitutions_bash_runs_are_never_read_only(command: str) -> None:
    assert ("touch", "PWNED") in _bash_runs(command) or ("touch", "f") in _bash_runs(command)
    assert not analyze(command, use_cache=False).read_only, command


@pytest.mark.parametrize("command", HIDDEN)
def test_body_expansions_are_the_reason(command: str) -> None:
    verdict = analyze(command, use_cache=False)
    assert verdict.reason.startswith("heredoc body:"), verdict.reason
    assert not parse_command(command).errors


@pytest.mark.parametrize("command", MISREAD)
def test_disagreeing_with_tree_sitter_is_a_parse_error(command: str) -> None:
    assert any(error.startswith("heredoc:") for error in parse_command(command).errors)


def test_every_unquoted_heredoc_operator_must_be_a_node() -> None:
    from nbtoolsched.shell._parse import _every_operator_is_known

    with pytest.raises(HeredocError):
        _every_operator_is_known("[ x <<ls ]", [])
    _every_operator_is_known("echo 'a<<b' x\\<<y", [(5, 11)])  # quoted, escaped


@pytest.mark.parametrize("command", [
    "cat <<'EOF'\n  indented $(not run)\nEOF",
    "cat <<-'EOF'\n\t$(not run)\n\tEOF",
    'cat <<\\EOF\n `not run`\nEOF',
    'cat <<"EOF"\n\t${not:-run}\nEOF',
    "cat <<EOF\n\n  blank lines, then indentation\n\nEOF",
    "cat <<-EOF\n\t\tdeeper tabs\n\tEOF",
    "cat <<EOF | wc -l\n one\n two\nEOF",
    "cat <<EOF\n  cost: 5 \\$ and a \\` quote\nEOF",
])
def test_bodies_without_expansions_stay_read_only(command: str) -> None:
    assert analyze(command, use_cache=False).read_only, analyze(command).reason
    found = {cmd.argv for cmd in parse_command(command).commands}
    assert set(_bash_runs(command)) <= found


def test_the_body_value_is_what_bash_feeds_the_command() -> None:
    (cmd,) = parse_command("cat <<-EOF\n\t  a\n\t\tb\n\tEOF").commands
    (redirect,) = cmd.redirects
    assert redirect.target is not None and redirect.target.value == "  a\nb\n"


@pytest.mark.parametrize(("word", "delimiter", "quoted"), [
    ("EOF", "EOF", False), ("'EOF'", "EOF", True), ('"EOF"', "EOF", True),
    ("\\EOF", "EOF", True), ('E"O"F', "EOF", True), ("E'O F'", "EO F", True),
])
def test_delimiter_words(word: str, delimiter: str, quoted: bool) -> None:
    op = read_delimiter(f"<< {word}\n", 0)
    assert (op.delimiter, op.quoted, op.word_end) == (delimiter, quoted, 3 + len(word))


@pytest.mark.parametrize("word", ["''", "$X", "`x`", '"$X"', "'open"])
def test_delimiters_that_are_refused(word: str) -> None:
    with pytest.raises(HeredocError):
        read_delimiter(f"<<{word}\n", 0)


def test_body_expansions_respect_backslashes() -> None:
    assert body_expansions("\\$(x) \\`y\\`") == (None, False)
    assert body_expansions("\\\\$(x)")[1]
    assert body_expansions("$HOME") == ("parameter expansion $HOME", False)


def test_read_body_stops_at_the_exact_delimiter_line() -> None:
    text = "<<-EOF\n x\n EOF\n\tEOF\nafter"
    body = read_body(text, 7, read_delimiter(text, 0))
    assert text[body.start:body.end] == " x\n EOF\n"
    assert text[body.delimiter_start:body.delimiter_end] == "EOF"
    assert text[body.next:] == "after"


# ------------------------------------------------------------------- the differential
INDENT = st.text(alphabet=" \t", max_size=2)
DELIMITERS = st.sampled_from([
    ("EOF", "EOF"), ("'EOF'", "EOF"), ('"EOF"', "EOF"), ("\\EOF", "EOF"), ('E"O"F', "EOF"),
])
PIECES = st.sampled_from([
    "$(touch s1)", "`touch s2`", "${x:-$(touch s3)}", "$((1 + $(touch s4)))",
    "\\$(touch s5)", "\\\\$(touch s6)", "$x", "text", "'q'", '"dq"', "EOF", "\\", "#",
    "$", ")", "X",
])
LINES = st.lists(
    st.tuples(INDENT, st.lists(PIECES, max_size=3), st.sampled_from(["", "", " ", "\t"]))
    .map(lambda parts: parts[0] + " ".join(parts[1]) + parts[2]),
    max_size=4,
)
LINE_REST = st.sampled_from(["", "", " | cat", " > /dev/null", " # note", " && cat f", " <<'X'", " 2>&1"])
FOLLOW = st.sampled_from(["", "", "\ncat after", "\ncat $(touch s7)", "\n"])


@st.composite
def heredocs(draw: st.DrawFn) -> str:
    op = draw(st.sampled_from(["<<", "<<-"]))
    word, delimiter = draw(DELIMITERS)
    rest = draw(LINE_REST)
    text = f"cat {op}{draw(st.sampled_from(['', ' ']))}{word}{rest}\n"
    text += "".join(line + "\n" for line in draw(LINES)) + draw(INDENT) + delimiter
    if "<<" in rest:
        text += "\n" + "".join(line + "\n" for line in draw(LINES))
        text += draw(st.sampled_from(["X", "\tX", " X"]))
    return text + draw(FOLLOW)


@pytest.mark.heavy  # 300 examples, each compared with what a real bash runs
@needs_bash
@settings(max_examples=300, deadline=None)
@given(heredocs())
def test_bash_runs_nothing_the_analysis_did_not_find(command: str) -> None:
    parsed = parse_command(command)
    verdict = analyze(command, use_cache=False)
    runs = _bash_runs(command)
    if parsed.errors or any(cmd.is_dynamic for cmd in parsed.commands):
        assert not verdict.read_only, command
        return
    found = {cmd.argv for cmd in parsed.commands}
    for argv in runs:
        assert argv in found, (command, argv, found)


def test_heredocs_inside_strings_and_substitutions_are_checked_too() -> None:
    assert not parse_command('git commit -m "$(cat <<\'EOF\'\nmsg\nEOF\n)"').errors
    errors = parse_command('echo "$(cat <<EOF\nx\n EOF\nEOF\n)"; ls').errors
    assert any(error.startswith("heredoc:") for error in errors)
