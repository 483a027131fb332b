"""The checker of chapter 08: the overlay gate's decisions, against Claude Code's rule.

``check_gate`` compares the learner's ``gate(tool, input, edits_auto, written)`` with
``reference_gate``, Claude Code's ``canUseTool`` for a speculation
(``services/PromptSuggestion/speculation.ts``, v2.1.88; reference §6), on seeded cases:

1. a write tool (Edit, Write, NotebookEdit) when edits are not auto-accepted in the mode:
   the ``edit`` boundary;
2. a write or safe-read tool with a path (the key ``notebook_path`` if the input has it,
   else ``path`` if it has it, else ``file_path``; a key that is there but empty means
   "no path"): ``rel = relative(cwd, path)``; outside cwd (absolute, or starting with
   ``..``) a write is denied (the run goes on) and a read runs as is; a write goes to
   ``overlay/rel`` (``rel`` joins the written set); a read goes there once ``rel`` was
   written, else it runs as is;
3. a safe-read tool with no path: runs as is;
4. Bash: runs as is when its command is non-empty and read-only, else the ``bash`` boundary;
5. anything else: the ``denied_tool`` boundary.

A decision is a pair: ``("overlay", updated_input)``, ``("as_is", None)``,
``("deny", None)`` or ``("boundary", kind)``. The tests check the rule against
nbtoolsched's ``SpeculationGate`` (``nbtoolsched/speculation/_gate.py``) and name where
the two differ on purpose.
"""

from __future__ import annotations

import copy
import posixpath
import random
from functools import lru_cache
from typing import Any, Callable

from .checks import Verdict, run_check

__all__ = [
    "CWD", "OVERLAY", "WRITE_TOOLS", "SAFE_READ_ONLY_TOOLS", "read_only", "reference_gate", "path_key",
    "gate_cases", "describe_case", "check_gate",
]

SEED = 8
CWD = "/home/you/project"  # the session's working directory in every case
OVERLAY = "/tmp/claude-1000/speculation/4242/3f2a9c1e"  # <claudeTempDir>/speculation/<pid>/<id>
WRITE_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
SAFE_READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "ToolSearch", "LSP", "TaskGet", "TaskList"})


@lru_cache(maxsize=None)
def read_only(command: str) -> bool:
    """Is this Bash command read-only (Claude Code's ``checkReadOnlyConstraints``, as
    nbtoolsched ports it: chapter 06)? Given to the learner: the gate only asks it."""
    from nbtoolsched.tools._bash import BashInput, BashTool

    return bool(command) and bool(BashTool().is_read_only(BashInput(command=command)))


def path_key(tool_input: dict[str, Any]) -> str:
    """The key Claude Code reads the path from: the first of these the input has."""
    return "notebook_path" if "notebook_path" in tool_input else "path" if "path" in tool_input else "file_path"


def reference_gate(tool: str, tool_input: dict[str, Any], edits_auto: bool, written: set[str]) -> tuple[str, Any]:
    """Claude Code's decision for one call of a speculation (reference §6); adds to ``written``."""
    is_write, is_read = tool in WRITE_TOOLS, tool in SAFE_READ_ONLY_TOOLS
    if is_write and not edits_auto:
        return ("boundary", "edit")
    if is_write or is_read:
        key = path_key(tool_input)
        path = tool_input.get(key)
        if path:
            rel = posixpath.relpath(path, CWD)
            if posixpath.isabs(rel) or rel.startswith(".."):
                return ("deny", None) if is_write else ("as_is", None)
            if is_write:
                written.add(rel)
                return ("overlay", {**tool_input, key: posixpath.join(OVERLAY, rel)})
            if rel in written:
                return ("overlay", {**tool_input, key: posixpath.join(OVERLAY, rel)})
            return ("as_is", None)
        if is_read:
            return ("as_is", None)
    if tool == "Bash":
        command = tool_input.get("command")
        command = command if isinstance(command, str) else ""
        return ("as_is", None) if command and read_only(command) else ("boundary", "bash")
    return ("boundary", "denied_tool")


# -- the cases --------------------------------------------------------------------------------
FILES = ["app/config.py", "app/main.py", "README.md", "tests/test_main.py", "notes.ipynb"]
OUTSIDE = ["/home/you/.ssh/id_rsa", "/etc/hosts", "/home/you/other/secrets.env", "/home/you/project-old/app.py"]
COMMANDS = ["ls app", "cat README.md", "grep -n load app/config.py", "wc -l app/main.py", "head -3 README.md",
            "ls -la && cat app/main.py", "rm -rf tests", "pytest -q", "echo hi > out.txt", "sed -i s/a/b/ app/main.py",
            "touch new.txt", ""]
OTHERS: list[tuple[str, dict[str, Any]]] = [("WebFetch", {"url": "https://example.com", "prompt": "summarise"}),
          ("AskUserQuestion", {"questions": [{"question": "Which one?"}]}),
          ("Agent", {"prompt": "look around", "description": "explore"}),
          ("TodoWrite", {"todos": []}),
          ("mcp__git__git_status", {"repo_path": CWD}),
          ("notify_team", {"message": "deployed!"})]
# Inputs Claude Code's tools do not send, chosen to show the rule exactly: which key is read
# first, a key that is there but empty, a name that starts with two dots.
ODD: list[tuple[str, dict[str, Any]]] = [("Grep", {"pattern": "load", "path": f"{CWD}/app", "file_path": f"{CWD}/app/config.py"}),
       ("Read", {"file_path": f"{CWD}/app/config.py", "path": f"{CWD}/README.md"}),
       ("NotebookEdit", {"notebook_path": f"{CWD}/notes.ipynb", "file_path": f"{CWD}/README.md", "new_source": "x"}),
       ("Grep", {"pattern": "load", "path": "", "file_path": f"{CWD}/app/config.py"}),
       ("Write", {"file_path": f"{CWD}/..draft.md", "content": "x"}),
       ("Write", {"content": "x"})]


def _write(rng: random.Random) -> tuple[str, dict[str, Any]]:
    tool = rng.choice(["Edit", "Write", "NotebookEdit"])
    inside = rng.random() < 0.8
    if tool == "NotebookEdit":
        return tool, {"notebook_path": f"{CWD}/notes.ipynb" if inside else "/home/you/other/analysis.ipynb",
                      "new_source": "print(1)"}
    path = f"{CWD}/{rng.choice(FILES[:4])}" if inside else rng.choice(OUTSIDE)
    if tool == "Edit":
        return tool, {"file_path": path, "old_string": "False", "new_string": "True"}
    return tool, {"file_path": path, "content": "# new\n"}


def _read(rng: random.Random) -> tuple[str, dict[str, Any]]:
    tool = rng.choice(["Read", "Read", "Glob", "Grep", "ToolSearch", "LSP", "TaskGet", "TaskList"])
    inside = rng.random() < 0.75
    if tool == "Read":
        return tool, {"file_path": f"{CWD}/{rng.choice(FILES)}" if inside else rng.choice(OUTSIDE)}
    if tool in ("Glob", "Grep"):
        data: dict[str, Any] = {"pattern": rng.choice(["*.py", "load", "TODO"])}
        roll = rng.random()
        if roll < 0.4:
            data["path"] = f"{CWD}/{rng.choice(['app', 'tests', 'app/config.py'])}" if inside else posixpath.dirname(rng.choice(OUTSIDE))
        elif roll < 0.55:
            data["path"] = CWD
        return tool, data
    if tool == "ToolSearch":
        return tool, {"query": "select:WebFetch"}
    if tool == "LSP":
        return tool, {"operation": "hover", "filePath": f"{CWD}/app/main.py", "line": 1, "character": 1}
    return tool, {"taskId": "1"} if tool == "TaskGet" else {}


def gate_cases(count: int = 160, seed: int = SEED) -> list[tuple[str, dict[str, Any], bool, frozenset[str]]]:
    """``(tool, input, edits_auto, written)`` cases: every step of the rule, seeded."""
    rng = random.Random(seed)
    cases = []
    for number in range(count):
        if number < len(ODD):
            tool, data = ODD[number]
        else:
            roll = rng.random()
            tool, data = (_write(rng) if roll < 0.35 else _read(rng) if roll < 0.7
                          else ("Bash", {"command": rng.choice(COMMANDS)}) if roll < 0.88 else rng.choice(OTHERS))
        written = frozenset(rng.sample(FILES, rng.randint(0, 2)))
        edits_auto = rng.random() < 0.6
        if number < len(ODD):  # the odd inputs show their point only with this written, edits on
            written, edits_auto = frozenset({"app/config.py"}), True
        cases.append((tool, copy.deepcopy(data), edits_auto, written))
    return cases


def describe_case(tool: str, tool_input: dict[str, Any], edits_auto: bool, written: frozenset[str]) -> str:
    shown = {k: v for k, v in tool_input.items() if k not in ("content", "new_source", "old_string", "new_string", "prompt")}
    mode = "edits auto-accepted" if edits_auto else "edits not auto-accepted"
    return f"{tool} {shown} ({mode}, written so far {sorted(written)})"


def _why(tool: str, tool_input: dict[str, Any], edits_auto: bool, written: frozenset[str], want: tuple[str, Any]) -> str:
    is_write, is_read = tool in WRITE_TOOLS, tool in SAFE_READ_ONLY_TOOLS
    if is_write and not edits_auto:
        return "a write tool is the edit boundary when the mode does not auto-accept edits, whatever its path"
    if is_write or is_read:
        key = path_key(tool_input)
        path = tool_input.get(key)
        others = [k for k in ("notebook_path", "path", "file_path") if k in tool_input and k != key]
        first = f"the path is read from `{key}` (the first of notebook_path, path, file_path the input has" + \
                (f"; `{others[0]}` is not looked at)" if others else ")")
        if not path:
            if key in tool_input:
                first = f"`{key}` is there but empty: that is no path"
            return (f"{first}; a safe-read tool without a path runs as is" if is_read
                    else f"{first}; a write tool without a path falls through to 'any other tool': denied_tool")
        rel = posixpath.relpath(path, CWD)
        if posixpath.isabs(rel) or rel.startswith(".."):
            dots = " (Claude Code tests rel.startsWith('..'): a name that starts with two dots counts as outside)" \
                if not rel.startswith("../") and rel != ".." else ""
            return (f"{first}; {path} is outside cwd{dots}: a write there is denied and the run goes on" if is_write
                    else f"{first}; {path} is outside cwd: a read there runs as is, unchanged")
        if is_write:
            return f"{first}; a write goes copy-on-write to overlay/{rel}, the input's `{key}` rewritten"
        if rel in written:
            return f"{first}; {rel} was written in this speculation, so the read goes to its overlay copy"
        return f"{first}; {rel} was not written yet, so the read goes to the real tree, as is"
    if tool == "Bash":
        command = tool_input.get("command") or ""
        return "an empty command is the bash boundary" if not command else \
            ("a read-only command runs as is" if want[0] == "as_is" else "a command that is not read-only is the bash boundary")
    return f"{tool} is neither a write tool, a safe-read tool nor Bash: any other tool is the denied_tool boundary"


def _shape_ok(got: Any) -> bool:
    return isinstance(got, (tuple, list)) and len(got) == 2 and got[0] in ("overlay", "as_is", "deny", "boundary")


def check_gate(fn: Callable[[str, dict[str, Any], bool, set[str]], Any], cases: int = 160) -> Verdict:
    """Compare ``fn(tool, input, edits_auto, written)`` with Claude Code's rule on seeded cases."""

    def problems(case: tuple[str, dict[str, Any], bool, frozenset[str]]) -> list[str]:
        tool, data, edits_auto, written = case
        theirs, ours = set(written), set(written)
        want = reference_gate(tool, copy.deepcopy(data), edits_auto, ours)
        got = fn(tool, copy.deepcopy(data), edits_auto, theirs)
        said = describe_case(tool, data, edits_auto, written)
        why = _why(tool, data, edits_auto, written, want)
        if not _shape_ok(got):
            return [f"{said}: your function gave {got!r:.100}; it should give a pair such as {want!r}"]
        got = tuple(got)
        if got[0] != want[0] or (want[0] == "boundary" and got[1] != want[1]):
            return [f"{said}: you gave {got!r:.160}; Claude Code gives {want!r:.160}: {why}"]
        if want[0] == "overlay" and got[1] != want[1]:
            return [f"{said}: you ran it against the overlay with input {got[1]!r:.200}; it should be {want[1]!r:.200}: {why}"]
        if theirs != ours:
            added, missing = sorted(theirs - ours), sorted(ours - theirs)
            if missing:
                return [f"{said}: after it, written should hold {missing[0]} (a later Read of it must read the "
                        f"overlay copy); yours is {sorted(theirs)}"]
            return [f"{said}: you added {added[0]} to written, but this call wrote nothing in the overlay"]
        return []

    return run_check("overlay gate", gate_cases(cases), problems, agree="agree with Claude Code's speculation.ts")
