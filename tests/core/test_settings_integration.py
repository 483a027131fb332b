"""A user's Claude Code settings (rules and command hooks) drive the scheduler unchanged."""

import json
import sys
from pathlib import Path

import nbtoolsched as nts
from nbtoolsched.permissions._engine import Permissions

from .conftest import block

HOOK = """
import json, sys
event = json.load(sys.stdin)
if event["tool_name"] == "Edit" and event["tool_input"].get("output") == "forbidden":
    print("edits that write 'forbidden' are blocked by policy", file=sys.stderr)
    sys.exit(2)
"""


async def test_settings_rules_and_command_hooks_apply(spy_registry: nts.ToolRegistry, tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text(HOOK)
    (tmp_path / ".claude").mkdir()
    settings = {
        "permissions": {"allow": ["Edit"], "deny": ["Grep"]},
        "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}]},
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    gate = Permissions.from_settings(tmp_path, user_dir=tmp_path / "no-user-settings")
    sched = nts.Scheduler(spy_registry, permissions=gate, cwd=tmp_path)
    assert sched.registry.get("Grep") is None  # blanket-denied: never offered, not even found
    results = await sched.run([block("Edit", output="fine"), block("Edit", output="forbidden"), block("Read")])
    assert results[0].content == "fine"
    assert results[1].is_error and "blocked by policy" in results[1].content
    assert results[2].content == "ok"
    assert "Grep" not in [t["name"] for t in sched.registry.api_tools()]
