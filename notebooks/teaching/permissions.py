"""Checker and pictures for chapter 03: the permission precedence, top to bottom.

* ``check_precedence``: the learner's function, given a call's facts (which rules match,
  tool-wide and by content, what the tool's own check says, the mode), returns
  ``(behavior, step)``: ``allow``/``ask``/``deny`` and the step that decided. It is compared
  with ``reference_precedence``, Claude Code's order (reference §4.4, §4.5 and §4.2:
  ``hasPermissionsToUseToolInner`` and ``hasPermissionsToUseTool`` in
  ``utils/permissions/permissions.ts``, the file tools' steps in ``filesystem.ts``). It is
  the permission step alone: the hooks before it, and the file deny check that Claude
  Code's Read, Edit and Write run even earlier in their ``validateInput``, are not in it.
* ``library_precedence`` is nbtoolsched's order on the same facts: the same except in the
  three places it is stricter on purpose (``differences``). The tests check it against
  ``Permissions.explain`` on real built-in tools (``real_call`` builds the call), and check
  that the two rules differ only there.
* ``precedence_picture``: the order as a list read top to bottom.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import Picture
from .checks import Verdict, run_check

__all__ = [
    "Facts", "STEPS", "SAFE_TOOLS", "reference_precedence", "library_precedence", "differences",
    "random_facts", "check_precedence", "real_call", "library_rows", "precedence_picture", "PRECEDENCE",
]

SEED = 3
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
# What the tool's own check says when no rule matches (reference §4.5, §4.6):
#   allow  – read-only, or a read inside the working directories
#   edit   – a write inside the working directories (acceptEdits allows it; otherwise it asks)
#   ask    – anything else the tool cannot allow by itself (outside the folders, an unknown command)
#   safety – a protected path (.git/, .claude/, shell start-up files): ask, even in bypass mode
OWN = ("allow", "edit", "ask", "safety")
# The steps a decision can come from, in the order they are tried.
STEPS = (
    "tool-wide deny", "tool-wide ask",                       # §4.4 1a, 1b
    "content deny", "safety check", "content ask",           # inside the tool's own check: 1d, 1g, 1f
    "bypass mode", "tool-wide allow",                        # 2a, 2b
    "tool's check allows",                                   # 3: a content allow rule, acceptEdits, read-only...
    "nothing allowed it",                                    # 3: passthrough → ask
    "dontAsk", "acceptEdits fast path", "safe-tool allowlist", "classifier",  # what the mode does with an ask
)
# Auto mode's safe-tool allowlist (reference §4.2, the built-ins of it this chapter uses).
SAFE_TOOLS = frozenset({"Read", "Grep", "Glob", "LSP", "ToolSearch", "TodoWrite", "Sleep", "AskUserQuestion"})


@dataclass(frozen=True)
class Facts:
    """What is known about one call before anything decides it."""

    tool: str                                             # Read, Write, Bash...
    own: str                                              # one of OWN
    mode: str = "default"
    tool_wide: frozenset[str] = field(default_factory=frozenset)  # behaviors of matching tool-wide rules
    content: frozenset[str] = field(default_factory=frozenset)    # behaviors of matching content rules

    @property
    def read_only(self) -> bool:
        """A read (Read, Grep, Glob) or a read-only command: what plan mode lets through in nbtoolsched."""
        return self.tool in ("Read", "Grep", "Glob") or self.own == "allow"

    def __str__(self) -> str:
        rules = [f"tool-wide {b}" for b in ("deny", "ask", "allow") if b in self.tool_wide]
        rules += [f"content {b}" for b in ("deny", "ask", "allow") if b in self.content]
        return (f"{self.tool} (own check: {self.own}) in {self.mode} mode, "
                f"rules matching: {', '.join(rules) or 'none'}")


def _tool_check(f: Facts, mode: str) -> tuple[str, str]:
    """The tool's own checkPermissions under ``mode``: content rules and its own verdict
    (§4.5's order for the file tools; a passthrough when it has nothing to say)."""
    if "deny" in f.content:
        return "deny", "content deny"
    if f.own == "safety":
        return "ask", "safety check"
    if "ask" in f.content:
        return "ask", "content ask"
    if f.own == "edit" and mode == "acceptEdits":
        return "allow", "tool's check allows"
    if "allow" in f.content or f.own == "allow":
        return "allow", "tool's check allows"
    return "passthrough", "nothing allowed it"


def reference_precedence(f: Facts) -> tuple[str, str]:
    """Claude Code's answer (§4.4 then §4.2): ``(behavior, step)``.

    In auto mode an ask the classifier would settle comes back as ``("ask", "classifier")``:
    the classifier, not a person, is asked. Plan mode has no rule of its own (§4.2)."""
    if "deny" in f.tool_wide:
        result = ("deny", "tool-wide deny")
    elif "ask" in f.tool_wide:
        result = ("ask", "tool-wide ask")
    else:
        behavior, step = _tool_check(f, f.mode)
        if behavior == "deny" or step in ("safety check", "content ask"):
            result = (behavior, step)                    # 1d, 1f, 1g: bypass-immune
        elif f.mode == "bypassPermissions":
            result = ("allow", "bypass mode")
        elif "allow" in f.tool_wide:
            result = ("allow", "tool-wide allow")
        elif behavior == "passthrough":
            result = ("ask", "nothing allowed it")
        else:
            result = (behavior, step)
    return _settle_ask(f, result, for_person=("safety check",))  # a safety check's ask stays for a person


def library_precedence(f: Facts) -> tuple[str, str]:
    """nbtoolsched's answer on the same facts (``nbtoolsched/permissions/_judge.py`` and
    ``_engine.py``): Claude Code's, stricter in the three places ``differences`` names."""
    if "deny" in f.tool_wide:
        return ("deny", "tool-wide deny")
    behavior, step = _tool_check(f, f.mode)
    if behavior == "deny":
        return (behavior, step)                           # a content deny before a tool-wide ask
    if f.mode == "plan" and not f.read_only:
        return ("deny", "plan mode")                      # only read-only calls in plan mode
    if "ask" in f.tool_wide:
        result = ("ask", "tool-wide ask")
    elif step in ("safety check", "content ask"):
        result = (behavior, step)
    elif f.mode == "bypassPermissions":
        return ("allow", "bypass mode")
    elif "allow" in f.tool_wide:
        return ("allow", "tool-wide allow")
    elif behavior == "passthrough":
        result = ("ask", "nothing allowed it")
    else:
        result = (behavior, step)
    return _settle_ask(f, result, for_person=("safety check", "content ask", "tool-wide ask"))  # an ask rule's too


def _settle_ask(f: Facts, result: tuple[str, str], for_person: tuple[str, ...]) -> tuple[str, str]:
    """What the mode does with the rules' answer (§4.2): only an ask is settled. dontAsk
    denies it; auto mode keeps the asks of the steps in ``for_person`` for a person and
    allows the rest through the acceptEdits fast path or the safe-tool allowlist, else the
    classifier decides."""
    if result[0] != "ask":
        return result
    if f.mode == "dontAsk":
        return ("deny", "dontAsk")
    if f.mode == "auto":
        if result[1] in for_person:
            return result
        if _tool_check(f, "acceptEdits")[0] == "allow":
            return ("allow", "acceptEdits fast path")
        if f.tool in SAFE_TOOLS:
            return ("allow", "safe-tool allowlist")
        return ("ask", "classifier")
    return result


def differences(f: Facts) -> list[str]:
    """Why nbtoolsched answers these facts differently from Claude Code (empty: it does not)."""
    why = []
    if f.mode == "plan" and not f.read_only and "deny" not in f.tool_wide and "deny" not in f.content:
        why.append("plan mode: nbtoolsched denies every call that is not read-only")
    if "ask" in f.tool_wide and "deny" in f.content and "deny" not in f.tool_wide:
        why.append("a content deny wins over a tool-wide ask in nbtoolsched (Claude Code asks first)")
    if f.mode == "auto" and not why and reference_precedence(f) != library_precedence(f):
        why.append("auto mode: nbtoolsched keeps an ask rule's ask for a person")
    return why


# -- the cases -----------------------------------------------------------------------------------
TEMPLATES = (("Read", "allow"), ("Read", "ask"), ("Grep", "ask"), ("Write", "edit"), ("Write", "ask"), ("Write", "safety"),
             ("Bash", "allow"), ("Bash", "edit"), ("Bash", "ask"))


def random_facts(rng: random.Random) -> Facts:
    tool, own = rng.choice(TEMPLATES)
    pick = lambda p: frozenset(b for b in ("deny", "ask", "allow") if rng.random() < p)  # noqa: E731
    return Facts(tool, own, rng.choice(MODES), pick(0.18), pick(0.28))


def _hint(f: Facts, got: tuple[str, str], want: tuple[str, str]) -> str:
    if want[1] == "tool-wide ask" and got[1] in ("content deny", "safety check", "content ask"):
        return " (the tool-wide rules, deny then ask, come before the tool's own check: §4.4 1a, 1b)"
    if got == ("allow", "bypass mode") and want[1] in ("content deny", "safety check", "content ask", "tool-wide ask"):
        return " (deny rules, ask rules and safety checks hold even in bypass mode)"
    if f.mode == "plan" and got[0] == "deny":
        return " (Claude Code's plan mode has no rule of its own: it decides as default mode does)"
    if want[1] == "acceptEdits fast path":
        return " (auto mode first asks the tool's own check as acceptEdits would, with no classifier)"
    if want[1] == "safe-tool allowlist":
        return f" (auto mode allows {f.tool} without a classifier: it is on the safe-tool allowlist)"
    if want[1] == "dontAsk":
        return " (dontAsk turns every ask into a deny, last of all)"
    if got[1] == "tool-wide allow" and want[1] in ("content deny", "content ask", "safety check"):
        return " (the content rules inside the tool's own check come before any allow rule)"
    return ""


def check_precedence(fn: Callable[[Facts], Any], cases: int = 250) -> Verdict:
    """Compare ``fn(facts)`` with Claude Code's order on ``cases`` seeded random calls."""
    rng = random.Random(SEED)
    all_facts = [random_facts(rng) for _ in range(cases)]

    def problems(f: Facts) -> list[str]:
        want, got = reference_precedence(f), fn(f)
        got = tuple(got) if isinstance(got, (list, tuple)) else got
        if got == want:
            return []
        if not (isinstance(got, tuple) and len(got) == 2):
            return [f"{f}: your function gave {got!r:.80}; it should give a pair (behavior, step), here {want}"]
        if got[1] not in STEPS:
            return [f"{f}: your step {got[1]!r} is not one of STEPS; Claude Code gives {want}"]
        return [f"{f}: you gave {got[0]} by {got[1]!r}; Claude Code gives {want[0]} by {want[1]!r}{_hint(f, got, want)}"]

    return run_check("precedence", all_facts, problems, agree="agree with Claude Code's order")


# -- the same facts as a real call, for Permissions.explain -------------------------------------
def real_call(f: Facts, project: Path, outside: Path) -> tuple[dict[str, list[str]], str, dict[str, Any], dict[str, str]]:
    """Rules and a call to a real built-in tool with exactly these facts:
    ``(rules for Permissions, tool name, input, {step: the rule text that step names})``.

    ``project`` holds ``src/app.py``, ``build/`` and ``.git/``; ``outside`` holds ``shared.txt``."""
    far = f"/{outside}"  # //abs: a rule rooted at the file system's root
    calls = {
        ("Read", "allow"): ({"file_path": "src/app.py"}, "Read(src/**)"),
        ("Read", "ask"): ({"file_path": f"{outside}/shared.txt"}, f"Read({far}/**)"),
        ("Grep", "ask"): ({"pattern": "x", "path": str(outside)}, f"Read({far}/**)"),
        ("Write", "edit"): ({"file_path": "notes.md", "content": "x\n"}, "Edit(notes.md)"),
        ("Write", "ask"): ({"file_path": f"{outside}/new.txt", "content": "x\n"}, f"Edit({far}/**)"),
        ("Write", "safety"): ({"file_path": ".git/config", "content": "x\n"}, "Edit(.git/**)"),
        ("Bash", "allow"): ({"command": "git log --oneline -3"}, "Bash(git log:*)"),
        ("Bash", "edit"): ({"command": "rm -rf build"}, "Bash(rm:*)"),
        ("Bash", "ask"): ({"command": "npm test"}, "Bash(npm test:*)"),
    }
    input, content_rule = calls[(f.tool, f.own)]
    rules: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    for behavior in f.tool_wide:
        rules[behavior].append(f.tool)
    for behavior in f.content:
        rules[behavior].append(content_rule)
    names = {f"tool-wide {b}": f.tool for b in f.tool_wide} | {f"content {b}": content_rule for b in f.content}
    return rules, f.tool, input, names


def library_rows(cases: Iterable[Facts], project: Path, outside: Path, tools: Iterable[Any]) -> list[tuple[Facts, tuple[str, str], Any]]:
    """For each facts: Claude Code's answer and ``Permissions.explain`` on the real call."""
    from nbtoolsched import Permissions

    pool = list(tools)
    rows = []
    for f in cases:
        rules, name, input, _ = real_call(f, project, outside)
        perms = Permissions(f.mode, cwd=project, tools=pool, **rules)
        rows.append((f, reference_precedence(f), perms.explain(name, input)))
    return rows


# -- the picture ---------------------------------------------------------------------------------
PRECEDENCE = [
    ("PreToolUse hooks", "a hook's deny ends it; its allow only skips the prompt", "toolExecution.ts"),
    ("1a  tool-wide deny rule", "deny", "permissions.ts"),
    ("1b  tool-wide ask rule", "ask", "permissions.ts"),
    ("1c  the tool's own check", "content rules and the tool's verdict", "checkPermissions"),
    ("1d    content deny rule", "deny", "filesystem.ts, bashPermissions.ts"),
    ("1f-g  content ask rule, safety check", "ask, even in bypass mode", "filesystem.ts"),
    ("2a  bypassPermissions mode", "allow", "permissions.ts"),
    ("2b  tool-wide allow rule", "allow", "permissions.ts"),
    ("3   the tool's own answer", "allow (content allow, read-only, acceptEdits) or ask", "checkPermissions"),
    ("then the mode settles an ask", "dontAsk: deny · auto: fast path, allowlist, classifier", "hasPermissionsToUseTool"),
    ("a person (the approver)", "allow or deny", "useCanUseTool.tsx"),
]


def precedence_picture(rows: list[tuple[str, str, str]] = PRECEDENCE, highlight: Iterable[str] = (),
                       title: str = "Who decides, read top to bottom: the first step that answers wins") -> Picture:
    """The order as a list, one row per step: the step, what it answers, where in the source."""
    marked = set(highlight)
    row_h, top, left = 26, 34, 10
    widths = (250, 330, 235)
    width = max(left * 2 + sum(widths), 8 + 7.4 * len(title))
    height = top + row_h * len(rows) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'font-family="DejaVu Sans, sans-serif" font-size="11">',
           f'<rect width="{width:.0f}" height="{height}" fill="white"/>',
           f'<text x="8" y="18" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    for i, (step, answer, where) in enumerate(rows):
        y = top + i * row_h
        fill = "#fde68a" if step in marked else ("#dbeafe" if i % 2 == 0 else "#eff6ff")
        out.append(f'<rect x="{left}" y="{y}" width="{sum(widths)}" height="{row_h - 3}" rx="4" fill="{fill}" stroke="#1e3a8a"/>')
        x = left + 8
        for text, w, weight in zip((step, answer, where), widths, ("bold", "normal", "normal")):
            out.append(f'<text x="{x}" y="{y + 16}" font-weight="{weight}" xml:space="preserve">{html.escape(text)}</text>')
            x += w
    out.append("</svg>")
    return Picture("".join(out), title)
