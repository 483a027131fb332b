"""The rules "always allow" offers for a call that asks: the narrowest first, the whole tool last.

* A shell command: the command itself (``Bash(npm test -- -k x)``, its stars escaped), with
  an Edit rule for each file a redirection of it writes when the call needs one to run
  (``echo hi > out.txt`` also writes out.txt). Then, as an alternative, the prefix rule
  Claude Code suggests (``Bash(git log:*)``), only when it covers the call by itself, when
  it lets no program run anything (``prefix_problem``: no interpreter, shell or runner),
  and when the line writes no file through a redirection. A command no exact rule can name
  (several lines) gets the fewest safe prefix rules that cover it together, or none.
* A file edit: the file (``Edit(src/util.py)``; one at the top of the project anchored as
  ``Edit(/notes.md)``, since ``Edit(notes.md)`` matches a notes.md in every folder), then its
  folder (``Edit(src/**)``), then ``Edit``.
* Any other tool: its name.

Every rule offered can be read as it is (no control character, no invisible or
non-breaking space: ``ls\\u00a0-la`` is not ``ls -la``, and a label must not pass for it)
and is one a settings file keeps (Claude Code would not drop it). ``covers(rules)`` says
whether saving ``rules`` lets the call run (the gate judges it with its own rules); only
the first choice may be a rule that does not, since nothing narrower could.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..shell import LineFacts, lexical_paths, line_facts
from .._tool._base import Tool
from ._checks import shell_field
from ._rules import escape_rule_content, parse_rule
from ._shell_rules import compile_shell_pattern, exact_shell_content, suggest_shell_rule

__all__ = ["RuleChoices", "Covers", "rule_choices", "offerable", "readable", "edit_path_rule", "edit_folder_rule"]

Covers = Callable[[tuple[str, ...]], bool]
_MAX_RULES = 5  # Claude Code offers at most five rules for one command
_HIDDEN = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs", "Cn"})  # spaces other than " ", controls, unassigned
_GLOB = frozenset("\\*?[]")  # what a path pattern reads as more than the character


@dataclass(frozen=True, slots=True)
class RuleChoices:
    """``suggested``: what Always allow saves by default (together); ``alternatives``: single
    rules a person may save instead, narrow to broad, the whole tool last."""

    suggested: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()


def _covers_anything(rules: tuple[str, ...]) -> bool:
    return True


def rule_choices(tool: Tool, data: dict[str, Any], cwd: str, *, hints: Sequence[str] = (), covers: Covers = _covers_anything,
                 root: str | None = None) -> RuleChoices:
    """The choices for one call of ``tool`` with input ``data`` run in ``cwd``. ``hints``:
    rules the tool's own check suggested; ``root``: the folder a rule's leading ``/`` is
    relative to (the gate's project; None: ``cwd``)."""
    whole = "Edit" if tool.permission_kind == "edit" else tool.name
    field_name = shell_field(tool)
    narrower: tuple[str, ...] = ()
    if field_name and isinstance(data.get(field_name), str):
        suggested, narrower = _shell_choices(tool.name, data[field_name], cwd, root or cwd, hints, covers)
    elif tool.permission_kind == "edit" and (target := _edit_path(tool, data, cwd)) is not None:
        suggested, narrower = _edit_choices(target, cwd, root or cwd, covers)
    elif tool.permission_kind == "read":
        # The folder read, never the whole tool: "always" for one Read of /etc/hostname must
        # not let every later Read of any file through (Claude Code offers the folder too).
        target = _edit_path(tool, data, cwd)
        folder = None if target is None else target if os.path.isdir(target) else os.path.dirname(target)
        rule = None if folder is None else edit_folder_rule(folder, cwd, root or cwd, tool="Read")
        suggested = (rule,) if rule is not None else ()
    elif tool.name == "WebFetch":
        host = urlsplit(str(data.get("url", ""))).hostname
        suggested = (f"WebFetch(domain:{host})",) if host else ()
    else:
        suggested = tuple(hints) or (tool.name,)
    suggested = tuple(r for r in dict.fromkeys(suggested) if offerable(r))
    alternatives = tuple(r for r in dict.fromkeys((*narrower, whole)) if r not in suggested and offerable(r))
    return RuleChoices(suggested, alternatives)


def offerable(rule: str) -> bool:
    """A rule a person may be offered: it parses and it reads as it is. (One Claude Code's
    settings would drop, ``my_tool``, is still offered: it is kept for the session only.)"""
    try:
        parse_rule(rule)
    except ValueError:
        return False
    return readable(rule)


def readable(text: str) -> bool:
    """No control character and no space but the plain one (U+0020): what is shown is what it says."""
    return all(" " <= c < "\x7f" or (c > "\x7f" and unicodedata.category(c) not in _HIDDEN) for c in text)


# -- shell commands ------------------------------------------------------------------------------
def _shell_choices(tool_name: str, command: str, cwd: str, root: str, hints: Sequence[str],
                   covers: Covers) -> tuple[tuple[str, ...], tuple[str, ...]]:
    line = line_facts(command.strip(), cwd)
    writes = any(r.output for r in line.redirections)
    prefixes = [] if writes else _prefix_rules(line, tool_name, hints)
    content = exact_shell_content(command)
    exact = f"{tool_name}({escape_rule_content(content)})" if content is not None else None
    if exact is not None and offerable(exact):
        suggested: tuple[str, ...] = (exact,)
        if writes and not covers(suggested):
            edits = _redirect_rules(line, cwd, root)
            if edits and covers(suggested + edits):
                suggested = _fewest(suggested, edits, covers)
    else:
        safe = [p for p in prefixes if offerable(p)][:_MAX_RULES]
        suggested = _fewest((), safe, covers) if safe and covers(tuple(safe)) else ()
    narrower = tuple(p for p in prefixes if p not in suggested and offerable(p) and covers((p,)))
    return suggested, narrower


def _prefix_rules(line: LineFacts, tool_name: str, hints: Sequence[str]) -> list[str]:
    """The safe prefix rules of the line's parts (of the line when it cannot be split) that
    match the part as allow rules see it (``Bash(npm test:*)`` never matches ``FOO=1 npm
    test``), then the tool's own hints."""
    parts = line.parts
    heads = [(p.rule_prefix, p.allow_forms) for p in parts] if parts else [(line.rule_prefix, line.allow_forms)]
    found: list[str] = []
    for head, forms in heads:
        rule = suggest_shell_rule(head, tool_name)
        if rule is not None and head is not None and any(compile_shell_pattern(head + ":*").matches(f) for f in forms):
            found.append(rule)
    return list(dict.fromkeys([*found, *hints]))


def _redirect_rules(line: LineFacts, cwd: str, root: str) -> tuple[str, ...]:
    """An Edit rule for every file the line's redirections write (none when one of them
    cannot be named: the shell computes it, or a ``cd`` the shell decides comes first)."""
    bases = line.bases
    found: list[str] = []
    for redirection in line.redirections:
        if not redirection.output:
            continue
        if redirection.computed or redirection.paths is None or bases is None:
            return ()
        for word in redirection.paths:
            for base in bases:
                rule = edit_path_rule(os.path.normpath(os.path.join(base, os.path.expanduser(word))), cwd, root)
                if rule is None:
                    return ()
                found.append(rule)
    return tuple(dict.fromkeys(found))


def _fewest(required: tuple[str, ...], optional: Iterable[str], covers: Covers) -> tuple[str, ...]:
    """``required`` and as few of ``optional`` as still cover the call (all of them do)."""
    kept = list(optional)
    for rule in list(kept):
        rest = tuple(r for r in kept if r != rule)
        if required + rest and covers(required + rest):
            kept = list(rest)
    return required + tuple(kept)


# -- file edits ------------------------------------------------------------------------------------
def _edit_choices(path: str, cwd: str, root: str, covers: Covers) -> tuple[tuple[str, ...], tuple[str, ...]]:
    file_rule = edit_path_rule(path, cwd, root)
    folder_rule = edit_folder_rule(os.path.dirname(path), cwd, root)
    if file_rule is None:  # a name no rule can spell: its folder first
        return ((folder_rule,) if folder_rule is not None else ()), ()
    return (file_rule,), ((folder_rule,) if folder_rule is not None and covers((folder_rule,)) else ())


def _edit_path(tool: Tool, data: dict[str, Any], cwd: str) -> str | None:
    raw = next((data[k] for k in (getattr(tool, "path_field", "file_path"), "file_path", "notebook_path", "path")
                if isinstance(data.get(k), str)), None)
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(raw))) if raw else None


def edit_path_rule(path: str, cwd: str, root: str) -> str | None:
    """``Edit(...)`` naming one file: ``src/util.py`` inside ``cwd``, ``/notes.md`` at its
    top (when ``cwd`` is the rule's ``root``), ``//abs/path`` elsewhere; None when no rule
    a settings file keeps can name it."""
    path, cwd = os.path.normpath(path), os.path.normpath(cwd)
    folder, name = os.path.split(path)
    if not name:
        return None
    if folder == cwd and lexical_paths.realpath(cwd) == lexical_paths.realpath(root):
        content = "/" + _glob_escape(name)
    elif folder.startswith(cwd.rstrip(os.sep) + os.sep):
        content = _relative(path, cwd)
    else:
        content = "/" + _glob_escape(path)
    return _edit_rule(content)


def edit_folder_rule(folder: str, cwd: str, root: str, *, tool: str = "Edit") -> str | None:
    """``Edit(src/**)`` for a folder inside ``cwd``, ``Edit(//abs/folder/**)`` for one
    outside; None for ``cwd`` itself and for ``/`` (every file of the project, or of the disk)."""
    folder, cwd = os.path.normpath(folder), os.path.normpath(cwd)
    if folder in (cwd, os.sep):
        return None
    inside = folder.startswith(cwd.rstrip(os.sep) + os.sep)
    content = _relative(folder, cwd) if inside else "/" + _glob_escape(folder)
    return _edit_rule(content + "/**", tool)


def _relative(path: str, cwd: str) -> str:
    rel = "/".join(_glob_escape(part) for part in os.path.relpath(path, cwd).split(os.sep))
    return "\\" + rel if rel[:1] in ("~", "!", "#") else rel  # not a home path, a negation or a comment


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in _GLOB else c for c in text)


def _edit_rule(content: str, tool: str = "Edit") -> str | None:
    rule = f"{tool}({escape_rule_content(content)})"
    return rule if offerable(rule) else None
