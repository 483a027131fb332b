"""Rule strings: parsing, escaping, legacy names, matchers, and load-time examples."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbtoolsched.permissions._errors import PermissionConfigError
from nbtoolsched.permissions._rules import RuleValue, escape_rule_content, format_rule, make_rule, parse_rule, unescape_rule_content
from nbtoolsched.permissions._matching import shell_rule_matches
from nbtoolsched.permissions._path_patterns import compile_path_pattern
from nbtoolsched.permissions._shell_rules import compile_shell_pattern


@pytest.mark.parametrize(
    "text,tool,content",
    [
        ("Bash", "Bash", None),
        ("Bash()", "Bash", None),
        ("Bash(*)", "Bash", None),
        ("Bash(git log:*)", "Bash", "git log:*"),
        ("Bash(echo \\(hi\\))", "Bash", "echo (hi)"),
        ("Read(./secrets/**)", "Read", "./secrets/**"),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("mcp__github", "mcp__github", None),
        ("mcp__github__*", "mcp__github__*", None),
        ("Task", "Agent", None),
        ("KillShell", "TaskStop", None),
        ("BashOutputTool", "TaskOutput", None),
    ],
)
def test_parse(text, tool, content):
    assert parse_rule(text) == RuleValue(tool, content)


@pytest.mark.parametrize(
    "text",
    ["Bash(git log", "Bash git log)", "Bash(x) trailing", "(x)", "Bash(:*)", "WebFetch(example.com)",
     "mcp__github(x)", "Bash(x)(y", "Read([abc)", "Deploy__*", "", "two words"],
)
def test_malformed_rules_are_errors(text):
    with pytest.raises(PermissionConfigError) as err:
        make_rule(text, "allow", origin="settings.json")
    assert "settings.json" in str(err.value)


def test_non_string_rule_is_an_error():
    with pytest.raises(PermissionConfigError):
        make_rule(42, "deny")  # type: ignore[arg-type]


@given(st.text(alphabet=st.sampled_from(list("ab()\\* :")), max_size=30))
def test_escape_round_trip(content):
    assert unescape_rule_content(escape_rule_content(content)) == content


@given(st.text(alphabet=st.sampled_from(list("abc()\\ -:.")), min_size=1, max_size=20).filter(lambda s: s.strip() not in ("", "*")))
def test_format_parse_round_trip(content):
    value = RuleValue("Deploy", content)
    assert parse_rule(format_rule(value)) == RuleValue("Deploy", content.strip() and content)


def test_examples_checked_at_load():
    rule = make_rule({"rule": "Bash(git log:*)", "must_match": ["git log -p"], "must_not_match": ["git logx"]}, "allow")
    assert rule.must_match == ("git log -p",)
    with pytest.raises(PermissionConfigError, match="must_match"):
        make_rule({"rule": "Bash(git log:*)", "must_match": ["git status"]}, "allow")
    with pytest.raises(PermissionConfigError, match="must_not_match"):
        make_rule({"rule": "Bash(git *)", "must_not_match": ["git push"]}, "deny")
    with pytest.raises(PermissionConfigError, match="unknown keys"):
        make_rule({"rule": "Bash", "must_matches": []}, "deny")


def test_path_rule_examples(tmp_path):
    make_rule({"rule": "Read(/secrets/**)", "must_match": [str(tmp_path / "secrets/a/b")], "must_not_match": [str(tmp_path / "src/a")]}, "deny", root=str(tmp_path))
    make_rule({"rule": "WebFetch(domain:example.com)", "must_match": ["https://example.com/x"], "must_not_match": ["https://example.org"]}, "allow")
    # The examples are checked for these kinds too, so a wrong one is refused at load.
    with pytest.raises(PermissionConfigError, match="must_match"):
        make_rule({"rule": "Read(/secrets/**)", "must_match": [str(tmp_path / "src/a")]}, "deny", root=str(tmp_path))
    with pytest.raises(PermissionConfigError, match="must_not_match"):
        make_rule({"rule": "WebFetch(domain:example.com)", "must_not_match": ["https://example.com/y"]}, "allow")


@pytest.mark.parametrize(
    "pattern,command,matches",
    [
        ("git log:*", "git log", True),
        ("git log:*", "git log --all", True),
        ("git log:*", "git logx", False),
        ("git log:*", "xargs git log", True),
        ("git log:*", "xargs -n1 git log", False),
        ("npm *", "npm", True),
        ("npm *", "npmx", False),
        ("echo \\*", "echo *", True),
        ("echo \\*", "echo hi", False),
        ("a*b*c", "aXbYc", True),
        ("make", "make", True),
        ("make", "make all", False),
    ],
)
def test_shell_patterns(pattern, command, matches):
    assert compile_shell_pattern(pattern).matches(command) is matches


def test_prefix_allow_never_matches_a_compound_candidate():
    rule = make_rule("Bash(echo:*)", "allow")
    compound = lambda c: "&&" in c  # noqa: E731
    assert not shell_rule_matches(rule, ["echo hi && rm -rf /"], is_compound=compound)
    assert shell_rule_matches(make_rule("Bash(echo hi && ls)", "allow"), ["echo hi && ls"], is_compound=compound)
    assert shell_rule_matches(make_rule("Bash(echo:*)", "deny"), ["echo hi && rm -rf /"], is_compound=compound)


@pytest.mark.parametrize(
    "pattern,path,matches",
    [
        ("./secrets/**", "{cwd}/secrets/a.txt", True),
        ("./secrets/**", "{cwd}/secrets", True),
        ("./secrets/**", "{cwd}/src/secrets/a.txt", False),
        ("*.env", "{cwd}/a/b/.env", True),
        ("*.env", "{cwd}/a/b/env", False),
        ("src/**/*.py", "{cwd}/src/a/b/c.py", True),
        ("src/**/*.py", "{cwd}/src/c.py", True),
        ("src/**/*.py", "{cwd}/lib/src/c.py", False),
        ("//etc/passwd", "/etc/passwd", True),
        ("~/.ssh/**", "{home}/.ssh/id_rsa", True),
        ("/docs/*.md", "{settings}/docs/a.md", True),
        ("/docs/*.md", "{cwd}/docs/a.md", False),
        ("./x", "{cwd}/../x", False),
    ],
)
def test_path_patterns(pattern, path, matches, tmp_path):
    cwd, home, settings = str(tmp_path / "cwd"), str(tmp_path / "home"), str(tmp_path / "settings")
    compiled = compile_path_pattern(pattern, settings, cwd, home)
    target = os.path.normpath(path.format(cwd=cwd, home=home, settings=settings))
    assert compiled.matches(target) is matches
