"""``Permissions``: the PermissionGate, deciding in Claude Code's order.

Order (reference §4.4 and §3.3 step 7):
  hook deny → tool-wide deny → the tool's own check (its deny; then, in plan mode, any
  call that is not read-only is denied) → tool-wide ask → own ask that must prompt
  (content ask rule, safety check, a tool needing a person) → hook ask / hook allow →
  bypassPermissions → tool-wide allow → own allow → ask.
An ``ask`` from the rules is then settled by the mode: dontAsk denies it, auto lets the
classifier decide (until it has refused too often), otherwise a person is asked. A
PreToolUse hook's ``ask`` goes to the person in every mode, as in Claude Code (its
dontAsk and auto mode convert only the rule engine's asks). Before a person is asked,
PermissionRequest hooks may answer instead; after the classifier refuses a call,
PermissionDenied hooks run.
Deliberately stricter than Claude Code in three places: a hook's ``ask`` does not skip
deny rules, plan mode denies (rather than asks for) calls that are not read-only, and an
input that a PermissionRequest hook or the approver puts in place is checked again
(``_recheck``) instead of being run as given.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..shell import analyze, shows_repository_content, subcommand_strings
from .._tool._abort import AbortError
from .._tool._decision import PASSTHROUGH, Decision, DecisionReason
from .._tool._base import PermissionKind, Tool, overrides
from .._tool._context import ToolContext
from .._tool._decorator import FunctionTool
from ._approvals import ApprovalAnswer, ApprovalBroker, ApprovalRequest, Approver
from ._base import ApprovalDeferred, HookEvent, PermissionRequest
from ._checks import CallFacts, builtin_check, is_immune_ask, read_protection, shell_field, tool_kind
from ._classifier import Classifier, ClassifierRequest, DenialTracker, PatternClassifier
from ._errors import PermissionConfigError
from ._hooks import Hooks
from ._modes import AUTO_SAFE_TOOLS, MODE_TITLES, Mode, check_mode
from ._problems import LoadProblem
from ._rules import SHELL_RULE_TOOLS, Behavior, PermissionRule, RuleSet, escape_rule_content, make_rule, parse_rule, rules_from
from ..sandbox._mounts import masks_coverage
from ..sandbox._settings import SandboxSettings
from ._sandbox import settings_from_python, with_rules
from ._settings import load_settings
from ._shell_rules import suggest_shell_rule

__all__ = ["Permissions", "Explanation", "default_splitter"]

RuleSpec = str | Mapping[str, Any] | PermissionRule


def default_splitter(command: str) -> list[str] | None:
    """The shell layer's splitter; None (so: ask) when it cannot split."""
    try:
        return subcommand_strings(command)
    except Exception:  # noqa: BLE001 - a parser failure means "cannot tell": fail closed
        return None


@dataclass
class Explanation:
    """Which rule, hook, mode or check settled a call, and the steps that led there."""

    tool_name: str
    behavior: str  # allow | deny | ask
    decision: Decision
    steps: list[str] = field(default_factory=list)

    @property
    def decided_by(self) -> str:
        return self.decision.reason.kind if self.decision.reason else "default"

    @property
    def rule(self) -> str | None:
        return self.decision.reason.rule if self.decision.reason else None

    @property
    def source(self) -> str | None:
        return self.decision.reason.source if self.decision.reason else None

    @property
    def message(self) -> str | None:
        return self.decision.message

    def __str__(self) -> str:
        head = f"{self.tool_name}: {self.behavior} (decided by {self.decision.reason.describe() if self.decision.reason else 'default'})"
        lines = [head] + [f"  - {step}" for step in self.steps]
        if self.decision.message:
            lines.append(f"  message: {self.decision.message}")
        return "\n".join(lines)


class _NamedTool(Tool[Any]):
    """Stands in for a tool that explain() only knows by name (Bash, Read, Edit...): its
    kind from the name, and for Bash the same read-only analysis as the real tool."""

    _READ = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LS"})
    _EDIT = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]
        self.is_mcp = name.startswith("mcp__")  # type: ignore[misc]
        kind: PermissionKind = "generic"
        if name in self._READ or name in self._EDIT:
            kind = "read" if name in self._READ else "edit"
        elif name in SHELL_RULE_TOOLS or name == "WebFetch":
            kind = "shell" if name in SHELL_RULE_TOOLS else "web"
        self.permission_kind = kind  # type: ignore[misc]

    def is_read_only(self, input: Any) -> bool:
        return self.permission_kind == "read"

    def is_read_only_in(self, input: Any, cwd: str) -> bool:
        if self.name == "Bash":  # the analysis BashTool runs, so explain() agrees with a run
            command = input.get("command") if isinstance(input, dict) else None
            return isinstance(command, str) and analyze(command, cwd).read_only
        return self.is_read_only(input)

    def get_path(self, input: Any) -> str | None:
        data = input if isinstance(input, dict) else {}
        return next((data[k] for k in ("file_path", "notebook_path", "path") if isinstance(data.get(k), str)), None)


class Permissions:
    """Rules, mode, hooks config, classifier and approver: one PermissionGate."""

    def __init__(
        self,
        mode: str = "default",
        allow: Iterable[RuleSpec] = (),
        deny: Iterable[RuleSpec] = (),
        ask: Iterable[RuleSpec] = (),
        *,
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        approver: Approver | None = None,
        classifier: Classifier | None = None,
        cwd: str | os.PathLike[str] | None = None,
        hooks: Hooks | None = None,
        rules: Iterable[PermissionRule] = (),
        home: str | None = None,
        split_command: Callable[[str], list[str] | None] | None = None,
        tools: Iterable[Tool] = (),
        sandbox: SandboxSettings | Mapping[str, Any] | None = None,
    ) -> None:
        self._mode: Mode = check_mode(mode)
        self.cwd = str(Path(cwd or os.getcwd()).resolve())
        self.rules = RuleSet()
        for rule in rules:
            self.rules.add(rule)
        for behavior, specs in (("allow", allow), ("deny", deny), ("ask", ask)):
            for rule in rules_from(specs, behavior, source="python", root=self.cwd):  # type: ignore[arg-type]
                self.rules.add(rule)
        self.additional_dirs = [os.path.normpath(os.path.join(self.cwd, os.path.expanduser(str(d)))) for d in additional_dirs]
        self.approver: Approver = approver if approver is not None else ApprovalBroker(policy=None if os.environ.get("NBTOOLSCHED_APPROVAL") else "deny")
        self.classifier: Classifier = classifier if classifier is not None else PatternClassifier()
        self.denials = DenialTracker()
        self.hooks = hooks
        self.home = home or os.path.expanduser("~")
        self.split_command = split_command or default_splitter
        self.tools = {t.name: t for t in tools}
        # calls waiting for a person right now: what they asked with, in which mode, whom
        self._waiting: dict[str, tuple[PermissionRequest, Mode, Approver]] = {}
        self._sandbox = settings_from_python(dict(sandbox) if isinstance(sandbox, Mapping) else sandbox, cwd=self.cwd,
                                             home=self.home, working_dirs=self.working_dirs)
        self.settings_files: list[Path] = []  # filled by from_settings
        self.load_warnings: list[LoadProblem] = []  # what the settings files hold with a caveat

    @classmethod
    def from_settings(
        cls,
        cwd: str | os.PathLike[str],
        user_dir: str | os.PathLike[str] | None = None,
        *,
        mode: str | None = None,
        check_hooks: bool = True,
        strict_hooks: bool = False,
        **options: Any,
    ) -> "Permissions":
        """Read the user, project and project-local settings.json files for ``cwd``.

        ``mode`` overrides the files' defaultMode; other options are the constructor's.
        What loads with a caveat (a hook program that is not installed, a rule Claude Code
        would drop...) is in ``load_warnings`` and issued as ``SettingsWarning``s.
        ``strict_hooks=True`` makes any hook that fails, is missing, times out or answers
        garbage block its call (fail closed) instead of letting it go ahead as Claude
        Code does."""
        loaded = load_settings(cwd, user_dir, check_hooks=check_hooks, strict_hooks=strict_hooks)
        extra_dirs = list(options.pop("additional_dirs", ()))
        given = options.pop("sandbox", None)
        perms = cls(
            mode or loaded.default_mode or "default",
            options.pop("allow", ()),
            options.pop("deny", ()),
            options.pop("ask", ()),
            cwd=cwd,
            rules=loaded.rules,
            additional_dirs=[*loaded.additional_dirs, *extra_dirs],
            hooks=options.pop("hooks", None) or loaded.hooks,
            sandbox=given,
            **options,
        )
        perms._sandbox = loaded.sandbox.merged(perms._sandbox) if given is not None else loaded.sandbox
        perms.settings_files = loaded.files
        perms.load_warnings = loaded.warnings
        perms.sandbox.warn_if_unavailable()  # said once per process, at load
        return perms

    # -- configuration ---------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = check_mode(value)

    @property
    def working_dirs(self) -> list[str]:
        return [self.cwd, *self.additional_dirs]

    @property
    def sandbox(self) -> SandboxSettings:
        """The OS sandbox's settings: the ``sandbox`` blocks of the settings files (or the
        ``sandbox=`` argument) plus what the rules feed it (Edit allow and deny, Read deny,
        WebFetch domains), as Claude Code merges them."""
        return with_rules(self._sandbox, self.rules.rules, cwd=self.cwd, home=self.home, working_dirs=self.working_dirs)

    def add_rule(self, rule: RuleSpec, behavior: Behavior = "allow", *, source: str = "python") -> PermissionRule:
        made = make_rule(rule, behavior, source=source, root=self.cwd)  # type: ignore[arg-type]
        self.rules.add(made)
        return made

    def add_session_rule(self, rule: RuleSpec, behavior: Behavior = "allow") -> PermissionRule:
        """A rule that lasts for this Permissions object (what "allow always" saves)."""
        return self.add_rule(rule, behavior, source="session")

    def hides(self, tool: Tool) -> bool:
        return self.rules.tool_wide("deny", tool.name, tool.aliases) is not None

    def read_protection(self, tool: Tool, target: str, cwd: str | None = None) -> Callable[[str], bool] | None:
        """For a search tool: which paths found under ``target`` it must not show (or None).

        Grep and Glob call this (through ``ctx.permission_context``) so Read deny and ask
        rules hold for the files inside a folder they search, whichever engine found them.
        """
        return read_protection(self.rules, tool, target, cwd or self.cwd, self.home)

    # -- the gate ------------------------------------------------------------------------------
    async def decide(self, request: PermissionRequest) -> Decision:
        mode = check_mode(request.mode) if request.mode else self._mode  # a run may override the mode
        decision = self._remembered(request.tool, request.hook_decision, mode)  # no await for the common case
        if decision is None:
            decision = await self._evaluate(request.tool, request.input, request.parsed, request.ctx, request.hook_decision, mode)
        if decision.behavior == "allow":
            self.denials.record_allow()
            return decision
        if decision.behavior == "deny":
            return decision
        return await self._settle_ask(request, decision, mode)

    async def _settle_ask(self, request: PermissionRequest, decision: Decision, mode: Mode) -> Decision:
        tool = request.tool
        if _from_hook(decision):
            return await self._ask_person(request, decision, mode)  # a hook's ask is for a person, whatever the mode
        if mode == "dontAsk":
            return _dont_ask(tool.name, decision)
        if mode == "auto":
            settled = await self._auto(request, decision)
            if settled is not None:
                return settled
        return await self._ask_person(request, decision, mode)

    async def _auto(self, request: PermissionRequest, decision: Decision) -> Decision | None:
        """Settle an ask without a person, or None to fall back to asking."""
        tool = request.tool
        if is_immune_ask(decision) or _requires_person(tool):
            return None
        fast = await self._own_check(self._facts(tool, request.input, request.parsed, request.ctx, mode="acceptEdits"), request.ctx)
        if fast.behavior == "allow":
            self.denials.record_allow()
            return replace(fast, reason=DecisionReason("mode", "auto mode: allowed as acceptEdits would allow it"))
        if tool.name in AUTO_SAFE_TOOLS:
            self.denials.record_allow()
            return Decision.allow(None, DecisionReason("mode", f"auto mode allows {tool.name} without asking"))
        if self.denials.exhausted:
            return None
        verdict = await self.classifier.classify(
            ClassifierRequest(tool.name, request.input, request.ctx.cwd, _read_only(tool, request.parsed, request.ctx.cwd), decision.message or "")
        )
        if verdict.allow:
            self.denials.record_allow()
            return Decision.allow(None, DecisionReason("classifier", verdict.reason))
        self.denials.record_denial()
        message = f"Auto mode refused this {tool.name} call: {verdict.reason}. Try a safer way to reach the goal, or ask the user."
        if await self._permission_denied(request, verdict.reason):
            message += " The PermissionDenied hook indicated this command is now approved. You may retry it if you would like."
        return Decision.deny(message, DecisionReason("classifier", verdict.reason))

    # -- PermissionRequest / PermissionDenied hooks ---------------------------------------------
    def _runner(self, request: PermissionRequest, method: str) -> Any:
        runner = request.hooks if request.hooks is not None else self.hooks
        return getattr(runner, method, None)

    async def _permission_denied(self, request: PermissionRequest, reason: str) -> bool:
        """Run PermissionDenied hooks after a classifier denial (as Claude Code does: only
        auto mode's refusals fire it); True when one says the call may be retried."""
        run = self._runner(request, "permission_denied")
        if run is None:
            return False
        outcome = await run(HookEvent("PermissionDenied", request.tool, request.tool.name, dict(request.input),
                                      request.tool_use_id, request.ctx, reason=reason))
        request.notices.extend(outcome.notices)
        return outcome.retry

    async def _permission_request(self, request: PermissionRequest, suggestions: tuple[str, ...]) -> Decision | None:
        """PermissionRequest hooks answer for the person when they allow or deny."""
        run = self._runner(request, "permission_request")
        if run is None:
            return None
        offered = [{"type": "addRules", "rules": [_rule_value(rule)], "behavior": "allow", "destination": "localSettings"}
                   for rule in suggestions]
        outcome = await run(HookEvent("PermissionRequest", request.tool, request.tool.name, dict(request.input),
                                      request.tool_use_id, request.ctx, permission_suggestions=offered))
        request.notices.extend(outcome.notices)
        for update in outcome.updated_permissions:
            self._apply_update(update)
        return outcome.decision

    def _apply_update(self, update: Any) -> None:
        """A hook's ``updatedPermissions``: ``addRules`` become session rules; others are ignored."""
        if not isinstance(update, dict) or update.get("type") != "addRules" or update.get("behavior") not in ("allow", "deny", "ask"):
            return
        for value in update.get("rules") or []:
            if isinstance(value, dict) and isinstance(value.get("toolName"), str):
                content = value.get("ruleContent")
                text = value["toolName"] if content is None else f"{value['toolName']}({escape_rule_content(str(content))})"
                try:
                    self.add_session_rule(text, update["behavior"])
                except PermissionConfigError:
                    pass  # a rule that cannot be read is not added

    async def _ask_person(self, request: PermissionRequest, decision: Decision, mode: Mode) -> Decision:
        """PermissionRequest hooks, then the approver; an input either of them changes is
        checked again before it may run (``_recheck``)."""
        tool = request.tool
        suggestions = decision.suggestions or _default_suggestions(tool, request.input, request.ctx.cwd)
        hooked = await self._permission_request(request, tuple(suggestions))
        changed: dict[str, Any] | None = None  # the input a hook or the approver put in place
        if hooked is not None:
            if hooked.behavior != "allow":
                return hooked
            if not _changes(hooked.updated_input, request.input):
                self.denials.record_allow()
                return replace(hooked, updated_input=decision.updated_input)
            source = hooked.reason.source if hooked.reason is not None and hooked.reason.source else "a PermissionRequest hook"
            checked, request = await self._recheck(request, hooked, mode, f"the hook {source}")
            if checked.behavior != "ask":
                if checked.behavior == "allow":
                    self.denials.record_allow()
                return checked
            # A rule asks about the hook's input: a person judges that input (Claude Code's
            # answer to a PreToolUse hook's allow that an ask rule objects to).
            decision, changed = checked, request.input
        approver: Approver = request.approver or self.approver
        shown: set[str] = set()
        for _ in range(_MAX_REASKS + 1):
            message = decision.message or _ask_text(tool)
            shown.add(message)
            if changed is not None:  # rules to save for the input being approved, not the one it replaced
                suggestions = decision.suggestions or _default_suggestions(tool, request.input, request.ctx.cwd)
            alternatives = tuple(r for r in _alternative_rules(tool, request.input, request.ctx.cwd) if r not in suggestions)
            asked = ApprovalRequest(request.tool_use_id, tool.name, dict(request.input), message, tuple(suggestions), alternatives)
            self._waiting[request.tool_use_id] = (request, mode, approver)
            try:
                answer = await approver(asked)
            except (ApprovalDeferred, asyncio.CancelledError, AbortError):
                raise
            except Exception as err:  # noqa: BLE001 - a broken approver rejects, and stops the turn
                return Decision.deny(f"The approval step failed ({err}); the {tool.name} call was not run.", DecisionReason("user", "approver error"), abort_turn=True)
            finally:
                self._waiting.pop(request.tool_use_id, None)
            if answer.kind == "deny":
                return _rejection(tool.name, decision, answer)
            if answer.kind == "allow_always":
                saved = []
                for rule in answer.rules or asked.suggested_rules or (tool.name,):
                    try:
                        saved.append(self.add_session_rule(rule).text)
                    except PermissionConfigError:
                        pass  # a suggestion the person could not have meant: the one call is still allowed
                if saved:
                    await self._release_covered(saved)
            if answer.kind == "allow" and answer.rules and not answer.by_policy:
                why = DecisionReason("rule", f"allowed by {', '.join(answer.rules)}, saved while it waited", rule=answer.rules[0], source="session")
                approved = Decision.allow(None, why)
            else:
                who = "a headless allow policy" if answer.by_policy else "the user"
                approved = Decision.allow(None, DecisionReason("user", f"approved by {who}"))
            if _changes(answer.updated_input, request.input):
                assert answer.updated_input is not None
                proposal = replace(approved, updated_input=answer.updated_input)
                checked, request = await self._recheck(request, proposal, mode, "the approver")
                changed = request.input
                if checked.behavior == "deny":
                    return replace(checked, feedback=answer.feedback)
                if checked.behavior == "ask" and (checked.message or _ask_text(tool)) not in shown:
                    decision = checked  # the edited input raises an objection the approver has not seen
                    continue
            self.denials.record_allow()
            updated = changed if changed is not None else decision.updated_input
            return replace(approved, updated_input=updated, feedback=answer.feedback)
        return Decision.deny(
            f"The approver kept changing this {tool.name} call's input into ones that need approval again, so it was not run.",
            DecisionReason("user", "too many edited inputs"),
        )

    async def _recheck(
        self, request: PermissionRequest, proposal: Decision, mode: Mode, who: str
    ) -> tuple[Decision, PermissionRequest]:
        """An input a PermissionRequest hook or the approver put in place, held to the same
        checks as the model's: the schema, the tool's ``validate_input``, then every rule
        and check (deny and ask rules, the tool's own check with the read-only analysis of
        the new command, plan mode) as for a PreToolUse hook's ``updatedInput``.

        Deliberately stricter than Claude Code, which runs either one's ``updatedInput``
        unchecked. Returns the decision (the proposal when nothing objects) and the request
        for the new input.
        """
        tool, ctx = request.tool, request.ctx
        updated = proposal.updated_input
        assert updated is not None
        parsed = _parse(tool, updated, _INVALID)
        if parsed is _INVALID:
            why = f"{who} changed the {tool.name} input into one the tool does not accept, so the call was not run."
            return Decision.deny(why, DecisionReason("hook" if _from_hook(proposal) else "user", "invalid updated input")), request
        if overrides(tool, "validate_input"):
            verdict = await tool.validate_input(parsed, ctx)
            if not verdict.ok:
                why = f"{verdict.message} (the input was changed by {who}, so the call was not run)"
                return Decision.deny(why, DecisionReason("hook" if _from_hook(proposal) else "user", "updated input fails validation")), request
        request = replace(request, input=updated, parsed=parsed)
        return await self._evaluate(tool, updated, parsed, ctx, proposal, mode), request

    async def _release_covered(self, rules: list[str]) -> list[str]:
        """Answer the calls still waiting for a person that the rules just saved now allow.

        Each is judged again exactly as when it asked (its input, context and mode), so a
        hook's ask, a safety check or a deny rule keeps it waiting. Only approvers that
        hold requests (``pending`` and ``answer``, as ApprovalBroker has) can be answered.
        (Our reference of Claude Code does not describe this re-check; with several prompts
        waiting at once, as a notebook panel has, not doing it leaves covered calls asking.)"""
        released: list[str] = []
        for key, entry in list(self._waiting.items()):
            request, mode, asked = entry
            holder: Any = asked
            while hasattr(holder, "__wrapped__"):  # a run's tracing wrapper around the broker
                holder = holder.__wrapped__
            pending, answer = getattr(holder, "pending", None), getattr(holder, "answer", None)
            if not callable(answer) or not isinstance(pending, Mapping) or key not in pending:
                continue
            verdict = await self._evaluate(request.tool, request.input, request.parsed, request.ctx, request.hook_decision, mode)
            # Judging may have awaited: if the call was answered meanwhile and asks again
            # (an edited input, under the same id), the question now waiting is not the
            # one judged, so it stays with the person.
            if verdict.behavior == "allow" and self._waiting.get(key) is entry and key in holder.pending:
                answer(key, ApprovalAnswer.released(rules))
                released.append(key)
        return released

    # -- evaluation (everything before asking) ------------------------------------------------
    async def evaluate(
        self, tool: Tool, input: dict[str, Any], parsed: Any = None, ctx: ToolContext | None = None, hook_decision: Decision | None = None
    ) -> Explanation:
        """The decision before any approver or classifier is consulted, with its steps."""
        ctx = ctx or ToolContext(self.cwd, permission_context=self)
        steps: list[str] = []
        parsed = parsed if parsed is not None else _parse(tool, input)
        decision = await self._evaluate(tool, input, parsed, ctx, hook_decision, None, steps)
        return Explanation(tool.name, decision.behavior, decision, steps)

    def explain(
        self, tool_name: str | Tool, input: dict[str, Any], *, cwd: str | None = None, hook_decision: Decision | None = None
    ) -> Explanation:
        """Which rule, hook, mode or check decides this call, and why (runs no approver)."""
        tool = tool_name if isinstance(tool_name, Tool) else self.tool_for(tool_name)
        ctx = ToolContext(cwd or self.cwd, permission_context=self)
        result = _run_sync(self.evaluate(tool, input, None, ctx, hook_decision))
        if result.behavior == "ask":
            if _from_hook(result.decision):
                result.steps.append("a hook's ask goes to a person in every mode: the approver would be asked")
            elif self._mode == "dontAsk":
                result.decision = _dont_ask(tool.name, result.decision)
                result.behavior = "deny"
                result.steps.append("dontAsk mode turns the ask into a deny")
            elif self._mode == "auto":
                result.steps.append("auto mode: the classifier would decide (unless this ask must reach a person)")
            else:
                result.steps.append("the approver would be asked")
        return result

    def tool_for(self, name: str) -> Tool:
        """The tool a decision by name is made for: one given as ``tools=``, else a stand-in
        known only by its name (a transcript replay meets tools no registry here has)."""
        return self.tools.get(name) or _NamedTool(name)

    async def _place(self, facts: CallFacts) -> None:
        """Where a Bash command will run, and what that changes for its checks: under a
        sandbox whose masks cover every Read deny rule, the kernel enforces those reads;
        with autoAllowBashIfSandboxed, a sandboxed command needs no prompt."""
        command = facts.input.get("command")
        if not isinstance(command, str):
            return
        settings = self.sandbox
        await settings.probe()  # the first probe starts a process: not on the loop
        read_only = _read_only(facts.tool, facts.parsed, facts.cwd)
        facts.placement = settings.placement(read_only=read_only, excluded=settings.excludes(command, tuple(self.working_dirs)),
                                             disable_requested=facts.input.get("dangerouslyDisableSandbox") is True)
        if facts.placement.sandbox is None:
            return
        facts.auto_allow = settings.auto_allows
        # git's objects hold copies of protected files that no mask covers: such a line is
        # still judged by the Read rules.
        facts.masked_reads = facts.masked_everywhere = not shows_repository_content(command)
        if facts.masked_reads and settings.deny_read:
            policy = settings.policy(facts.placement.sandbox, writable=tuple(self.working_dirs), tmp_dir=None)
            facts.masked_reads, facts.masked_everywhere = await asyncio.to_thread(masks_coverage, policy, facts.cwd)

    def _facts(self, tool: Tool, input: dict[str, Any], parsed: Any, ctx: ToolContext, mode: str | None = None) -> CallFacts:
        return CallFacts(tool, input, parsed, ctx.cwd, mode or self._mode, self.rules, self.additional_dirs, self.home, self.split_command)

    async def _own_check(self, facts: CallFacts, ctx: ToolContext) -> Decision:
        """The tool's check_permissions and the built-in checks for its kind, combined."""
        if tool_kind(facts.tool) == "shell" and facts.tool.name == "Bash":
            await self._place(facts)
        try:
            own = await facts.tool.check_permissions(facts.parsed, ctx) if overrides(facts.tool, "check_permissions") else PASSTHROUGH
        except (AbortError, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - as in Claude Code: a failing check says nothing
            own = Decision.passthrough()
        builtin = await _off_loop_if_long(builtin_check, facts)
        for candidate in (own, builtin):
            if candidate.behavior == "deny":
                return candidate
        for candidate in (builtin, own):
            if is_immune_ask(candidate):
                return candidate
        for candidate in (own, builtin):
            if candidate.behavior == "ask":
                return candidate
        if builtin.behavior == "allow":
            return builtin if own.updated_input is None else replace(builtin, updated_input=own.updated_input)
        if own.behavior == "allow":
            return own if own.reason else replace(own, reason=DecisionReason("tool", f"{facts.tool.name}'s own check allows it"))
        return builtin if builtin.message or builtin.suggestions else own

    async def _evaluate(
        self,
        tool: Tool,
        input: dict[str, Any],
        parsed: Any,
        ctx: ToolContext,
        hook: Decision | None,
        mode: Mode | None = None,
        steps: list[str] | None = None,
    ) -> Decision:
        """The decision before any approver is asked. ``steps`` (only ``explain`` passes a
        list) collects why, step by step; a run pays for no explanation it never reads.

        For a tool whose decision cannot depend on its input (``_input_free``) and no hook
        decision, the answer is remembered per tool and mode until a rule is added: the
        common case of a plain ``@tool`` function costs one lookup per call."""
        mode = mode or self._mode
        if hook is not None or steps is not None or not _input_free(tool):
            return await self._judge(tool, input, parsed, ctx, hook, mode, steps)
        known = self._remembered(tool, hook, mode)
        if known is not None:
            return known
        decision = await self._judge(tool, input, parsed, ctx, hook, mode, steps)
        self.rules.decisions[(id(tool), mode)] = (tool, decision)
        return decision

    def _remembered(self, tool: Tool, hook: Decision | None, mode: Mode) -> Decision | None:
        """The decision ``_evaluate`` remembered for an input-free tool in this mode, if any."""
        if hook is not None or not _input_free(tool):
            return None
        known = self.rules.decisions.get((id(tool), mode))
        return known[1] if known is not None and known[0] is tool else None

    async def _judge(
        self,
        tool: Tool,
        input: dict[str, Any],
        parsed: Any,
        ctx: ToolContext,
        hook: Decision | None,
        mode: Mode,
        steps: list[str] | None,
    ) -> Decision:
        """Every rule, check and mode, in Claude Code's order."""

        def done(decision: Decision, step: str) -> Decision:
            if steps is not None:
                steps.append(step)
            if decision.behavior == "allow" and decision.updated_input is None and updated is not None:
                return replace(decision, updated_input=updated)
            return decision
        updated = hook.updated_input if hook is not None and hook.behavior in ("allow", "ask") else None
        if hook is not None and hook.behavior == "deny":
            return done(hook, "a PreToolUse hook denied the call")
        if updated is not None:
            # Everything below judges the input that will run; one the tool cannot take
            # is refused rather than judged by the input it replaced.
            reparsed = _parse(tool, updated, _INVALID)
            if reparsed is _INVALID:
                return done(
                    Decision.deny(
                        f"A PreToolUse hook changed the {tool.name} input into one the tool does not accept, so the call was not run.",
                        DecisionReason("hook", "invalid updatedInput"),
                    ),
                    "a PreToolUse hook's updatedInput does not validate",
                )
            input, parsed = updated, reparsed
        rule = self.rules.tool_wide("deny", tool.name, tool.aliases)
        if rule is not None:
            return done(
                Decision.deny(f"Permission denied: every use of {tool.name} is blocked by the rule {rule.text} ({rule.origin or rule.source}).", _reason(rule, "tool-wide deny rule")),
                f"tool-wide deny rule {rule.text} matched",
            )
        if steps is not None:
            steps.append("no tool-wide deny rule")
        own = await self._own_check(self._facts(tool, input, parsed, ctx, mode), ctx)
        if steps is not None:
            steps.append(f"the tool's own check ({tool_kind(tool)}): {own.behavior}" + (f" — {own.reason.describe()}" if own.reason else ""))
        if own.behavior == "deny":
            return done(own, "the tool's own check denied it")
        if mode == "plan" and not _read_only(tool, parsed, ctx.cwd):
            return done(
                Decision.deny(
                    f"Plan mode allows only read-only tools, and this {tool.name} call can change things. Finish the plan and present it instead.",
                    DecisionReason("mode", "plan mode: not read-only"),
                ),
                "plan mode refuses a call that is not read-only",
            )
        rule = self.rules.tool_wide("ask", tool.name, tool.aliases)
        if rule is not None:
            return done(
                Decision.ask(f"The rule {rule.text} ({rule.origin or rule.source}) asks for approval before any use of {tool.name}.", _reason(rule, "tool-wide ask rule")),
                f"tool-wide ask rule {rule.text} matched",
            )
        if own.behavior == "ask" and (_requires_person(tool) or is_immune_ask(own)):
            return done(own, "an ask that even bypass mode and hook approvals keep")
        if hook is not None and hook.behavior == "allow" and not (_requires_person(tool) and hook.updated_input is None):
            return done(hook, "a PreToolUse hook allowed it and no rule objected")
        if hook is not None and hook.behavior == "ask":
            return done(hook, "a PreToolUse hook asked for approval")
        if mode == "bypassPermissions":
            return done(Decision.allow(None, DecisionReason("mode", "bypassPermissions allows it")), "bypassPermissions mode")
        rule = self.rules.tool_wide("allow", tool.name, tool.aliases)
        if rule is not None:
            return done(Decision.allow(None, _reason(rule, "tool-wide allow rule")), f"tool-wide allow rule {rule.text} matched")
        if own.behavior in ("allow", "ask"):
            return done(own, f"the tool's own check said {own.behavior}")
        if _read_only(tool, parsed, ctx.cwd) and not tool.is_mcp and tool_kind(tool) == "generic":
            return done(_read_only_allow(tool.name), "a read-only tool with no rule against it")
        return done(
            Decision.ask(own.message or _ask_text(tool), DecisionReason("default", "no rule allows it"), own.suggestions),
            "nothing allowed it, so it needs approval",
        )


# -- helpers -------------------------------------------------------------------------------------
_LONG_INPUT = 2048  # characters of a shell command past which its checks run in a worker thread


async def _off_loop_if_long(check: Callable[[CallFacts], Decision], facts: CallFacts) -> Decision:
    """Checks of a long command line parse and walk it: in a worker thread, so the event
    loop (other calls' progress, a notebook's widgets) never waits for them."""
    field_name = shell_field(facts.tool)
    command = facts.input.get(field_name) if field_name else None
    if isinstance(command, str) and len(command) > _LONG_INPUT:
        return await asyncio.to_thread(check, facts)
    return check(facts)


@functools.lru_cache(maxsize=1024)
def _read_only_allow(tool_name: str) -> Decision:
    """The (immutable) decision that lets a read-only call through; one per tool, not per call."""
    return Decision.allow(None, DecisionReason("tool", f"{tool_name} is read-only for this input"))


def _reason(rule: PermissionRule, detail: str) -> DecisionReason:
    return DecisionReason("rule", detail, rule=rule.text, source=rule.origin or rule.source)


def _ask_text(tool: Tool) -> str:
    return f"{tool.name} needs permission to run, and no rule allows it yet."


def _changes(updated: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    """Whether a hook's or the approver's ``updated_input`` differs from the input already checked."""
    return updated is not None and updated != current


def _from_hook(decision: Decision) -> bool:
    return decision.reason is not None and decision.reason.kind == "hook"


def _rule_value(rule: str) -> dict[str, Any]:
    """A rule string as Claude Code's PermissionRuleValue (``toolName``, ``ruleContent``)."""
    try:
        value = parse_rule(rule)
    except ValueError:
        return {"toolName": rule}
    return {"toolName": value.tool} if value.content is None else {"toolName": value.tool, "ruleContent": value.content}


def _dont_ask(tool_name: str, decision: Decision) -> Decision:
    why = decision.message or "it needs approval"
    return Decision.deny(
        f"This {tool_name} call needs approval, but the permission mode is {MODE_TITLES['dontAsk']!r}, which never asks, so it was denied ({why}).",
        DecisionReason("mode", "dontAsk turns every ask into a deny"),
    )


def _rejection(tool_name: str, decision: Decision, answer: ApprovalAnswer) -> Decision:
    if answer.by_policy:
        return Decision.deny(
            f"This {tool_name} call needs approval ({decision.message or 'no rule allows it'}), and no one can approve it in this headless run, so it was denied.",
            DecisionReason("policy", "headless deny policy"),
        )
    if answer.feedback:
        return replace(
            Decision.deny(f"The user rejected this {tool_name} call and said: {answer.feedback}", DecisionReason("user", "rejected with feedback")),
            feedback=answer.feedback,
        )
    return Decision.deny(
        f"The user rejected this {tool_name} call. Stop here and wait for the user to say how to go on.",
        DecisionReason("user", "rejected"),
        abort_turn=True,
    )


def _requires_person(tool: Tool) -> bool:
    try:
        return bool(tool.requires_user_interaction())
    except Exception:  # noqa: BLE001
        return True


_INPUT_FREE: dict[type, bool] = {}
# What, set on one tool object, could make its decisions depend on the input after all.
_PER_TOOL_OVERRIDES = frozenset({"check_permissions", "permission_content", "is_read_only", "is_read_only_in",
                                 "permission_kind", "is_mcp"})


def _input_free(tool: Tool) -> bool:
    """Whether every decision about this tool is the same for any input: a plain function
    tool (``@tool``) of the generic kind, with no permission check and no rule content of
    its own and a read-only answer fixed when it was declared. Anything else (file, shell
    and web tools, MCP tools, subclasses that answer per input) is judged call by call."""
    cls = type(tool)
    fixed = _INPUT_FREE.get(cls)
    if fixed is None:
        fixed = _INPUT_FREE[cls] = (
            issubclass(cls, FunctionTool)
            and cls.is_read_only is FunctionTool.is_read_only
            and cls.is_read_only_in is Tool.is_read_only_in
            and cls.check_permissions is Tool.check_permissions
            and not hasattr(cls, "permission_content")
            and cls.permission_kind == "generic"
            and not cls.is_mcp
        )
    return fixed and _PER_TOOL_OVERRIDES.isdisjoint(vars(tool))


def _read_only(tool: Tool, parsed: Any, cwd: str) -> bool:
    try:
        return bool(tool.is_read_only_in(parsed, cwd))
    except Exception:  # noqa: BLE001 - cannot tell: treat as a write
        return False


_MAX_REASKS = 3  # how often the approver is asked again about inputs it edited itself
_INVALID = object()  # _parse's fallback when a rejected input must not be judged at all


def _parse(tool: Tool, data: dict[str, Any], fallback: Any = None) -> Any:
    model = getattr(tool, "input_model", None)
    try:
        return model.model_validate(data) if model is not None and not isinstance(tool, _NamedTool) else data
    except Exception:  # noqa: BLE001 - an input the model rejects: checks read the dict
        return fallback if fallback is not None else data


def _default_suggestions(tool: Tool, data: dict[str, Any], cwd: str) -> tuple[str, ...]:
    """The narrow rule "always allow" saves: a command prefix (``Bash(git log:*)``) or,
    for a file edit, its folder (``Edit(src/**)``; the file itself at the top level)."""
    field_name = shell_field(tool)
    if field_name and isinstance(data.get(field_name), str):
        rule = suggest_shell_rule(data[field_name], tool.name)
        return (rule,) if rule else ()
    if tool.permission_kind == "edit":
        target = _edit_target(tool, data, cwd)
        if target is not None:
            folder, name = target
            return (f"Edit({escape_rule_content(folder)}/**)",) if folder else (f"Edit({escape_rule_content(name)})",)
    return (tool.name,)


def _alternative_rules(tool: Tool, data: dict[str, Any], cwd: str) -> tuple[str, ...]:
    """Other rules a person may save instead, narrowest first, ending with the whole tool."""
    field_name = shell_field(tool)
    found: list[str] = []
    if field_name and isinstance(data.get(field_name), str):
        command = data[field_name].strip()
        if command and "\n" not in command:
            found.append(f"{tool.name}({escape_rule_content(command)})")
    elif tool.permission_kind == "edit":
        target = _edit_target(tool, data, cwd)
        if target is not None and target[0]:
            found.append(f"Edit({escape_rule_content(target[0] + '/' + target[1])})")
    found.append("Edit" if tool.permission_kind == "edit" else tool.name)
    return tuple(dict.fromkeys(found))


def _edit_target(tool: Tool, data: dict[str, Any], cwd: str) -> tuple[str, str] | None:
    """(folder, file name) of an edit's path: relative to cwd inside it, ``//absolute`` outside."""
    raw = next((data[k] for k in (getattr(tool, "path_field", "file_path"), "file_path", "notebook_path", "path")
                if isinstance(data.get(k), str)), None)
    if not raw:
        return None
    path = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))
    folder, name = os.path.split(path)
    root = os.path.normpath(cwd)
    if folder == root:
        return "", name
    if folder.startswith(root + os.sep):
        return os.path.relpath(folder, root).replace(os.sep, "/"), name
    return "/" + folder, name  # Claude Code's //absolute form


def _run_sync(coro: Any) -> Any:
    """Run a coroutine to the end from sync code, even inside a running loop (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name="nbtoolsched-explain")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
