"""explain() in auto mode says what a real run does (reference §4.2).

A call the acceptEdits fast path or the safe-tool allowlist settles runs in auto mode with
no classifier and no person; explain() must say ``allow`` for it, not ``ask``. A call only
the classifier can settle stays ``ask`` in explain() (it runs no classifier), and one auto
mode keeps for a person (an ask rule, a safety check) stays ``ask`` too. Each case is run
for real, through the scheduler and the built-in tools, with a person who denies and
a classifier that refuses and counts its calls.
"""

from __future__ import annotations

import pytest

import nbtoolsched as nts
from nbtoolsched import ApprovalAnswer, Permissions
from nbtoolsched.permissions._classifier import ClassifierVerdict
from nbtoolsched.tools import default_registry

from .toolbox import RecordingApprover


class Refusing:
    """A classifier that refuses everything and remembers what it was asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def classify(self, request):
        self.asked.append(request.tool_name)
        return ClassifierVerdict(False, "not today")


def _cases(outside: str) -> list[tuple[str, str, dict, str]]:
    """(id, tool, input, what settles it in auto mode: fast | safe | classifier | person)."""
    return [
        ("write-in-project", "Write", {"file_path": "notes.md", "content": "x\n"}, "fast"),
        ("write-in-src", "Write", {"file_path": "src/new.py", "content": "x = 1\n"}, "fast"),
        ("rm-in-project", "Bash", {"command": "rm -rf build"}, "fast"),
        ("mkdir-in-project", "Bash", {"command": "mkdir -p out/logs"}, "fast"),
        ("read-outside", "Read", {"file_path": f"{outside}/shared.txt"}, "safe"),
        ("grep-outside", "Grep", {"pattern": "file", "path": outside}, "safe"),
        ("write-outside", "Write", {"file_path": f"{outside}/new.txt", "content": "x\n"}, "classifier"),
        ("unknown-command", "Bash", {"command": "python3 -c 'print(1)'"}, "classifier"),
        ("git-config", "Write", {"file_path": ".git/config", "content": "x\n"}, "person"),
        ("ask-rule", "Bash", {"command": "git push origin main"}, "person"),
    ]


@pytest.fixture
def folders(tmp_path):
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (project / "src").mkdir(parents=True)
    (project / "build").mkdir()
    (project / ".git").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    outside.mkdir()
    (outside / "shared.txt").write_text("a file outside the project\n")
    return project.resolve(), outside.resolve()


@pytest.mark.parametrize("index", range(len(_cases("/x"))), ids=[c[0] for c in _cases("/x")])
async def test_explain_in_auto_mode_agrees_with_a_real_run(folders, index):
    project, outside = folders
    _, name, input, settles = _cases(str(outside))[index]
    registry = default_registry()
    classifier = Refusing()
    person = RecordingApprover(ApprovalAnswer.deny())  # a person who says no, and is counted
    perms = Permissions("auto", ask=["Bash(git push:*)"], cwd=project, tools=registry.full_pool,
                        approver=person, classifier=classifier)

    why = perms.explain(name, input)
    [result] = await nts.Scheduler(registry, permissions=perms, cwd=project).run(
        [{"type": "tool_use", "id": "a1", "name": name, "input": input}]
    )

    if settles in ("fast", "safe"):
        assert why.behavior == "allow" and why.decided_by == "mode", str(why)
        assert not result.is_error, result.text          # it ran: no classifier, no person
        assert classifier.asked == [] and person.requests == []
    elif settles == "classifier":
        assert why.behavior == "ask" and "classifier would decide" in why.steps[-1], str(why)
        assert result.is_error and classifier.asked == [name] and person.requests == []
    else:
        assert why.behavior == "ask" and "for a person" in why.steps[-1], str(why)
        assert result.is_error and classifier.asked == [] and [r.tool_name for r in person.requests] == [name]


def test_explain_in_auto_mode_still_denies_what_a_rule_denies(folders):
    project, _ = folders
    perms = Permissions("auto", deny=["Edit(notes.md)"], cwd=project, tools=default_registry().full_pool)
    why = perms.explain("Write", {"file_path": "notes.md", "content": "x"})
    assert why.behavior == "deny" and why.rule == "Edit(notes.md)"
