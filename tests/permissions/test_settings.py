"""settings.json loading: the three files, precedence, and load-time errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nbtoolsched.permissions._errors import PermissionConfigError
from nbtoolsched.permissions._engine import Permissions
from nbtoolsched.permissions._settings import load_settings, settings_files

from .toolbox import outcome

HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def layout(tmp_path):
    proj, user = tmp_path / "proj", tmp_path / "home" / ".claude"
    proj.mkdir()
    user.mkdir(parents=True)
    return proj.resolve(), user


def test_file_locations(layout):
    proj, user = layout
    files = settings_files(proj, user)
    assert [f.source for f in files] == ["userSettings", "projectSettings", "localSettings"]
    assert files[0].path == user / "settings.json"
    assert files[1].path == proj / ".claude" / "settings.json"
    assert files[2].path == proj / ".claude" / "settings.local.json"


def test_user_dir_from_env(layout, monkeypatch):
    proj, user = layout
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    assert settings_files(proj)[0].path == user / "settings.json"


async def test_rules_add_up_and_most_specific_mode_wins(layout):
    proj, user = layout
    write(user / "settings.json", {"permissions": {"allow": ["Bash(npm test:*)"], "defaultMode": "plan"}})
    write(proj / ".claude/settings.json", {"permissions": {"deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits"}})
    write(proj / ".claude/settings.local.json", {"permissions": {"ask": ["Bash(git push:*)"], "defaultMode": "dontAsk"}})
    perms = Permissions.from_settings(proj, user)
    assert perms.mode == "dontAsk"
    assert len(perms.settings_files) == 3
    assert (await outcome(perms, "Bash", {"command": "npm test"}, str(proj)))[0] == "allow"
    got, decision = await outcome(perms, "Bash", {"command": "rm x"}, str(proj))
    assert got == "deny" and ".claude/settings.json" in decision.reason.source
    assert (await outcome(perms, "Bash", {"command": "git push"}, str(proj)))[0] == "deny"  # dontAsk


def test_mode_argument_overrides_files(layout):
    proj, user = layout
    write(proj / ".claude/settings.json", {"permissions": {"defaultMode": "plan"}})
    assert Permissions.from_settings(proj, user, mode="default").mode == "default"
    assert Permissions.from_settings(proj, user).mode == "plan"


async def test_a_deny_in_any_file_beats_an_allow_elsewhere(layout):
    proj, user = layout
    write(user / "settings.json", {"permissions": {"deny": ["Deploy"]}})
    write(proj / ".claude/settings.local.json", {"permissions": {"allow": ["Deploy"]}})
    perms = Permissions.from_settings(proj, user)
    assert (await outcome(perms, "Deploy", {}, str(proj)))[0] == "deny"


async def test_additional_directories_and_rooted_path_rules(layout, tmp_path):
    proj, user = layout
    extra = tmp_path / "shared-data"
    extra.mkdir()
    (proj / "docs").mkdir()
    write(proj / ".claude/settings.json", {"permissions": {"additionalDirectories": ["../shared-data"], "deny": ["Read(/docs/private.md)"]}})
    perms = Permissions.from_settings(proj, user)
    assert (await outcome(perms, "Read", {"file_path": str(extra / "a.csv")}, str(proj)))[0] == "allow"
    assert (await outcome(perms, "Read", {"file_path": "docs/private.md"}, str(proj / "docs")))[0] == "allow"
    assert (await outcome(perms, "Read", {"file_path": str(proj / "docs/private.md")}, str(proj)))[0] == "deny"


async def test_hooks_section_is_loaded_and_runs(layout):
    proj, user = layout
    hook = f"{sys.executable} {HOOKS / 'decide.py'} deny"
    write(proj / ".claude/settings.json", {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "timeout": 30}]}]}})
    perms = Permissions.from_settings(proj, user)
    assert perms.hooks and perms.hooks.matchers["PreToolUse"][0].hooks[0].timeout == 30


def test_project_dir_variable_in_hook_commands(layout):
    proj, user = layout
    script = write(proj / ".claude/hooks/check.sh", "#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    write(proj / ".claude/settings.json", {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh'}]}]}})
    perms = Permissions.from_settings(proj, user)
    assert perms.load_warnings == []  # the variable names the project, so the script is found: no "does not exist"
    assert perms.hooks and perms.hooks.matchers["PreToolUse"][0].hooks[0].command == '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh'


def test_other_claude_events_are_accepted_but_listed(layout):
    proj, user = layout
    write(proj / ".claude/settings.json", {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    loaded = load_settings(proj, user)
    assert loaded.hooks.ignored_events and "Stop" in loaded.hooks.ignored_events[0]


@pytest.mark.parametrize(
    "content,needle",
    [
        ("{not json", "not valid JSON"),
        ("[]", "JSON object"),
        ({"permissions": []}, "'permissions' must be an object"),
        ({"permissions": {"allow": "Bash"}}, "must be a list"),
        ({"permissions": {"defaultMode": "yolo"}}, "yolo"),
        ({"permissions": {"additionalDirectories": "x"}}, "additionalDirectories"),
        ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": "soon"}]}]}}, "timeout"),
        ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}}, "command"),
        ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "telepathy"}]}]}}, "type"),
        ({"hooks": {"SessionStart": [{"type": "command", "command": "true"}]}}, "'hooks' list"),
        ({"permissions": {"deny": ["(rm"]}}, "(rm"),
    ],
)
def test_bad_settings_name_the_file(layout, content, needle):
    proj, user = layout
    path = write(proj / ".claude/settings.local.json", content)
    with pytest.raises(PermissionConfigError) as err:
        Permissions.from_settings(proj, user)
    assert str(path) in str(err.value)
    assert needle in str(err.value)


def test_unknown_mode_from_python():
    with pytest.raises(PermissionConfigError, match="nope"):
        Permissions("nope")
