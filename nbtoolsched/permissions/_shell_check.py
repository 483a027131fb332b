"""The Bash check: a command line's facts matched against the rules, the protected places
and the mode, in the order of ``STEPS``.

Read ``STEPS`` top to bottom: the first step that decides settles the call, and
``Permissions.explain()`` names it. Claude Code's order (reference 4.6: exact deny, prefix
deny, path constraints, exact allow, prefix allow, sed, mode, read-only) is kept where the
steps say "Claude Code"; where we differ the step says why. The shape of the list is the
rule that makes it safe to extend:

0. a line too long to look at asks before anything (no rule can be checked on it);
1. every deny first, so no ask or allow can hide one;
2. then every ask that holds in every mode (an ask rule, a safety check: bypassPermissions
   and a hook's allow do not pass them), before any plain ask, so one cannot be hidden
   behind an ask that bypass lets through;
3. then autoAllowBashIfSandboxed, which turns what is left into an allow;
4. then the plain asks and the allows. Several asks combine into an ask, never an allow.

Every fact is the shell layer's (``CallFacts.shell_line()``): nothing here reads the
command's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Literal

from .._tool._decision import Decision, DecisionReason
from ..shell import MAX_COMMAND_CHARS, LineFacts, PartFacts
from ._checks import CallFacts, decide, is_immune_ask, read_only_in, shell_field
from ._matching import shell_pattern
from ._modes import ACCEPT_EDITS_COMMANDS
from ._rules import PermissionRule
from ._shell_exposure import guessed_reads, line_exposure, part_paths, read_exposure, reads_outside, redirection_verdict, strongest

__all__ = ["STEPS", "Step", "shell_check"]


Kind = Literal["bound", "deny", "held ask", "sandbox", "plain"]
# The order the steps' kinds come in: a line too long to look at; denies; asks that hold in
# every mode; the sandbox's allow; plain asks and allows.
KINDS: tuple[Kind, ...] = ("bound", "deny", "held ask", "sandbox", "plain")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the precedence: its name (what explain() shows), where the order comes
    from, what it may answer (``kind``: a deny; an ask that holds in every mode; the
    sandbox's allow; a plain ask or an allow), and the function that decides or passes (None)."""

    name: str
    origin: str
    kind: Kind
    decide: Callable[["ShellCall"], Decision | None]


class ShellCall:
    """One Bash call being judged: its facts, its rules, and what the steps share (each
    computed at most once)."""

    def __init__(self, facts: CallFacts) -> None:
        self.facts = facts
        self.line: LineFacts = facts.shell_line()
        self.rules = {b: facts.rules.content_rules(b, facts.names) for b in ("deny", "ask", "allow")}

    @property
    def parts(self) -> tuple[PartFacts, ...] | None:
        return self.line.parts

    @property
    def bases(self) -> tuple[str, ...] | None:
        return self.line.bases

    def matching(self, behavior: str, forms: tuple[str, ...], *, exact: bool | None = None) -> PermissionRule | None:
        """The first ``behavior`` rule matching one of ``forms`` (only exact ones, or only
        prefix and wildcard ones, when ``exact`` says so)."""
        for rule in self.rules[behavior]:
            pattern = shell_pattern(rule.value.content or "")
            if exact is not None and (pattern.kind == "exact") != exact:
                continue
            # A prefix or wildcard allow rule never covers a spelling that is more than one
            # simple command (asked of the splitter only for a spelling the rule matches).
            compound_ok = behavior != "allow" or pattern.kind == "exact"
            if any(pattern.matches(form) and (compound_ok or not self.line.is_compound(form)) for form in forms):
                return rule
        return None

    @cached_property
    def programs(self) -> tuple[Decision | None, Decision | None]:
        """Deny and ask rules on what the line runs (argv), however it is spelled.

        ``"rm"``, ``/bin/rm``, ``command rm``, ``env rm``, ``xargs -n1 rm``, ``sh -c 'rm'``
        and ``$(rm)`` all run rm. (a deny, an ask that holds in every mode): a rule that
        matches asks or denies; one that may match once the shell has computed some words,
        or a program that cannot be told, asks. Stricter than Claude Code, which matches
        deny rules on the text as written."""
        if not self.rules["deny"] and not self.rules["ask"]:
            return None, None
        runs = self.line.runs
        held: Decision | None = None
        for behavior in ("deny", "ask"):
            for rule in self.rules[behavior]:
                pattern = shell_pattern(rule.value.content or "")
                for invocation in runs.invocations:
                    verdict = pattern.verdict(invocation.words)
                    if verdict == "match" and behavior == "deny":
                        return decide(rule, f"running `{invocation.text}`"), None
                    if verdict == "match" and (held is None or held.reason is None or held.reason.kind != "rule"):
                        held = decide(rule, f"running `{invocation.text}`")
                    elif verdict == "maybe" and held is None:
                        shown = " ".join("<computed>" if w is None else w for w in invocation.words)
                        held = Decision.ask(
                            f"`{invocation.text}` may run what the rule {rule.text} ({rule.origin or rule.source}) covers "
                            f"({shown}: the shell computes some words).",
                            DecisionReason("safety_check", "a rule may match what the shell computes"))
        if held is None and runs.problems:
            named = ", ".join(r.text for r in (self.rules["deny"] + self.rules["ask"])[:3])
            held = Decision.ask(f"What the command runs cannot be told, so the rules {named} cannot be checked: {runs.problems[0]}.",
                                DecisionReason("safety_check", "the program a command runs cannot be told"))
        return None, held

    @cached_property
    def redirections(self) -> Decision | None:
        """The strongest verdict over every redirection (a deny, else an ask that holds in
        every mode, else the first ask): bash opens every one of them."""
        bases = self.bases if self.parts is not None else (self.bases or (self.facts.cwd,))
        return strongest(*(redirection_verdict(self.facts, self.line, r, bases) for r in self.line.redirections))

    @cached_property
    def verdicts(self) -> tuple[Decision, ...]:
        """Each part's verdict (none when the line cannot be split)."""
        return tuple(self.part_verdict(part) for part in self.parts or ())

    def part_verdict(self, part: PartFacts) -> Decision:
        """One part, Claude Code's per-subcommand order (reference 4.6, step 7): deny and ask
        rules, the names it is given and what it may read, allow rules, acceptEdits, the
        read-only verdict (with what it reads outside the working directories)."""
        for behavior in ("deny", "ask"):
            rule = self.matching(behavior, part.deny_forms)
            if rule is not None:
                return decide(rule, f"running `{part.text}`")
        # Both run: a plain ask of one (`cat /etc/hostname .env` reads outside the working
        # dirs) must not hide the other's deny or safety check (.env is protected).
        constraint = strongest(part_paths(self.facts, self.line, part), read_exposure(self.facts, self.line, part, self.bases))
        if constraint is not None:
            return constraint
        rule = self.matching("allow", part.allow_forms)
        if rule is not None:
            return decide(rule, part.text)
        if self.facts.mode == "acceptEdits" and part.program in ACCEPT_EDITS_COMMANDS and part.edits_stream_only:
            # sed '1e cmd' f, s/x/y/e and w f run a program or write anywhere: Claude Code's sed
            # constraints refuse those before the mode allows sed (ours read the script).
            return Decision.allow(None, DecisionReason("mode", f"acceptEdits allows `{part.program}` inside the working directories"))
        if self.read_only(part.text):
            return reads_outside(self.facts, self.line, part, self.bases) or Decision.allow(None, DecisionReason("tool", "read-only command"))
        return Decision.passthrough(f"No rule allows `{part.text}`.")

    def read_only(self, text: str) -> bool:
        """The tool's read-only verdict for ``text`` (a part, or the whole line)."""
        facts = self.facts
        field_name = shell_field(facts.tool) or "command"
        parsed = facts.parsed
        try:
            if hasattr(parsed, "model_copy"):
                parsed = parsed.model_copy(update={field_name: text})
            elif isinstance(parsed, dict):
                parsed = {**parsed, field_name: text}
        except Exception:  # noqa: BLE001 - an input that cannot hold the text cannot say: fails closed
            return False
        return read_only_in(facts.tool, parsed, facts.cwd)

    @cached_property
    def exact_allow(self) -> PermissionRule | None:
        return self.matching("allow", self.line.allow_forms, exact=True)


def _ask(message: str, kind: str, detail: str) -> Decision:
    return Decision.ask(message, DecisionReason(kind, detail))  # type: ignore[arg-type]


def _line_rule(behavior: str, *, exact: bool) -> Callable[[ShellCall], Decision | None]:
    """A step matching ``behavior`` rules on the whole line: exact rules (Claude Code tries
    them on the unsplit command first), or, for a line that cannot be split, every rule."""
    def step(call: ShellCall) -> Decision | None:
        if not exact and call.parts is not None:
            return None
        rule = call.matching(behavior, call.line.deny_forms, exact=True if exact else None)
        return None if rule is None else decide(rule, f"running `{call.line.command}`")
    return step


# -- 1. denies ---------------------------------------------------------------------------------
def _too_long(call: ShellCall) -> Decision | None:
    line = call.line
    if not line.too_long:
        return None
    return _ask(f"The command is {len(line.command)} characters long (more than {MAX_COMMAND_CHARS}), too long to be checked, "
                "so it needs approval.", "safety_check", "a command too long to check")


def _program_deny(call: ShellCall) -> Decision | None:
    return call.programs[0]


def _redirection_deny(call: ShellCall) -> Decision | None:
    found = call.redirections
    return found if found is not None and found.behavior == "deny" else None


def _part_deny(call: ShellCall) -> Decision | None:
    return next((v for v in call.verdicts if v.behavior == "deny"), None)


# -- 2. asks that hold in every mode -----------------------------------------------------------
def _unsandboxed(call: ShellCall) -> Decision | None:
    placement = call.facts.placement
    if placement is None or not placement.unsandboxed_on_request:
        return None
    return _ask("This command asks to run outside the OS sandbox (dangerouslyDisableSandbox), without the kernel's limits on "
                "what it may write, read and reach.", "safety_check", "runs outside the sandbox")


def _unsplit_moves(call: ShellCall) -> Decision | None:
    # What runs in loops, functions and substitutions still may not read a protected file:
    # a `cd` the shell decides makes its relative names anything (`D=secrets; cd "$D" && tac key.txt`).
    if call.parts is not None or call.bases is not None or not guessed_reads(call.facts):
        return None
    return _ask(f"`{call.line.command}` changes to a folder the shell decides, so its relative names may be paths a Read rule "
                "protects.", "safety_check", "reads in a folder the shell decides")


def _redirection_held(call: ShellCall) -> Decision | None:
    found = call.redirections
    return found if found is not None and is_immune_ask(found) else None


def _part_held(call: ShellCall) -> Decision | None:
    return next((v for v in call.verdicts if is_immune_ask(v)), None)


def _program_ask(call: ShellCall) -> Decision | None:
    return call.programs[1]


def _named_anywhere(call: ShellCall) -> Decision | None:
    return line_exposure(call.facts, call.line, call.bases)


def _config_place(call: ShellCall) -> Decision | None:
    if call.read_only(call.line.command):
        return None
    concern = call.line.config_write(call.bases)
    if concern is None:
        return None
    return _ask(f"`{call.line.command}` needs approval: {concern}.", "safety_check", concern)


# -- 3. the sandbox ------------------------------------------------------------------------------
def _sandbox_allows(call: ShellCall) -> Decision | None:
    if not call.facts.auto_allow:
        return None
    rest = _first(call, _PLAIN)[1]  # an allow the rules give keeps its reason
    return rest if rest.behavior == "allow" else Decision.allow(
        None, DecisionReason("sandbox", "it runs in the OS sandbox (autoAllowBashIfSandboxed)"))


# -- 4. plain asks and allows -------------------------------------------------------------------
def _unsplit_rest(call: ShellCall) -> Decision | None:
    if call.parts is not None:
        return None
    if call.exact_allow is not None:
        return decide(call.exact_allow, call.line.command)
    return _ask("The command could not be split into simple commands safely, so it needs approval.", "other",
                "unparsable shell command")


def _shape(call: ShellCall) -> Decision | None:
    found = call.line.structure
    return None if found is None else _ask(found[1], "other", found[0])


def _redirection_ask(call: ShellCall) -> Decision | None:
    return call.redirections


def _exact_allow(call: ShellCall) -> Decision | None:
    return None if call.exact_allow is None else decide(call.exact_allow, call.line.command)


def _parts(call: ShellCall) -> Decision | None:
    parts, verdicts = call.parts or (), call.verdicts
    pending = [(p, v) for p, v in zip(parts, verdicts) if v.behavior != "allow"]
    if not pending:
        if len(verdicts) == 1:
            return verdicts[0]
        why = "; ".join(f"`{p.text}`: {v.reason.describe() if v.reason else 'allowed'}" for p, v in zip(parts, verdicts))
        return Decision.allow(None, DecisionReason(verdicts[0].reason.kind if verdicts[0].reason else "tool",
                                                   f"every part is allowed ({why})"))
    asks = [v for _, v in pending if v.behavior == "ask"]
    if len(asks) == 1 and len(pending) == 1:
        return asks[0]
    # The rules a person is offered come from the gate (permissions/_suggestions.py): the
    # exact command first, a part's prefix rule only when it covers the call by itself.
    if asks:  # several asks (or an ask beside a part no rule allows) stay an ask: never an allow
        said = " ".join(dict.fromkeys(a.message for a in asks if a.message))
        return Decision.ask(said or f"Parts of `{call.line.command}` need approval.", asks[0].reason)
    named = ", ".join(f"`{p.text}`" for p, _ in pending)
    return Decision.passthrough(f"No rule allows {named}.")


def _check_order(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """The list's shape is what keeps it safe: refuse one whose kinds come out of order."""
    ranks = [KINDS.index(step.kind) for step in steps]
    if ranks != sorted(ranks):
        raise ValueError("the shell check's steps must come as denies, held asks, the sandbox, then the rest")
    return steps


_PLAIN: tuple[Step, ...] = (
    Step("the line cannot be split", "Claude Code: ask unless an exact allow rule names it", "plain", _unsplit_rest),
    Step("the shape of the line", "Claude Code: more than 50 parts, several cd, cd with git", "plain", _shape),
    Step("a redirection needs Read or Edit permission", "Claude Code: path constraints on the original command", "plain", _redirection_ask),
    Step("an exact allow rule on the whole line", "Claude Code", "plain", _exact_allow),
    Step("the parts' verdicts", "Claude Code: all allowed, or the one ask; several asks stay an ask", "plain", _parts),
)

STEPS: tuple[Step, ...] = _check_order((
    Step("too long to check", "ours: nothing looks at a line past the parser's bound", "bound", _too_long),
    Step("an exact deny rule on the whole line", "Claude Code", "deny", _line_rule("deny", exact=True)),
    Step("a deny rule on a program the line runs", "ours: argv however spelled, runners peeled", "deny", _program_deny),
    Step("a deny rule on the line that cannot be split", "Claude Code", "deny", _line_rule("deny", exact=False)),
    Step("a redirection a deny rule covers", "Claude Code: path constraints on redirects", "deny", _redirection_deny),
    Step("a part denied", "Claude Code: any subcommand denied denies", "deny", _part_deny),
    Step("runs outside the sandbox", "ours: dangerouslyDisableSandbox asks in every mode", "held ask", _unsandboxed),
    Step("an exact ask rule on the whole line", "Claude Code", "held ask", _line_rule("ask", exact=True)),
    Step("an ask rule on the line that cannot be split", "Claude Code", "held ask", _line_rule("ask", exact=False)),
    Step("relative names after a cd the shell decides", "ours: reads a Read rule protects, in a line that cannot be split", "held ask", _unsplit_moves),
    Step("a redirection's safety check", "Claude Code: an Edit of a config place asks in every mode", "held ask", _redirection_held),
    Step("a part's ask rule or safety check", "Claude Code, and ours for reads of protected files", "held ask", _part_held),
    Step("an ask rule on a program the line runs", "ours: argv however spelled; a program that cannot be told asks", "held ask", _program_ask),
    Step("a protected file named anywhere in the line", "ours: loops, substitutions, code strings", "held ask", _named_anywhere),
    Step("a write into a tool's config or a shell's startup file", "ours: however the line names it", "held ask", _config_place),
    Step("autoAllowBashIfSandboxed", "Claude Code: explicit ask and deny rules still apply", "sandbox", _sandbox_allows),
    *_PLAIN,
))


def _first(call: ShellCall, steps: tuple[Step, ...]) -> tuple[Step, Decision]:
    for step in steps:
        decision = step.decide(call)
        if decision is not None:
            return step, decision
    raise AssertionError("the last step always decides")  # _parts answers for every split line


def shell_check(facts: CallFacts) -> Decision:
    """The decision for a shell call: the first step of ``STEPS`` that decides."""
    call = ShellCall(facts)
    step, decision = _first(call, STEPS)
    facts.steps.append(f"shell step {STEPS.index(step) + 1} of {len(STEPS)}, {step.name} ({step.origin}): {decision.behavior}")
    return decision

