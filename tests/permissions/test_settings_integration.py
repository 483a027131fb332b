"""A user's Claude Code settings (rules and command hooks) drive the scheduler unchanged,
with the real built-in tools."""

import json
import sys
from pathlib import Path

import nbtoolsched as nts
from nbtoolsched.permissions._engine import Permissions

from tests.spies import block

HOOK = """
import json, sys
event = json.load(sys.stdin)
if event["tool_name"] == "Edit" and event["tool_input"].get("new_string") == "forbidden":
    print("edits that write 'forbidden' are blocked by policy", file=sys.stderr)
    sys.exit(2)
"""


async def test_settings_rules_and_command_hooks_apply(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text(HOOK)
    (tmp_path / "notes.txt").write_text("one\n")
    (tmp_path / ".claude").mkdir()
    settings = {
        "permissions": {"allow": ["Edit"], "deny": ["Grep"]},
        "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}]},
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    gate = Permissions.from_settings(tmp_path, user_dir=tmp_path / "no-user-settings")
    sched = nts.Scheduler(nts.default_registry(tmp_path), permissions=gate, cwd=tmp_path, session_dir=tmp_path / "session")
    assert sched.registry.get("Grep") is None  # blanket-denied: never offered, not even found
    results = await sched.run([
        block("Read", file_path="notes.txt"),
        block("Edit", file_path="notes.txt", old_string="one", new_string="fine"),
        block("Edit", file_path="notes.txt", old_string="fine", new_string="forbidden"),
    ])
    assert not results[0].is_error and "one" in results[0].content
    assert not results[1].is_error
    assert results[2].is_error and "blocked by policy" in results[2].content
    assert (tmp_path / "notes.txt").read_text() == "fine\n"
    assert "Grep" not in [t["name"] for t in sched.registry.api_tools()]
