"""The built-in part of a tool's own permission check, by kind of tool.

Shell tools, file tools and WebFetch get the checks Claude Code builds into its Bash,
Read/Edit and WebFetch tools: content rules, path constraints, safety checks and the
read-only auto-allow. A tool's own ``check_permissions`` runs beside these (the engine
combines them), so a tool written by someone else is still held to the rules.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any, Callable

from ..sandbox._settings import Placement
from ..shell import (MAX_COMMAND_CHARS, MAX_LINK_WALK, ReadTargets, allow_candidates, command_line, config_write,
                     deny_candidates, first_word, inside_working_dirs, line_names, links_under, parse_command,
                     paths_for_check, read_targets, relative_bases, safety_concern, shell_paths_for_check, written_words)
from ..shell._braces import brace_words
from ..shell._flags import long_option_matches
from ..shell._sed import sed_script_problem
from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool
from ._hardlinks import inode_guard, linked_rule
from ._matching import (
    content_rule_matches,
    domain_rule_matches,
    host_of,
    path_rule_matches,
    path_rule_may_match_within,
    shell_pattern,
    shell_rule_matches,
)
from ._modes import ACCEPT_EDITS_COMMANDS
from ._rules import Behavior, PermissionRule, RuleSet
from ._shell_rules import suggest_shell_rule

__all__ = ["CallFacts", "tool_kind", "builtin_check", "is_immune_ask", "shell_field", "read_protection"]

Splitter = Callable[[str], "list[str] | None"]
MAX_SUBCOMMANDS = 50
_READ_COMMANDS = frozenset(
    "cd ls find cat head tail sort uniq wc cut paste column file stat diff strings hexdump od base64 nl "
    "sha256sum sha1sum md5sum grep rg".split()
)
_CREATE_COMMANDS = frozenset({"mkdir", "touch"})
_WRITE_COMMANDS = frozenset({"rm", "rmdir", "mv", "cp", "sed"})
# Other commands that write the files they name: judged like the ones above, so a deny
# rule or a tool's config folder (.git/hooks, .claude) holds against them too.
_OTHER_WRITERS = frozenset({"tee", "ln", "install", "truncate", "chmod", "chown", "chgrp", "shred"})
_PATTERN_FIRST = frozenset({"grep", "rg", "sed"})  # the first operand is a pattern/script, not a path


@dataclass(slots=True)
class CallFacts:
    """Everything a check needs about one call, gathered once (cheaply: most calls need little)."""

    tool: Tool
    input: dict[str, Any]
    parsed: Any
    cwd: str
    mode: str
    rules: RuleSet
    additional_dirs: list[str]
    home: str
    split: Splitter
    # Shell calls only (Permissions._own_check fills them): where the command will run,
    # and whether it runs sandboxed with masks over every path a Read deny rule protects.
    placement: Placement | None = None
    masked_reads: bool = False  # ... inside the working directories
    masked_everywhere: bool = False  # ... wherever a deny rule matches (no whole-disk pattern)
    auto_allow: bool = False  # autoAllowBashIfSandboxed applies to this command

    @property
    def working_dirs(self) -> list[str]:
        return [self.cwd, *self.additional_dirs]

    @property
    def names(self) -> set[str]:
        return {self.tool.name, *self.tool.aliases}


def shell_field(tool: Tool) -> str | None:
    """The input field that holds a shell tool's command (None for other tools)."""
    return "command" if tool.permission_kind == "shell" else None


def tool_kind(tool: Tool) -> str:
    """Which family of checks applies, from what the tool declares."""
    kind = tool.permission_kind
    return "file" if kind in ("read", "edit") else kind


def is_immune_ask(decision: Decision) -> bool:
    """A content ask rule or a safety check: prompts even in bypass mode or after a hook allow."""
    return decision.behavior == "ask" and decision.reason is not None and decision.reason.kind in ("rule", "safety_check")


def _rule_reason(rule: PermissionRule, detail: str) -> DecisionReason:
    return DecisionReason("rule", detail, rule=rule.text, source=rule.origin or rule.source)


def _decide(rule: PermissionRule, subject: str) -> Decision:
    where = rule.origin or rule.source
    if rule.behavior == "deny":
        return Decision.deny(
            f"Permission denied: {subject} is blocked by the rule {rule.text} ({where}).", _rule_reason(rule, "deny rule")
        )
    if rule.behavior == "ask":
        return Decision.ask(
            f"The rule {rule.text} ({where}) asks for approval before {subject}.", _rule_reason(rule, "ask rule")
        )
    return Decision.allow(None, _rule_reason(rule, "allow rule"))


def builtin_check(facts: CallFacts) -> Decision:
    kind = tool_kind(facts.tool)
    if kind == "shell":
        return _shell_check(facts)
    if kind == "file":
        return _file_check(facts)
    if kind == "web":
        return _web_check(facts)
    return _generic_check(facts)


# -- files ---------------------------------------------------------------------------------
def _file_path(facts: CallFacts) -> str | None:
    try:
        path = facts.tool.get_path(facts.parsed)
    except Exception:
        path = None
    if path is None:
        for key in ("file_path", "notebook_path", "path"):
            if isinstance(facts.input.get(key), str):
                return str(facts.input[key])
    return path


def _path_rules(facts: CallFacts, behavior: Behavior, family: str) -> list[PermissionRule]:
    """Read(...) or Edit(...) rules, plus rules naming the tool itself when it is of that family."""
    own = facts.names if facts.tool.permission_kind.capitalize() == family else set()
    return facts.rules.content_rules(behavior, {family, *own})


def _first_path_rule(facts: CallFacts, behavior: Behavior, family: str, paths: list[str]) -> PermissionRule | None:
    return next((r for r in _path_rules(facts, behavior, family) if path_rule_matches(r, paths, facts.cwd, facts.home)), None)


def _file_check(facts: CallFacts) -> Decision:
    raw = _file_path(facts)
    if raw is None and facts.tool.permission_kind == "edit":
        return Decision.passthrough("the tool named no file to edit")
    paths = paths_for_check(raw or facts.cwd, facts.cwd)
    if facts.tool.permission_kind == "edit":
        return _edit_check(facts, paths)
    return _read_check(facts, paths)


def _read_check(facts: CallFacts, paths: list[str]) -> Decision:
    subject = f"reading {paths[0]}"
    for behavior in ("deny", "ask"):
        rule = _first_path_rule(facts, behavior, "Read", paths)
        if rule is not None:
            return _decide(rule, subject)
    linked = linked_rule(paths[-1], _protected_reads(facts), facts.cwd, facts.home, tuple(facts.working_dirs))
    if linked is not None:  # a hard link: the same bytes under a name no rule names
        return _decide(linked, f"reading {paths[0]}, another name (a hard link) of a file it protects")
    if _edit_check(facts, paths).behavior == "allow":
        return Decision.allow(None, DecisionReason("tool", "the file may be edited, so it may be read"))
    if inside_working_dirs(paths, facts.working_dirs):
        return Decision.allow(None, DecisionReason("tool", "the path is inside the working directories"))
    rule = _first_path_rule(facts, "allow", "Read", paths)
    if rule is not None:
        return _decide(rule, subject)
    return Decision.ask(f"{paths[0]} is outside the working directories.", DecisionReason("tool", "outside working directories"))


def read_protection(rules: RuleSet, tool: Tool, target: str, cwd: str, home: str) -> Callable[[str], bool] | None:
    """Which paths a search of ``target`` found must be left out of what it shows.

    A Grep or Glob over a folder reads every file in it, so a file a Read deny or ask rule
    protects would show without the permission step ever seeing its path. Rules that
    match ``target`` itself are not used: the permission step judged those (a deny
    stopped the call, an ask was answered). None when no rule protects anything.
    Files under ask rules are left out too (nobody was asked about them): stricter than
    a filter on deny rules alone, which is all the reference suggests for Claude Code.
    """
    names = {"Read", tool.name, *tool.aliases} if tool.permission_kind == "read" else {"Read"}
    judged = paths_for_check(target, cwd)
    protected = [
        r for b in ("deny", "ask") for r in rules.content_rules(b, names)
        if not path_rule_matches(r, judged, cwd, home)
    ]
    if not protected:
        return None
    linked = inode_guard(protected, cwd, home, (cwd,))

    def hidden(path: str) -> bool:
        forms = paths_for_check(path, cwd)
        return any(path_rule_matches(r, forms, cwd, home) for r in protected) or linked(path)

    return hidden


def _edit_check(facts: CallFacts, paths: list[str]) -> Decision:
    subject = f"editing {paths[0]}"
    rule = _first_path_rule(facts, "deny", "Edit", paths)
    if rule is not None:
        return _decide(rule, subject)
    concern = safety_concern(paths)
    if concern:
        session_rule = next(
            (r for r in _path_rules(facts, "allow", "Edit") if r.source == "session" and path_rule_matches(r, paths, facts.cwd, facts.home)),
            None,
        )
        if session_rule is not None and ".claude" in paths[-1].split(os.sep):
            return _decide(session_rule, subject)
        return Decision.ask(f"Editing needs approval: {concern}.", DecisionReason("safety_check", concern))
    rule = _first_path_rule(facts, "ask", "Edit", paths)
    if rule is not None:
        return _decide(rule, subject)
    if facts.mode == "acceptEdits" and inside_working_dirs(paths, facts.working_dirs):
        return Decision.allow(None, DecisionReason("mode", "acceptEdits allows edits inside the working directories"))
    rule = _first_path_rule(facts, "allow", "Edit", paths)
    if rule is not None:
        return _decide(rule, subject)
    return Decision.passthrough(f"{facts.tool.name} wants to edit {paths[0]}.")


# -- web -------------------------------------------------------------------------------------
def _web_check(facts: CallFacts) -> Decision:
    url = facts.input.get("url")
    host = host_of(url) if isinstance(url, str) else None
    if host is None:  # no rule can be matched on a host that cannot be told: ask, even in bypass mode
        return Decision.ask(f"{facts.tool.name} needs approval: cannot tell which host {url!r} reaches.", DecisionReason("safety_check", "unreadable host"))
    for behavior in ("deny", "ask", "allow"):
        rule = next((r for r in facts.rules.content_rules(behavior, facts.names) if domain_rule_matches(r, host)), None)
        if rule is not None:
            return _decide(rule, f"fetching from {host}")
    return Decision.passthrough(f"{facts.tool.name} wants to fetch from {host or url!r}.")


def _generic_check(facts: CallFacts) -> Decision:
    """Tools may expose ``permission_content(parsed) -> str`` for their own content rules."""
    getter = getattr(facts.tool, "permission_content", None)
    content = getter(facts.parsed) if callable(getter) else None
    if isinstance(content, str):
        for behavior in ("deny", "ask", "allow"):
            rule = next((r for r in facts.rules.content_rules(behavior, facts.names) if content_rule_matches(r, content)), None)
            if rule is not None:
                return _decide(rule, f"{facts.tool.name}({content})")
    return Decision.passthrough()


# -- shell -----------------------------------------------------------------------------------
def _shell_check(facts: CallFacts) -> Decision:
    """The rules and checks on a command line, then what the OS sandbox changes.

    A deny stands. A request to run outside the sandbox (``dangerouslyDisableSandbox``)
    then asks in every mode, bypass included, even for a command rules allow: it is a
    retry without the kernel's protection. Under ``autoAllowBashIfSandboxed`` a command
    that will run sandboxed is allowed unless an explicit ask rule or a safety check
    objects (Claude Code: "explicit ask and deny rules still apply")."""
    decision = _shell_rules_check(facts)
    if decision.behavior == "deny":
        return decision
    if facts.placement is not None and facts.placement.unsandboxed_on_request:
        return Decision.ask(
            "This command asks to run outside the OS sandbox (dangerouslyDisableSandbox), without the kernel's limits on "
            "what it may write, read and reach.", DecisionReason("safety_check", "runs outside the sandbox"))
    if facts.auto_allow and decision.behavior != "allow" and not (
            decision.reason is not None and decision.reason.kind in ("rule", "safety_check")):
        return Decision.allow(None, DecisionReason("sandbox", "it runs in the OS sandbox (autoAllowBashIfSandboxed)"))
    return decision


def _shell_rules_check(facts: CallFacts) -> Decision:
    field_name = shell_field(facts.tool) or "command"
    command = str(facts.input.get(field_name) or "").strip()
    if len(command) > MAX_COMMAND_CHARS:  # bounded: nothing below looks at such a command
        return Decision.ask(f"The command is {len(command)} characters long (more than {MAX_COMMAND_CHARS}), too long to be "
                            "checked, so it needs approval.", DecisionReason("safety_check", "a command too long to check"))
    rules = {b: facts.rules.content_rules(b, facts.names) for b in ("deny", "ask", "allow")}
    whole_deny = deny_candidates(command)
    for behavior in ("deny", "ask"):  # exact rules on the whole, unsplit command first
        for rule in rules[behavior]:
            if shell_pattern(rule.value.content).kind == "exact" and shell_rule_matches(rule, whole_deny):
                return _decide(rule, f"running `{command}`")
    denied, held = _invocation_check(rules, command)
    if denied is not None:
        return denied
    exact_allow = next(
        (r for r in rules["allow"] if shell_pattern(r.value.content).kind == "exact" and shell_rule_matches(r, allow_candidates(command))), None
    )
    subs = facts.split(command)
    if subs is None:
        for behavior in ("deny", "ask"):
            found = next((r for r in rules[behavior] if shell_rule_matches(r, whole_deny)), None)
            if found is not None:
                return _decide(found, f"running `{command}`")
        # What runs in loops, functions and substitutions still may not read a protected
        # file: its redirections (`done < .env`, `$(< .env)`) and the files it names.
        moves = relative_bases(command, facts.cwd)
        if moves is None and _guessed_reads(facts):  # `D=secrets; cd "$D" && tac key.txt`
            return Decision.ask(f"`{command}` changes to a folder the shell decides, so its relative names may be paths a Read rule "
                                "protects.", DecisionReason("safety_check", "reads in a folder the shell decides"))
        redirect = _redirect_check(facts, command, moves or [facts.cwd])
        if redirect is not None and (redirect.behavior == "deny" or is_immune_ask(redirect)):
            return redirect
        held = held or _line_exposure(facts, command, moves) or _config_write(facts, command, moves, field_name)
        if held is not None:
            return held
        if exact_allow is not None:
            return _decide(exact_allow, command)
        return Decision.ask(
            "The command could not be split into simple commands safely, so it needs approval.",
            DecisionReason("other", "unparsable shell command"),
        )
    subs = [s.strip() for s in subs if s.strip()] or [command]
    structural = _structure_check(subs)
    bases = relative_bases(command, facts.cwd)
    redirect = _redirect_check(facts, command, bases)
    if redirect is not None and redirect.behavior == "deny":
        return redirect
    results = [_subcommand_check(facts, sub, rules, field_name, bases) for sub in subs]
    denied = next((r for r in results if r.behavior == "deny"), None)
    if denied is not None:
        return denied
    immune = (next((r for r in results if is_immune_ask(r)), held) or _line_exposure(facts, command, bases)
              or _config_write(facts, command, bases, field_name))
    if immune is not None:
        return immune
    if structural is not None:
        return structural
    if redirect is not None:
        return redirect
    if exact_allow is not None:
        return _decide(exact_allow, command)
    pending = [(s, r) for s, r in zip(subs, results) if r.behavior != "allow"]
    if not pending:
        if len(results) == 1:
            return results[0]
        why = "; ".join(f"`{s}`: {r.reason.describe() if r.reason else 'allowed'}" for s, r in zip(subs, results))
        return Decision.allow(None, DecisionReason(results[0].reason.kind if results[0].reason else "tool", f"every part is allowed ({why})"))
    asks = [r for _, r in pending if r.behavior == "ask"]
    if len(asks) == 1 and len(pending) == 1:
        return asks[0]
    suggestions = tuple(dict.fromkeys(s for s in (suggest_shell_rule(sub, facts.tool.name) for sub, _ in pending) if s))[:5]
    if asks:  # several asks (or an ask beside a part no rule allows) stay an ask: never an allow
        said = " ".join(dict.fromkeys(a.message for a in asks if a.message))
        return Decision.ask(said or f"Parts of `{facts.input.get(field_name)}` need approval.", asks[0].reason, suggestions)
    parts = ", ".join(f"`{sub}`" for sub, _ in pending)
    return Decision("passthrough", message=f"No rule allows {parts}.", suggestions=suggestions)


def _invocation_check(rules: dict[str, list[PermissionRule]], command: str) -> tuple[Decision | None, Decision | None]:
    """Deny and ask rules on what the command runs (argv), however it is spelled.

    ``"rm"``, ``/bin/rm``, ``command rm``, ``env rm``, ``xargs -n1 rm``, ``sh -c 'rm'`` and
    ``$(rm)`` all run rm (invocations.py). Returns (a deny, an ask that even bypass mode
    keeps): a rule that matches asks or denies; a rule that may match once the shell
    has computed some words, or a command whose program cannot be told, asks. Stricter
    than Claude Code, which matches deny rules on the text as written.
    """
    if not rules["deny"] and not rules["ask"]:
        return None, None
    line = command_line(command)
    held: Decision | None = None
    for behavior in ("deny", "ask"):
        for rule in rules[behavior]:
            pattern = shell_pattern(rule.value.content)
            for invocation in line.invocations:
                verdict = pattern.verdict(invocation.words)
                if verdict == "match" and behavior == "deny":
                    return _decide(rule, f"running `{invocation.text}`"), None
                if verdict == "match" and (held is None or held.reason is None or held.reason.kind != "rule"):
                    held = _decide(rule, f"running `{invocation.text}`")
                elif verdict == "maybe" and held is None:
                    shown = " ".join("<computed>" if w is None else w for w in invocation.words)
                    held = Decision.ask(
                        f"`{invocation.text}` may run what the rule {rule.text} ({rule.origin or rule.source}) covers "
                        f"({shown}: the shell computes some words).",
                        DecisionReason("safety_check", "a rule may match what the shell computes"),
                    )
    if held is None and line.problems:
        named = ", ".join(r.text for r in (rules["deny"] + rules["ask"])[:3])
        held = Decision.ask(
            f"What the command runs cannot be told, so the rules {named} cannot be checked: {line.problems[0]}.",
            DecisionReason("safety_check", "the program a command runs cannot be told"),
        )
    return None, held


def _structure_check(subs: list[str]) -> Decision | None:
    heads = [first_word(deny_candidates(s)[-1]) for s in subs]
    if len(subs) > MAX_SUBCOMMANDS:
        return Decision.ask(f"The command has {len(subs)} parts (more than {MAX_SUBCOMMANDS}).", DecisionReason("other", "too many subcommands"))
    if heads.count("cd") > 1:
        return Decision.ask("The command changes directory more than once.", DecisionReason("other", "several cd"))
    if "cd" in heads and "git" in heads:
        return Decision.ask(
            "A command that combines cd and git needs approval (it could run git in an unexpected repository).",
            DecisionReason("other", "cd with git"),
        )
    return None


def _subcommand_check(
    facts: CallFacts, sub: str, rules: dict[str, list[PermissionRule]], field_name: str, bases: list[str] | None
) -> Decision:
    denyish = deny_candidates(sub)
    for behavior in ("deny", "ask"):
        rule = next((r for r in rules[behavior] if shell_rule_matches(r, denyish)), None)
        if rule is not None:
            return _decide(rule, f"running `{sub}`")
    # Both checks run: a plain ask of one (`cat /etc/hostname .env` reads outside the
    # working dirs) must not hide the other's deny or safety check (.env is protected).
    constraint = _strongest(_path_constraints(facts, denyish[-1]), _read_exposure(facts, denyish[-1], bases))
    if constraint is not None:
        return constraint
    rule = next((r for r in rules["allow"] if shell_rule_matches(r, allow_candidates(sub), is_compound=lambda c: _compound(facts, c))), None)
    if rule is not None:
        return _decide(rule, sub)
    if facts.mode == "acceptEdits" and _accept_edits_command(denyish[-1]):
        return Decision.allow(None, DecisionReason("mode", f"acceptEdits allows `{first_word(denyish[-1])}` inside the working directories"))
    if _read_only(facts, sub, field_name):
        return _reads_outside(facts, denyish[-1], bases) or Decision.allow(None, DecisionReason("tool", "read-only command"))
    return Decision.passthrough(f"No rule allows `{sub}`.")


def _strongest(*verdicts: Decision | None) -> Decision | None:
    """The deny, else the bypass-immune ask, else the first verdict given."""
    given = [v for v in verdicts if v is not None]
    return next((v for v in given if v.behavior == "deny"), None) or next((v for v in given if is_immune_ask(v)), None) or (
        given[0] if given else None)


def _accept_edits_command(sub: str) -> bool:
    """Is ``sub`` one of the commands acceptEdits allows (mkdir, touch, rm, rmdir, mv, cp,
    sed) and, for sed, one whose script only edits the stream? ``sed '1e cmd' f`` and
    ``s/x/y/e`` run a program, ``w f`` writes anywhere: Claude Code's sed constraints
    refuse those too, before the mode allows sed. (Ours read the script, so they accept
    more stream commands than Claude Code's two patterns; ``a``/``i``/``c`` text asks.)"""
    head = first_word(sub)
    if head not in ACCEPT_EDITS_COMMANDS:
        return False
    if head != "sed":
        return True
    parsed = parse_command(sub)
    if parsed.errors or len(parsed.commands) != 1 or parsed.commands[0].is_dynamic:
        return False
    return sed_script_problem(parsed.commands[0].argv) is None


_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def _redirect_check(facts: CallFacts, command: str, bases: list[str] | None) -> Decision | None:
    """Redirect targets are paths too (the splitter drops them from subcommands).

    An output redirection writes a file, so it needs what an Edit of that file needs (an
    Edit allow rule, or acceptEdits mode inside the working dirs) whatever allow rule or
    read-only verdict covers the command: ``git status > README.md`` empties README.md.
    An input redirection needs what a Read needs. A relative target is judged from every
    folder a ``cd`` in the command may have moved to (``bases``; None: unknown, so ask).
    Returns the first target's deny or ask, or None when every target may be used."""
    parsed = parse_command(command)
    for cmd in parsed.commands:
        for redirect in cmd.redirects:
            if redirect.is_heredoc or redirect.op in ("<<<",) or redirect.target is None:
                continue
            target = redirect.target
            if redirect.op in (">&", "<&") and (target.value.isdigit() or target.value == "-"):
                continue  # a file-descriptor copy such as 2>&1, or a close (>& -); "> -" is a file
            output = redirect.op in _OUTPUT_OPS
            if output and target.value in _SAFE_TARGETS:
                continue
            braced = bool(target.issues) and all(issue.startswith("brace expansion") for issue in target.issues)
            if not target.is_static and not braced:
                return Decision.ask(f"The redirection {redirect.text!r} uses a path the shell computes.", DecisionReason("other", "dynamic redirect"))
            if bases is None and not os.path.isabs(os.path.expanduser(target.value)):
                return Decision.ask(
                    f"The redirection {redirect.text!r} follows a `cd` the shell decides.", DecisionReason("other", "redirect after a dynamic cd")
                )
            # bash brace-expands a redirection's word too (`cat < .e{n..n}v` reads .env); more
            # than one word is an "ambiguous redirect" that opens nothing, but each is judged.
            words = brace_words(target.value)
            if words is None:
                return Decision.ask(f"The redirection {redirect.text!r} names more paths than can be checked.",
                                    DecisionReason("safety_check", "a redirection brace expansion too large to check"))
            for word in words:
                verdict, paths = _redirect_verdict(facts, word, output, bases or [facts.cwd])
                if verdict is not None:
                    break
            if verdict is None:
                continue
            if verdict.behavior == "deny" or is_immune_ask(verdict):
                return verdict
            if output:
                return Decision.ask(
                    f"The redirection {redirect.text!r} writes to {paths[0]}, which needs Edit permission "
                    "(an Edit allow rule, or acceptEdits mode inside the working directories).",
                    DecisionReason("tool", "output redirect without edit permission"),
                )
            return Decision.ask(
                f"The redirection {redirect.text!r} reads {paths[0]}, which is outside the working directories.",
                DecisionReason("tool", "redirect outside working directories"),
            )
    return None


def _redirect_verdict(facts: CallFacts, target: str, output: bool, bases: list[str]) -> tuple[Decision | None, list[str]]:
    """The first verdict short of allow for the target seen from any base (None: allowed)."""
    paths: list[str] = []
    for base in bases:
        found = shell_paths_for_check(target, base)
        if found is None:
            return _process_path_ask(target), [target]
        paths = found
        verdict = _edit_check(facts, paths) if output else _read_check(facts, paths)
        if verdict.behavior != "allow":
            return verdict, paths
    return None, paths


def _process_path_ask(raw: str) -> Decision:
    return Decision.ask(
        f"{raw} goes through /proc/self, /proc/thread-self or /dev/fd, which the command resolves in its own "
        "process, so the file it opens cannot be told.",
        DecisionReason("tool", "a path the command resolves in its own process"),
    )


def _read_exposure(facts: CallFacts, sub: str, bases: list[str] | None) -> Decision | None:
    """A command that may read a path a Read deny or ask rule protects is not auto-allowed.

    Covers what the command names (``sed -n p .env``, ``git show HEAD:.env``), folders it
    may descend into (``grep -r x .``, ``find``, ``rg`` with no path), globs (``cat .e*``)
    and file lists it reads from its input (``xargs cat``). Stricter than Claude Code,
    which checks only the paths a few commands name and so lets those print a denied file.
    A word naming a protected file asks in every mode, bypass too (a deny rule beats
    bypass), whatever else the command does; folders, globs, input lists and words the
    shell computes are a wider guess, whose ask bypass lets through.
    """
    protected = _protected_reads(facts)
    if not protected:
        return None
    reason = DecisionReason("tool", "may read a path a Read rule protects")
    targets = read_targets(sub, bases or [facts.cwd])
    named = _named_exposure(facts, sub, targets, bases or [facts.cwd], protected)
    if named is not None and (bases is not None or is_immune_ask(named)):
        return named  # after a cd the shell decides, a name is still judged from cwd
    protected = _guessed_reads(facts)
    if bases is None:
        # Its relative names may be anything there (`cd "$D" && cat key.txt`): like a name
        # of the protected file itself, this asks even in bypass mode.
        if not protected:
            return None
        return Decision.ask(f"`{sub}` runs in a folder the shell decides, so it may read a path {protected[0].text} protects.",
                            DecisionReason("safety_check", "reads in a folder the shell decides"))
    if targets.unknown and protected:
        return Decision.ask(f"`{sub}` {targets.unknown}, so it may read a path the rule {protected[0].text} protects.", reason)
    for raw in targets.trees:
        for base in bases:
            found = shell_paths_for_check(raw, base)
            if found is None:
                return _process_path_ask(raw)
            judged = _guessed_reads(facts, found[0]) if not targets.history else _protected_reads(facts)
            rule = next((r for r in judged if path_rule_may_match_within(r, found, facts.cwd, facts.home)), None)
            if rule is not None and targets.history:
                # git prints from its objects: copies of a protected file that a deny rule's
                # path, and a sandbox's mask, never cover. As a name of the file: every mode.
                return Decision.ask(f"`{sub}` may print file content from the history of the repository at {found[0]}, "
                                    f"which can hold files the rule {rule.text} ({rule.origin or rule.source}) protects.",
                                    DecisionReason("safety_check", "may print protected files from git's history"))
            if rule is not None:
                return Decision.ask(f"`{sub}` may read files under {found[0]}, where the rule {rule.text} "
                                    f"({rule.origin or rule.source}) protects reads.", reason)
            if targets.follows_links and judged:
                linked = _linked_exposure(facts, sub, found[0], judged, reason)
                if linked is not None:
                    return linked
    return None


def _protected_reads(facts: CallFacts) -> list[PermissionRule]:
    return _path_rules(facts, "deny", "Read") + _path_rules(facts, "ask", "Read")


def _guessed_reads(facts: CallFacts, where: str | None = None) -> list[PermissionRule]:
    """The Read rules judged against what a command may read without naming it (folders it
    searches, file lists from its input, a folder the shell decides). Under a sandbox that
    masks every path a deny rule protects, the kernel holds those reads: only ask rules
    remain (a sandbox cannot stop to ask). ``where``: the folder it reads (None: it may
    read anywhere), so masks covering the working directories are enough inside them. A
    word that names a protected file is still judged by every rule, as without a sandbox."""
    inside = where is not None and inside_working_dirs([where], facts.working_dirs)
    covered = facts.masked_everywhere or (facts.masked_reads and inside)
    return _path_rules(facts, "ask", "Read") if covered else _protected_reads(facts)


def _named_exposure(
    facts: CallFacts, what: str, targets: ReadTargets, bases: list[str], protected: list[PermissionRule]
) -> Decision | None:
    """A safety-check ask (bypass-immune) when a file the words name is one a rule
    protects; else the ask for a name that cannot be resolved here (/proc/self/...)."""
    if targets.unlisted:
        return Decision.ask(f"`{what}` has words that may name a path the rule {protected[0].text} protects: "
                            f"{targets.unlisted}.", DecisionReason("safety_check", "names too many paths to check"))
    unresolved: Decision | None = None
    for raw in targets.files:
        for base in bases:
            found = shell_paths_for_check(raw, base)
            if found is None:
                unresolved = unresolved or _process_path_ask(raw)
                continue
            rule = next((r for r in protected if path_rule_matches(r, found, facts.cwd, facts.home)), None)
            if rule is not None:
                # A word that names the protected file: a safety check, so it asks even in
                # bypass mode. Not a deny: the word may be a pattern (``grep .env x``).
                return Decision.ask(f"`{what}` may read {found[0]}, which the rule {rule.text} ({rule.origin or rule.source}) protects.",
                                    DecisionReason("safety_check", "names a path a Read rule protects"))
    return unresolved


def _line_exposure(facts: CallFacts, command: str, bases: list[str] | None) -> Decision | None:
    """A protected file named anywhere in the line (line_names: loops, substitutions,
    ``sh -c`` strings, code fed to a shell's input): the per-command checks see none of
    these when the line cannot be split, and never look inside a string that runs. A
    bypass-immune ask, as for a command naming the file itself (relative names judged
    from cwd when a ``cd`` the shell decides comes first)."""
    protected = _protected_reads(facts)
    if not protected:
        return None
    bases = bases or [facts.cwd]
    named = _named_exposure(facts, command, line_names(command, bases), bases, protected)
    return named if named is not None and is_immune_ask(named) else None


def _config_write(facts: CallFacts, command: str, bases: list[str] | None, field_name: str) -> Decision | None:
    """A bypass-immune ask for a line that is not read-only and may change a tool's config
    or a shell's startup file however it names it (shell_places.config_write): the
    per-command check sees only the files the usual writers name."""
    concern = config_write(command, bases)
    if concern is None or _read_only(facts, command, field_name):
        return None
    return Decision.ask(f"`{command}` needs approval: {concern}.", DecisionReason("safety_check", concern))


def _linked_exposure(
    facts: CallFacts, sub: str, folder: str, protected: list[PermissionRule], reason: DecisionReason
) -> Decision | None:
    """A folder the command reads may hold symlinks into a protected path (``docs/k ->
    ../secrets/key.txt``), which ``grep -R``, ``diff -r`` and globs follow."""
    links = links_under(folder)
    if links is None:
        return Decision.ask(
            f"`{sub}` reads {folder}, which holds more than {MAX_LINK_WALK} entries, so whether links in it lead "
            f"to a path the rule {protected[0].text} protects cannot be told.",
            reason,
        )
    for link in links:
        found = shell_paths_for_check(link, facts.cwd)
        if found is None:
            return _process_path_ask(link)
        rule = next((r for r in protected if path_rule_may_match_within(r, found, facts.cwd, facts.home)), None)
        if rule is not None:
            return Decision.ask(
                f"`{sub}` may read {found[-1]} through the link {link}, where the rule {rule.text} "
                f"({rule.origin or rule.source}) protects reads.",
                reason,
            )
    return None


def _compound(facts: CallFacts, candidate: str) -> bool:
    parts = facts.split(candidate)
    return parts is None or len(parts) != 1


def _read_only(facts: CallFacts, sub: str, field_name: str) -> bool:
    parsed = facts.parsed
    try:
        if hasattr(parsed, "model_copy"):
            parsed = parsed.model_copy(update={field_name: sub})
        elif isinstance(parsed, dict):
            parsed = {**parsed, field_name: sub}
        return bool(facts.tool.is_read_only_in(parsed, facts.cwd))
    except Exception:
        return False  # a check that cannot say fails closed


def _names_pattern(arg: str) -> bool:
    """-e/-f (alone, bundled or with the value attached) or --regexp/--expression/--file,
    abbreviated too: the pattern or script is then not the first operand."""
    if arg.startswith("--"):
        return long_option_matches(arg, "--regexp", "--expression", "--file")
    return arg.startswith("-") and bool({"e", "f"} & set(arg[1:]))


_HARMLESS_DEVICES = frozenset({"/dev/null"})


def _reads_outside(facts: CallFacts, sub: str, bases: list[str] | None) -> Decision | None:
    """A read-only command is allowed without asking only if every file it names is inside
    the working directories (or under a Read allow rule) and what it reads can be told from
    its words: not only the well-known commands ``_path_constraints`` reads, but
    ``diff --to-file=../x f``, ``comm f /x``, ``jq . ../x``, ``git diff --no-index f /x``,
    ``wc --files0-from=list``. (Claude Code checks the paths of a fixed list of commands.)
    A command an allow rule names is the rule's business, as in Claude Code."""
    if bases is None:
        return None  # after a cd the shell decides: _read_exposure and the structure checks judge it
    targets = read_targets(sub, bases)
    if targets.unknown and not facts.masked_everywhere:  # sandboxed: the masks and the read-only tree hold whatever it reads
        return Decision.ask(f"`{sub}` {targets.unknown}, so the files it reads cannot be checked against the working directories.",
                            DecisionReason("tool", "reads files that cannot be told"))
    for raw in targets.files:
        if raw in _HARMLESS_DEVICES:
            continue
        for base in bases:
            found = shell_paths_for_check(raw, base)
            if found is None:
                return _process_path_ask(raw)
            outside = _outside_working_dirs(facts, "Read", found, f"`{sub}` may read")
            if outside is not None:
                return outside
    return None


def _path_constraints(facts: CallFacts, sub: str) -> Decision | None:
    """File arguments of well-known commands must stay inside the working dirs (or be allowed)."""
    try:
        words = shlex.split(sub)
    except ValueError:
        return Decision.ask(f"Could not read the arguments of `{sub}`.", DecisionReason("other", "unparsable arguments"))
    if not words:
        return None
    head, args = os.path.basename(words[0]), words[1:]
    if head in _READ_COMMANDS:
        family = "Read"
    elif head in _CREATE_COMMANDS or head in _WRITE_COMMANDS or head in _OTHER_WRITERS:
        family = "Edit"
    else:
        return None
    if family == "Edit":
        # Before anything else: a write into a tool's config or a shell's startup file asks
        # even in bypass mode, as an Edit there does (`cp -f x .git/hooks/pre-commit`,
        # `tee .claude/settings.json`, `mv --target-directory=.git/hooks x`).
        concern = _write_concern(facts, written_words(head, args))
        if concern is not None:
            return concern
    if head in ("mv", "cp") and any(a.startswith("-") for a in args):
        return Decision.ask(f"`{head}` with flags needs approval so its paths can be checked.", DecisionReason("other", f"{head} with flags"))
    operands = [a for a in args if not a.startswith("-")]
    if head in _PATTERN_FIRST and operands and not any(_names_pattern(a) for a in args):
        operands = operands[1:]
    if head == "find":
        operands = [a for a in args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]]
    if not operands and head in ("cd", "ls", "find", "grep", "rg"):
        operands = ["~" if head == "cd" else "."]
    pending: Decision | None = None  # the first ask; a deny of a later operand still wins
    for operand in operands:
        if any(ch in operand for ch in "$`"):
            pending = pending or Decision.ask(f"`{sub}` uses a path that depends on the shell's expansion.",
                                              DecisionReason("other", "unverifiable path"))
            continue
        base = operand.split("*")[0].split("?")[0].split("[")[0] or "."
        found = shell_paths_for_check(base, facts.cwd)
        if found is None:
            pending = pending or _process_path_ask(operand)
            continue
        paths = found
        rule = _first_path_rule(facts, "deny", family, paths)
        if rule is not None:
            return _decide(rule, f"`{sub}` touching {paths[0]}")
        pending = pending or _outside_working_dirs(facts, family, paths, f"`{sub}` {'reads' if family == 'Read' else 'changes'}")
    return pending


def _write_concern(facts: CallFacts, words: list[str]) -> Decision | None:
    """The safety-check ask when one of ``words`` names a path in a tool's config folder
    or a shell's startup file, or None."""
    for word in words:
        if not word or any(ch in word for ch in "$`"):
            continue
        found = shell_paths_for_check(word, facts.cwd)
        concern = safety_concern(found) if found is not None else None
        if concern:
            return Decision.ask(f"Changing files there needs approval: {concern}.", DecisionReason("safety_check", concern))
    return None


def _outside_working_dirs(facts: CallFacts, family: str, paths: list[str], doing: str) -> Decision | None:
    """An ask when ``paths`` leave the working directories and no ``family`` allow rule covers them."""
    if inside_working_dirs(paths, facts.working_dirs) or _first_path_rule(facts, "allow", family, paths) is not None:
        return None
    return Decision.ask(f"{doing} {paths[0]}, which is outside the working directories.",
                        DecisionReason("tool", "path outside working directories"))

