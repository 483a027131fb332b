""""Always allow": the narrowest rule first, never a prefix that runs anything, and rules
kept where Claude Code's "Yes, and don't ask again" keeps them (.claude/settings.local.json).

Real built-in tools (``nbtoolsched.default_registry()``), real ``Permissions``, real files
in ``tmp_path``; a hook is a real PythonHook fired by the gate.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import nbtoolsched as nts
from nbtoolsched._tool._decision import Decision
from nbtoolsched.internals import PythonHook
from nbtoolsched.permissions._approvals import ApprovalAnswer, ApprovalBroker, BrokerEvent, saved_rules_text
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched.permissions._rules import claude_code_rule_problem, parse_rule, rules_from_settings
from nbtoolsched.permissions._settings import save_local_rules
from nbtoolsched.permissions._shell_rules import compile_shell_pattern, prefix_problem
from nbtoolsched.permissions._suggestions import RuleChoices, readable, rule_choices
from nbtoolsched.shell import PROGRAMS, line_facts

from .toolbox import request_for

REGISTRY = nts.default_registry()
BASH, EDIT, WRITE = REGISTRY["Bash"], REGISTRY["Edit"], REGISTRY["Write"]
LOCAL = Path(".claude") / "settings.local.json"


class Asked:
    """An approver that gives one answer and keeps every request it was asked."""

    def __init__(self, answer: ApprovalAnswer | None = None) -> None:
        self.answer = answer or ApprovalAnswer.deny("not now")
        self.requests: list[nts.ApprovalRequest] = []

    async def __call__(self, request: nts.ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answer


class NeverAsked:
    async def __call__(self, request: nts.ApprovalRequest) -> ApprovalAnswer:
        raise AssertionError(f"asked about {request.input}: the saved rule should have allowed it")


def bash(command: str) -> dict[str, Any]:
    return {"command": command}


async def choices(perms: Permissions, tool: Any, data: dict[str, Any], cwd: Path) -> RuleChoices:
    """What the gate offers for this call, however its own check decided."""
    return await perms._choices(request_for(tool, data, str(cwd)), Decision.passthrough(), "default")


async def asked_about(tmp_path: Path, tool: Any, data: dict[str, Any]) -> nts.ApprovalRequest:
    """The request the approver sees for a call that asks (it is denied)."""
    approver = Asked()
    decision = await Permissions(cwd=tmp_path, approver=approver).decide(request_for(tool, data, str(tmp_path)))
    assert decision.behavior == "deny" and len(approver.requests) == 1
    return approver.requests[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("x = 1\n")
    (tmp_path / "notes.md").write_text("hi\n")
    return tmp_path.resolve()


@pytest.fixture
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("user-claude")  # no user settings: only the project's files count


# -- the order: the narrowest rule first, the whole tool last -------------------------------------
async def test_python_c_offers_the_command_itself_and_never_python_prefix(project):
    asked = await asked_about(project, BASH, bash("python -c 'print(1)'"))
    assert asked.suggested_rules == ("Bash(python -c 'print\\(1\\)')",)  # parentheses escaped as in Claude Code
    assert asked.alternatives == ("Bash",)  # no Bash(python:*): it would run any code


async def test_a_redirection_that_writes_gets_no_prefix_and_the_file_it_writes(project):
    asked = await asked_about(project, BASH, bash("echo hello > out.txt"))
    # The command alone would still ask (the redirection needs Edit permission): the set
    # that covers the call is the command and the file it writes.
    assert asked.suggested_rules == ("Bash(echo hello > out.txt)", "Edit(/out.txt)")
    assert asked.alternatives == ("Bash",)
    assert not any(":*" in rule for rule in (*asked.suggested_rules, *asked.alternatives))


@pytest.mark.parametrize(("command", "suggested", "alternatives"), [
    ("git log --oneline -3", ("Bash(git log --oneline -3)",), ("Bash(git log:*)", "Bash")),  # Claude Code's prefix second
    ("ls -la", ("Bash(ls -la)",), ("Bash(ls:*)", "Bash")),
    ("touch a.txt", ("Bash(touch a.txt)",), ("Bash(touch:*)", "Bash")),
    ("cd src && npm test", ("Bash(cd src && npm test)",), ("Bash(npm test:*)", "Bash")),  # the part that needs it
    ("ls *.py", ("Bash(ls \\\\*.py)",), ("Bash(ls:*)", "Bash")),  # the star escaped: an exact rule, no wildcard
    ("ls -la /etc", ("Bash(ls -la /etc)",), ("Bash",)),  # Bash(ls:*) would not cover a read outside
    ("FOO=1 npm test", ("Bash(FOO=1 npm test)",), ("Bash",)),  # Bash(npm test:*) never matches FOO=1 npm test
    ("npm test\nnpm run build", ("Bash(npm test:*)", "Bash(npm run:*)"), ("Bash",)),  # no exact rule for two lines
])
async def test_shell_suggestions_narrow_to_broad(project, command, suggested, alternatives):
    found = await choices(Permissions(cwd=project), BASH, bash(command), project)
    assert (found.suggested, found.alternatives) == (suggested, alternatives)


async def test_an_edit_inside_a_folder_offers_the_file_then_the_folder_then_edit(project):
    asked = await asked_about(project, EDIT, {"file_path": "src/util.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert (asked.suggested_rules, asked.alternatives) == (("Edit(src/util.py)",), ("Edit(src/**)", "Edit"))


async def test_an_edit_at_the_top_offers_the_file_anchored_to_the_project(project):
    asked = await asked_about(project, WRITE, {"file_path": "notes.md", "content": "new\n"})
    assert (asked.suggested_rules, asked.alternatives) == (("Edit(/notes.md)",), ("Edit",))
    # Edit(notes.md) would also match src/notes.md; the anchored rule does not.
    perms = Permissions(cwd=project, allow=["Edit(/notes.md)"], approver=Asked())
    assert (await perms.decide(request_for(WRITE, {"file_path": "notes.md", "content": "x"}, str(project)))).behavior == "allow"
    assert (await perms.decide(request_for(WRITE, {"file_path": "src/notes.md", "content": "x"}, str(project)))).behavior == "deny"


async def test_an_edit_outside_the_project_is_named_from_the_root(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere").resolve()
    found = await choices(Permissions(cwd=project), WRITE, {"file_path": str(outside / "a.txt"), "content": "x"}, project)
    assert found.suggested == (f"Edit(/{outside}/a.txt)",)
    assert found.alternatives == (f"Edit(/{outside}/**)", "Edit")


async def test_webfetch_offers_the_domain_and_the_whole_tool_only_as_the_broadest_choice(project):
    fetch = REGISTRY["WebFetch"]
    found = await choices(Permissions(cwd=project), fetch, {"url": "https://example.com", "prompt": "read"}, project)
    assert (found.suggested, found.alternatives) == (("WebFetch(domain:example.com)",), ("WebFetch",))


# -- never a prefix that lets a program run anything ------------------------------------------------
@pytest.mark.parametrize("command", [
    "python -c 'print(1)'", "python3 script.py", "python3.12 -m http.server", "/usr/bin/python3 x.py", "node -e 1",
    "bash -c 'ls'", "sh -c ls", "zsh x.sh", "perl -e 1", "ruby -e 1", "env X=1 ls", "env ls", "xargs rm", "sudo ls",
    "timeout 5 python -c 1", "nice -n 5 node x.js", "find . -name x -exec rm {} +", "eval ls", "ssh host ls",
    "uv run pytest", "npx cowsay hi", "awk '{print}' f", "git -c core.pager=x log", "source env.sh",
])
async def test_no_prefix_is_offered_for_a_program_that_runs_code(project, command):
    found = await choices(Permissions(cwd=project), BASH, bash(command), project)
    offered = (*found.suggested, *found.alternatives)
    assert not [rule for rule in offered if rule.endswith(":*)")], offered
    assert offered[-1] == "Bash"


def test_the_program_table_decides_which_runners_get_no_prefix():
    runners = [name for name, row in PROGRAMS.items() if row.runs is not None]
    assert {"env", "xargs", "sudo", "timeout", "find", "sh", "bash", "eval", "ssh"} <= set(runners)
    assert all(prefix_problem(name) is not None for name in runners)
    assert prefix_problem("git") is not None and prefix_problem("git log") is None  # git alone has -c and --exec
    assert prefix_problem("ls") is None and prefix_problem("npm test") is None


# -- labels a person can read ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "ls\u00a0-la", "echo\u00a0hi > out.txt", "git\u2009log", "rm\u200b -rf x", "printf 'a\tb'", "ls -la", "git log -3",
    "touch a.txt", "python -c 'print(1)'",
])
async def test_no_rule_label_holds_a_non_breaking_or_invisible_space(project, command):
    found = await choices(Permissions(cwd=project), BASH, bash(command), project)
    for rule in (*found.suggested, *found.alternatives):
        assert "\u00a0" not in rule
        assert all(c == " " or not unicodedata.category(c).startswith("Z") for c in rule), repr(rule)
        assert readable(rule)
    if "\u00a0" in command:
        assert found.suggested == ()  # nothing it could save would read as what it allows


# -- saving where Claude Code saves it ----------------------------------------------------------------
async def test_always_allow_to_local_settings_creates_the_file_and_the_rule_loads_back(project, user_dir):
    approver = Asked(ApprovalAnswer.allow_always(destination="localSettings"))
    perms = Permissions.from_settings(project, user_dir, approver=approver)
    decision = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project)))
    assert decision.behavior == "allow"
    assert decision.reason.detail == "approved by the user; saved Bash(touch a.txt) to .claude/settings.local.json"
    assert json.loads((project / LOCAL).read_text()) == {"permissions": {"allow": ["Bash(touch a.txt)"]}}
    assert [p.name for p in (project / ".claude").iterdir()] == ["settings.local.json"]  # no temporary file left
    again = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project), tool_use_id="t2"))
    assert again.behavior == "allow" and again.reason.source == "session"  # the session rule too
    fresh = Permissions.from_settings(project, user_dir, approver=NeverAsked())
    loaded = await fresh.decide(request_for(BASH, bash("touch a.txt"), str(project), tool_use_id="t3"))
    assert loaded.behavior == "allow" and loaded.reason.source == str(project / LOCAL)
    assert fresh.load_warnings == []
    other = await Permissions.from_settings(project, user_dir, approver=Asked()).decide(
        request_for(BASH, bash("touch b.txt"), str(project), tool_use_id="t4"))
    assert other.behavior == "deny"  # the exact command, not every touch


async def test_the_command_and_the_file_it_writes_load_back_together(project, user_dir):
    sched = nts.Scheduler(REGISTRY, permissions=Permissions.from_settings(
        project, user_dir, approver=Asked(ApprovalAnswer.allow_always(destination="localSettings"))), cwd=project)
    (result,) = await sched.run([{"type": "tool_use", "id": "b1", "name": "Bash", "input": bash("echo hello > out.txt")}])
    assert not result.is_error and (project / "out.txt").read_text() == "hello\n"
    assert json.loads((project / LOCAL).read_text())["permissions"]["allow"] == ["Bash(echo hello > out.txt)", "Edit(/out.txt)"]
    fresh = Permissions.from_settings(project, user_dir, approver=NeverAsked())
    assert (await fresh.decide(request_for(BASH, bash("echo hello > out.txt"), str(project)))).behavior == "allow"


async def test_saving_merges_into_the_file_and_writes_no_rule_twice(project):
    (project / ".claude").mkdir()
    before = {"env": {"FOO": "1"}, "permissions": {"allow": ["Bash(ls:*)", "Bash(touch a.txt)"], "deny": ["Bash(rm:*)"],
                                                   "defaultMode": "default"}, "hooks": {}}
    (project / LOCAL).write_text(json.dumps(before))
    approver = Asked(ApprovalAnswer.allow_always(["Bash(touch a.txt)", "Bash(touch:*)"], destination="localSettings"))
    perms = Permissions(cwd=project, approver=approver)  # the file not loaded: its rule would allow the call unasked
    decision = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project)))
    assert decision.behavior == "allow" and approver.requests
    after = json.loads((project / LOCAL).read_text())
    assert after == {**before, "permissions": {**before["permissions"], "allow": ["Bash(ls:*)", "Bash(touch a.txt)", "Bash(touch:*)"]}}
    assert decision.reason.detail == ("approved by the user; saved Bash(touch a.txt), Bash(touch:*) to .claude/settings.local.json "
                                      "(Bash(touch a.txt) was already there)")


async def test_a_file_that_is_not_valid_json_is_kept_and_the_call_allowed_for_the_session(project):
    (project / ".claude").mkdir()
    broken = '{\n  "permissions": {\n    "allow": [oops]\n  }\n}\n'
    (project / LOCAL).write_text(broken)
    perms = Permissions(cwd=project, approver=Asked(ApprovalAnswer.allow_always(destination="localSettings")))
    decision = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project)))
    assert decision.behavior == "allow"
    assert decision.reason.detail == ("approved by the user; could not save Bash(touch a.txt) to .claude/settings.local.json "
                                      "(its JSON is invalid at line 3): allowed for this session only")
    assert (project / LOCAL).read_text() == broken
    assert [p.name for p in (project / ".claude").iterdir()] == ["settings.local.json"]
    perms.approver = NeverAsked()
    again = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project), tool_use_id="t2"))
    assert again.behavior == "allow" and again.reason.source == "session"


@pytest.mark.parametrize(("content", "why"), [
    ('{"permissions": {"allow": "Bash(ls)"}}', "its permissions.allow is not a list"),
    ('{"permissions": ["Bash(ls)"]}', "its permissions is not an object"),
    ('["Bash(ls)"]', "it does not hold a JSON object"),
])
def test_a_file_that_is_not_settings_is_left_untouched(tmp_path, content, why):
    (tmp_path / ".claude").mkdir()
    (tmp_path / LOCAL).write_text(content)
    saved = save_local_rules(tmp_path, ["Bash(touch a.txt)"])
    assert saved.error == why and saved.added == ()
    assert (tmp_path / LOCAL).read_text() == content
    assert saved.text == f"could not save Bash(touch a.txt) to .claude/settings.local.json ({why}): allowed for this session only"


def test_a_link_in_place_of_the_file_is_not_written_through(tmp_path):
    (tmp_path / ".claude").mkdir()
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (tmp_path / LOCAL).symlink_to(target)
    saved = save_local_rules(tmp_path, ["Bash(ls)"])
    assert saved.error is not None and "link" in saved.error
    assert target.read_text() == "{}" and (tmp_path / LOCAL).is_symlink()


def test_a_rule_already_saved_is_not_written_again(tmp_path):
    first = save_local_rules(tmp_path, ["Bash(ls)"])
    stamp = (tmp_path / LOCAL).stat().st_mtime_ns
    second = save_local_rules(tmp_path, ["Bash(ls)"])
    assert first.added == ("Bash(ls)",) and second.added == () and second.already == ("Bash(ls)",)
    assert (tmp_path / LOCAL).stat().st_mtime_ns == stamp
    assert json.loads((tmp_path / LOCAL).read_text()) == {"permissions": {"allow": ["Bash(ls)"]}}


async def test_the_broker_tells_its_observers_what_was_saved(project):
    broker = ApprovalBroker("interactive")
    events: list[BrokerEvent] = []
    broker.subscribe(events.append)
    broker.subscribe(lambda e: e.kind == "added" and broker.answer(e.request.tool_use_id, ApprovalAnswer.allow_always(destination="localSettings")))
    sched = nts.Scheduler(REGISTRY, permissions=Permissions(cwd=project, approver=broker), cwd=project)
    (result,) = await sched.run([{"type": "tool_use", "id": "b1", "name": "Bash", "input": bash("touch a.txt")}])
    assert not result.is_error and (project / "a.txt").exists()
    assert [e.kind for e in events] == ["added", "answered", "saved"]
    assert events[-1].note == "saved Bash(touch a.txt) to .claude/settings.local.json"


async def test_a_session_answer_writes_no_file(project):
    perms = Permissions(cwd=project, approver=Asked(ApprovalAnswer.allow_always()))
    decision = await perms.decide(request_for(BASH, bash("touch a.txt"), str(project)))
    assert decision.reason.detail == "approved by the user; saved Bash(touch a.txt) for this session"
    assert not (project / ".claude").exists()


async def test_nothing_is_saved_when_no_rule_names_the_call(project):
    perms = Permissions(cwd=project, approver=Asked(ApprovalAnswer.allow_always(destination="localSettings")))
    decision = await perms.decide(request_for(BASH, bash("ls\u00a0-la"), str(project)))
    assert decision.behavior == "allow" and "no rule was saved" in decision.reason.detail
    assert not (project / ".claude").exists()
    assert [r.text for r in perms.rules.rules] == []  # and above all not the whole tool


def test_saved_rules_text_words_each_outcome():
    assert saved_rules_text(["Bash(x)"]) == "saved Bash(x) for this session"
    assert saved_rules_text(["Bash(x)", "Edit(/f)"], "localSettings") == "saved Bash(x), Edit(/f) to .claude/settings.local.json"
    assert saved_rules_text(["Bash(x)"], "localSettings", error="its JSON is invalid at line 3") == (
        "could not save Bash(x) to .claude/settings.local.json (its JSON is invalid at line 3): allowed for this session only")
    with pytest.raises(ValueError, match="destination"):
        saved_rules_text(["Bash(x)"], "projectSettings")


# -- the answer's destination ---------------------------------------------------------------------------
def test_the_destination_round_trips_and_a_bad_one_is_refused():
    answer = ApprovalAnswer.allow_always(["Bash(ls)"], "ok", destination="localSettings")
    assert answer.to_dict()["destination"] == "localSettings"
    assert ApprovalAnswer.from_dict(answer.to_dict()) == answer
    assert ApprovalAnswer.from_dict({"kind": "allow_always", "rules": ["Bash(ls)"]}).destination == "session"
    assert ApprovalAnswer.from_dict(ApprovalAnswer.allow().to_dict()) == ApprovalAnswer.allow()
    with pytest.raises(ValueError, match="destination must be one of session, localSettings, not 'userSettings'"):
        ApprovalAnswer.allow_always(destination="userSettings")
    with pytest.raises(ValueError, match="destination"):
        ApprovalAnswer.from_dict({"kind": "allow_always", "destination": "nowhere"})


# -- PermissionRequest hooks are offered the same rules ---------------------------------------------
async def test_permission_request_hooks_get_the_suggested_rules(project):
    seen: list[Any] = []

    def hook(payload: dict[str, Any]) -> dict[str, Any]:
        seen.append(payload["permission_suggestions"])
        return {}  # no decision: the person is asked

    hooks = nts.Hooks()
    hooks.add("PermissionRequest", PythonHook(hook, name="watcher"), "Bash")
    approver = Asked()
    perms = Permissions(cwd=project, approver=approver, hooks=hooks)
    await perms.decide(request_for(BASH, bash("echo hello > out.txt"), str(project)))
    (asked,) = approver.requests
    assert seen == [[{"type": "addRules", "rules": [{"toolName": parse_rule(r).tool, "ruleContent": parse_rule(r).content}],
                      "behavior": "allow", "destination": "localSettings"} for r in asked.suggested_rules]]
    assert seen[0][0]["rules"] == [{"toolName": "Bash", "ruleContent": "echo hello > out.txt"}]


# -- a property: the first suggestion names the command, exactly -----------------------------------
_WORD = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="\\"), min_size=1, max_size=8)
_COMMANDS = st.lists(_WORD, min_size=1, max_size=5).map(" ".join) | st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), min_size=1, max_size=30)


@given(_COMMANDS)
def test_the_first_suggestion_matches_its_command_exactly_when_loaded_back(command):
    found = rule_choices(BASH, {"command": command}, "/")
    assert all(readable(rule) and claude_code_rule_problem(rule) is None for rule in (*found.suggested, *found.alternatives))
    if not command.strip() or not readable(command.strip()) or "\\*" in command:
        return  # no exact rule can name it (nor read as it): whatever is offered is checked above
    (first, *_) = found.suggested
    loaded = rules_from_settings([first], "allow", source="localSettings", root="/", origin="settings.local.json", problems=[])
    assert [rule.text for rule in loaded] == [first]  # the settings loader keeps it as it is
    pattern = compile_shell_pattern(loaded[0].value.content)
    assert pattern.kind == "exact" and pattern.text == command.strip()
    assert pattern.matches(line_facts(command.strip(), "/").allow_forms[0])


def test_a_command_with_a_backslash_star_still_gets_a_rule_that_matches_it():
    found = rule_choices(BASH, {"command": "echo 'a\\*b'"}, "/")
    assert found.suggested == ("Bash(echo:*)",)


def test_always_allowing_one_read_or_fetch_never_offers_the_whole_tool(tmp_path: Path) -> None:
    """An outside review saved `Read` for one Read of /etc/hostname; /etc/shadow then ran unasked."""
    from nbtoolsched.tools import GlobTool, GrepTool, ReadTool, WebFetchTool

    project = str(tmp_path)
    assert rule_choices(ReadTool(), {"file_path": "/etc/hostname"}, project).suggested == ("Read(//etc/**)",)
    assert rule_choices(GrepTool(), {"pattern": "x", "path": "/etc"}, project).suggested == ("Read(//etc/**)",)
    assert rule_choices(GlobTool(), {"pattern": "*", "path": "/usr/share"}, project).suggested == ("Read(//usr/share/**)",)
    assert rule_choices(ReadTool(), {"file_path": "/hostname"}, project).suggested == ()  # the whole disk: no rule
    assert rule_choices(WebFetchTool(), {"url": "https://docs.python.org/3/", "prompt": "p"}, project).suggested == (
        "WebFetch(domain:docs.python.org)",)
    for found in (rule_choices(ReadTool(), {"file_path": "/etc/hostname"}, project),
                  rule_choices(WebFetchTool(), {"url": "https://x.org", "prompt": "p"}, project)):
        assert "Read" not in found.suggested and "WebFetch" not in found.suggested
