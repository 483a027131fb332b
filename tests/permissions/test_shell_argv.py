"""Deny and ask rules on what a command runs (argv), however it is spelled, and hook
``if`` conditions on the same; the rule matcher against words the shell computes."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtoolsched.permissions._engine import Permissions
from nbtoolsched.permissions._matching import shell_rule_may_run
from nbtoolsched.permissions._rules import make_rule
from nbtoolsched.permissions._shell_rules import compile_shell_pattern
from nbtoolsched.shell._invocations import command_line

from .toolbox import TOOLS, outcome

DENY_RM = ("Bash(rm:*)",)


@pytest.mark.parametrize("command", [
    "sh -c 'rm -rf victim'",
    "bash -lc \"eval 'rm -rf victim'\"",
    "echo $(rm -rf victim)",
    "echo \"${x:-$(rm -rf victim)}\"",
    "cat <(rm -rf victim)",
    "find . -name '*.o' -exec rm {} +",
    "sudo -u root LANG=C rm -rf victim",
    "timeout --sig=KILL 5 rm -rf victim",
    "env -i A=1 nice -n 5 nohup /usr/bin/rm -rf victim",
    "builtin command exec rm -rf victim",
    "trap 'rm -rf victim' EXIT",
    "f() { rm -rf victim; }; f",
    "time -p rm victim",
    "xargs -0 -I{} rm {} < list",
    "busybox rm -rf victim",
])
@pytest.mark.parametrize("setup", [{"mode": "bypassPermissions"}, {"allow": ("Bash",)}], ids=["bypass", "allow-all"])
async def test_a_deny_rule_holds_through_runners_strings_and_substitutions(project, command, setup):
    proj, _ = project
    perms = Permissions(setup.get("mode", "default"), allow=setup.get("allow", ()), deny=DENY_RM, cwd=proj)
    got, decision = await outcome(perms, "Bash", {"command": command}, str(proj))
    assert got == "deny", decision


@pytest.mark.parametrize(("command", "deny"), [
    ("$cmd -rf victim", "Bash(rm:*)"),  # the shell computes the program
    ("bash script.sh", "Bash(rm:*)"),  # a script the rules cannot see
    ("echo rm -rf victim | sh", "Bash(rm:*)"),
    ("env -S 'rm -rf victim'", "Bash(rm:*)"),
    ("env --split='rm -rf victim'", "Bash(rm:*)"),  # an abbreviation of --split-string
    ("sh -c \"$CODE\"", "Bash(rm:*)"),
    ("shopt -s expand_aliases\nalias ls=rm\nls -rf victim", "Bash(rm:*)"),
    ("hash -p /bin/rm ls; ls -rf victim", "Bash(rm:*)"),
    ("git push $FLAGS origin", "Bash(git push --force:*)"),  # $FLAGS may be --force
    ("git $SUB --force", "Bash(git push --force:*)"),
    ("find . $ACTION", "Bash(rm:*)"),  # $ACTION may be "-exec rm {} ;"
    ("xargs -I{} {} victim < list", "Bash(rm:*)"),  # the input names the program
    ("command " * 40 + "rm -rf victim", "Bash(rm:*)"),
])
async def test_a_command_that_may_run_what_a_deny_rule_names_asks_even_in_bypass_mode(project, command, deny):
    proj, _ = project
    perms = Permissions("bypassPermissions", deny=(deny,), cwd=proj)
    got, _ = await outcome(perms, "Bash", {"command": command}, str(proj))
    asked = perms.explain(TOOLS["Bash"], {"command": command}).decision
    assert got == "ask", asked
    assert asked.reason is not None and asked.reason.kind == "safety_check", asked


@pytest.mark.parametrize("command", [
    "command -v rm", "ls -la", "echo rm -rf victim", "git push origin", "git log $REF", "rmdir $D",
    "find . -name '*.py' -print", "printf '%s\\n' \"$x\"",
])
async def test_commands_that_cannot_run_what_the_rules_name_are_unaffected(project, command):
    proj, _ = project
    perms = Permissions("bypassPermissions", deny=("Bash(rm:*)", "Bash(git push --force:*)"), cwd=proj)
    got, decision = await outcome(perms, "Bash", {"command": command}, str(proj))
    assert got == "allow", decision


async def test_without_deny_or_ask_rules_a_computed_program_is_left_to_the_mode(project):
    proj, _ = project
    got, _ = await outcome(Permissions("bypassPermissions", cwd=proj), "Bash", {"command": "$cmd x"}, str(proj))
    assert got == "allow"


async def test_an_ask_rule_holds_through_a_runner(project):
    proj, _ = project
    perms = Permissions("bypassPermissions", ask=("Bash(git push:*)",), cwd=proj)
    got, _ = await outcome(perms, "Bash", {"command": "command git push"}, str(proj))
    asked = perms.explain(TOOLS["Bash"], {"command": "command git push"}).decision
    assert got == "ask" and asked.reason is not None and asked.reason.kind == "rule"


@pytest.mark.parametrize(("command", "fires"), [
    ('"rm" -rf victim', True), ("command rm x", True), ("env -i rm x", True), ("xargs rm < list", True),
    ("sh -c 'rm x'", True), ("$prog x", True), ("ls; rm x", True), ("ls -la", False), ("echo rm", False),
])
def test_hook_if_conditions_see_the_same_argv(command, fires):
    rule = make_rule("Bash(rm:*)", "ask", source="test")
    assert shell_rule_may_run(rule, command) is fires


# -- the matcher, with words the shell computes ---------------------------------------------

RULES = ["rm:*", "git push --force:*", "rm -rf victim", "rm * victim", "git *", "npm run *:*", "a b"]
WORDS = st.lists(st.sampled_from(["rm", "-rf", "victim", "git", "push", "--force", "a", "b", "xargs", None]),
                 min_size=1, max_size=5).filter(lambda w: w[0] is not None and w.count(None) <= 3)
FILLINGS = ["", "a", "b", "rm", "-rf", "push", "--force", "victim", "a b", "push --force", "rm -rf"]


@settings(deadline=None, max_examples=300)
@given(st.sampled_from(RULES), WORDS)
def test_the_verdict_on_computed_words_agrees_with_every_value_they_may_take(rule, words):
    pattern = compile_shell_pattern(rule)
    verdict = pattern.verdict(words)
    holes = [i for i, w in enumerate(words) if w is None]
    results = []
    for values in itertools.product(FILLINGS, repeat=len(holes)):
        filled = dict(zip(holes, values))
        concrete = [part for i, w in enumerate(words) for part in (filled[i].split() if w is None else [w])]
        results.append(pattern.matches(" ".join(concrete)))
    if any(results):
        assert verdict is not None, (rule, words)
    if verdict == "match":
        assert all(results), (rule, words)


def test_invocations_peel_quotes_paths_and_runners():
    line = command_line("env -i A=1 \"/usr/bin/r\"'m' -rf x | xargs -n1 sh -c 'rm \"$1\"' _")
    words = {inv.words for inv in line.invocations}
    assert ("rm", "-rf", "x") in words
    assert ("rm", None) in words  # sh -c's "$1" is computed
    assert line.problems == ()
