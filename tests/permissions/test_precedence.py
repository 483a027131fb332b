"""The Bash check's precedence: one ordered list of named steps, and what its shape promises.

Denies first, then the asks that hold in every mode, then autoAllowBashIfSandboxed, then
plain asks and allows; several asks combine into an ask, never an allow; explain() names
the step that decided.
"""

from __future__ import annotations

import dataclasses
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched.permissions import _shell_check
from nbtoolsched.permissions._shell_check import KINDS, STEPS, Step
from nbtoolsched.tools import BashTool


@pytest.fixture(autouse=True)
def _no_sandbox(monkeypatch):
    monkeypatch.setenv("NBTOOLSCHED_SANDBOX", "off")  # the parse's precedence, not the kernel's


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".env").write_text("TOKEN=1\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("print(1)\n")
    return root


def test_the_steps_come_in_the_order_of_their_kinds():
    ranks = [KINDS.index(step.kind) for step in STEPS]
    assert ranks == sorted(ranks)
    assert [s.kind for s in STEPS][0] == "bound" and STEPS[-1].name == "the parts' verdicts"
    assert len({s.name for s in STEPS}) == len(STEPS)


def test_a_list_out_of_order_is_refused():
    ask_first = (dataclasses.replace(STEPS[7], kind="held ask"), dataclasses.replace(STEPS[1], kind="deny"))
    with pytest.raises(ValueError, match="denies, held asks"):
        _shell_check._check_order(ask_first)
    assert _shell_check._check_order(STEPS) is STEPS


@pytest.mark.parametrize("command, mode, behavior, step", [
    ("cat .env", "default", "deny", "a part denied"),
    ("ls && rm -rf /", "default", "deny", "a deny rule on a program the line runs"),
    ("echo x > .git/hooks/pre-commit", "bypassPermissions", "ask", "a redirection's safety check"),
    ("cd src && git status", "default", "ask", "the shape of the line"),
    ("git log --oneline", "default", "allow", "the parts' verdicts"),
    ("for f in *; do cat $f; done", "default", "ask", "the line cannot be split"),
    ('for d in 1; do cd "$D"; done; cat key.txt', "bypassPermissions", "ask", "relative names after a cd the shell decides"),
])
def test_explain_names_the_step_that_decided(repo, command, mode, behavior, step):
    perms = nts.Permissions(mode, cwd=repo, allow=["Bash(git log:*)"], deny=["Read(./.env)", "Bash(rm:*)"])
    explanation = perms.explain("Bash", {"command": command})
    assert explanation.behavior == behavior, explanation.steps
    shown = [s for s in explanation.steps if s.startswith("shell step ")]
    assert len(shown) == 1 and f", {step} (" in shown[0], explanation.steps


# Parts that each need a person in default mode (no rule allows them, none is read-only).
ASKING = ["npm install", "touch notes.txt", "python -c 'print(1)'", "curl -s example.com", "make build",
          "chmod +x run.sh", "rm -f build.log", "git commit -m wip"]
# Parts whose ask holds in every mode: they name a protected file or write a config place.
HELD = ["cat .env", "tee .claude/settings.json", "cp x .git/hooks/pre-commit", "sed -n p .env"]
JOINS = [" && ", " ; ", " || ", " | "]


@settings(max_examples=120, derandomize=True, deadline=None)
@given(parts=st.lists(st.sampled_from(ASKING + ["ls", "git status", "echo hi"]), min_size=2, max_size=4),
       joins=st.lists(st.sampled_from(JOINS), min_size=3, max_size=3))
def test_several_asks_never_combine_into_an_allow(repo, parts, joins):
    if not any(p in ASKING for p in parts):
        return
    line = parts[0] + "".join(j + p for j, p in zip(joins, parts[1:]))
    perms = nts.Permissions(cwd=repo, deny=["Read(./.env)"])
    assert perms.explain(BashTool(), {"command": line}).behavior == "ask", line


@settings(max_examples=120, derandomize=True, deadline=None)
@given(held=st.sampled_from(HELD), others=st.lists(st.sampled_from(ASKING + ["ls", "echo hi"]), max_size=3),
       where=st.integers(min_value=0, max_value=3), join=st.sampled_from(JOINS))
def test_an_ask_that_holds_in_every_mode_is_not_hidden_by_other_parts(repo, held, others, where, join):
    """In bypass mode a part that names a protected file or writes a config place still
    asks, whatever plain asks stand beside it and wherever it sits in the line."""
    parts = list(others)
    parts.insert(min(where, len(parts)), held)
    line = join.join(parts)
    perms = nts.Permissions("bypassPermissions", cwd=repo, deny=["Read(./.env)"])
    explanation = perms.explain(BashTool(), {"command": line})
    assert explanation.behavior in ("ask", "deny"), (line, explanation.steps)


def test_a_deny_beats_an_exact_ask_rule(repo):
    """Claude Code checks exact deny before exact ask; here every deny comes before every
    ask, so an ask rule on the whole line cannot hide a deny on what it runs."""
    perms = nts.Permissions(cwd=repo, ask=["Bash(echo hi && rm x)"], deny=["Bash(rm:*)"])
    assert perms.explain(BashTool(), {"command": "echo hi && rm x"}).behavior == "deny"


def test_every_step_can_be_reached_and_has_an_origin():
    assert all(isinstance(step, Step) and step.origin for step in STEPS)
    assert {"Claude Code", "ours"} <= {step.origin.split(":")[0] for step in STEPS}


def test_the_reference_page_lists_the_steps_as_the_code_has_them():
    """docs/bash-decisions.md shows the precedence as a table: it must be the list itself."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "bash-decisions.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1:5] for line in page.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert [(int(n), name.strip(), kind.strip(), origin.strip()) for n, name, kind, origin in rows] == [
        (i, s.name, s.kind, s.origin) for i, s in enumerate(STEPS, 1)]
