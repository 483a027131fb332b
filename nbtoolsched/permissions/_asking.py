"""Asking a person: PermissionRequest hooks first, then the approver; and what follows.

An input either of them puts in place is checked again (``_recheck``) instead of being
run as given (stricter than Claude Code). The person is offered the narrowest rule that
covers the call first (``_suggestions``: the exact command, the file), broader ones after.
"Always allow" saves session rules, also in .claude/settings.local.json when its answer's
destination is localSettings (Claude Code's "don't ask again"), says so in the allowed
call's reason, and answers the calls still waiting that those rules now allow
(``_release_covered``). After the classifier refuses a call, PermissionDenied hooks run
(``_permission_denied``).

``AskPerson`` is the layer of ``Permissions`` above the rule order (``_judge``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping

from .._tool._abort import AbortError
from .._tool._decision import Decision, DecisionReason
from .._tool._base import overrides
from ._approvals import ApprovalAnswer, ApprovalRequest, Approver, resolve_approver, saved_rules_text
from ._base import ApprovalDeferred, HookEvent, PermissionRequest
from ._builtin import builtin_check
from ._checks import shell_field
from ._classifier import DenialTracker
from ._errors import PermissionConfigError
from ._hooks import Hooks
from ._judge import _INVALID, RuleOrder, _ask_text, _from_hook, _parse
from ._modes import Mode
from ._own_check import _LONG_INPUT
from ._rules import Behavior, PermissionRule, RuleSet, claude_code_rule_problem, escape_rule_content, make_rule, parse_rule
from ._settings import save_local_rules
from ._suggestions import Covers, RuleChoices, rule_choices

__all__ = ["AskPerson"]

log = logging.getLogger(__name__)
_MAX_REASKS = 3  # how often the approver is asked again about inputs it edited itself


class AskPerson(RuleOrder):
    """PermissionRequest hooks, the approver, and what their answers lead to."""

    # What the gate holds (set by Permissions.__init__).
    cwd: str  # the project: where "always allow" with destination localSettings writes
    approver: Approver | None
    denials: DenialTracker
    hooks: Hooks | None
    # calls waiting for a person right now: what they asked with, in which mode, whom
    _waiting: dict[str, tuple[PermissionRequest, Mode, Approver]]

    if TYPE_CHECKING:
        def add_session_rule(self, rule: Any, behavior: Behavior = "allow") -> PermissionRule: ...

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
        """PermissionRequest hooks answer for the person when they allow or deny. Their
        ``permission_suggestions`` are what the person's "always allow" saves by default
        (the approval request's ``suggested_rules``, narrowest first), one ``addRules``
        each, for localSettings as in Claude Code; never the alternatives, so a hook that
        hands them all back as ``updatedPermissions`` adds no broader rule."""
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

    # -- the person ------------------------------------------------------------------------------
    async def _ask_person(self, request: PermissionRequest, decision: Decision, mode: Mode) -> Decision:
        """PermissionRequest hooks, then the approver; an input either of them changes is
        checked again before it may run (``_recheck``)."""
        tool = request.tool
        # A run's approver was resolved (and wrapped) once when the run started; a call
        # judged outside any run resolves the gate's own the same way.
        approver = request.approver if request.approver is not None else resolve_approver(self.approver)
        # The rules to offer cost a walk of the call's checks per candidate: worked out only
        # for someone who may use them (a PermissionRequest hook, an approver that does not
        # say ``wants_rule_choices = False``, as a replay's simulated person may).
        offer = self._runner(request, "permission_request") is not None or getattr(approver, "wants_rule_choices", True)
        choices = await self._choices(request, decision, mode) if offer else RuleChoices()
        hooked = await self._permission_request(request, choices.suggested)
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
        shown: set[str] = set()
        for _ in range(_MAX_REASKS + 1):
            message = decision.message or _ask_text(tool)
            shown.add(message)
            if changed is not None and offer:  # rules to save for the input being approved, not the one it replaced
                choices = await self._choices(request, decision, mode)
            asked = ApprovalRequest(request.tool_use_id, tool.name, dict(request.input), message, choices.suggested, choices.alternatives)
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
            note = await self._save_always(asked, answer, approver) if answer.kind == "allow_always" else None
            if answer.kind == "allow" and answer.rules and not answer.by_policy:
                why = DecisionReason("rule", f"allowed by {', '.join(answer.rules)}, saved while it waited", rule=answer.rules[0], source="session")
                approved = Decision.allow(None, why)
            else:
                who = "a headless allow policy" if answer.by_policy else "the user"
                approved = Decision.allow(None, DecisionReason("user", f"approved by {who}" + (f"; {note}" if note else "")))
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
            holder = _holder(asked)
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

    # -- the rules offered, and keeping them ----------------------------------------------------
    async def _choices(self, request: PermissionRequest, decision: Decision, mode: Mode) -> RuleChoices:
        """The rules this call's person is offered (``_suggestions``), each judged by whether
        saving it would let the call run under the gate's rules; off the loop for a long
        command, whose checks walk it."""
        compute = functools.partial(rule_choices, request.tool, request.input, request.ctx.cwd, hints=decision.suggestions,
                                    covers=self._covering(request, mode), root=self.cwd)
        field_name = shell_field(request.tool)
        command = request.input.get(field_name) if field_name else None
        try:
            if isinstance(command, str) and len(command) > _LONG_INPUT:
                return await asyncio.to_thread(compute)
            return compute()
        except Exception:  # noqa: BLE001 - no rule to offer is better than no question
            log.exception("the rules to offer for %s could not be worked out", request.tool.name)
            return RuleChoices()

    def _covering(self, request: PermissionRequest, mode: Mode) -> Covers:
        """``covers(rules)``: would the tool's built-in check allow this call were ``rules``
        saved as session rules? Judged on a copy of the rules (the gate's stay as they are)."""
        base = self._facts(request.tool, request.input, request.parsed, request.ctx, mode)
        shell = shell_field(request.tool) is not None
        known = self.rules.rules

        def covers(rules: tuple[str, ...]) -> bool:
            trial = RuleSet(known)
            try:
                for text in rules:
                    trial.add(make_rule(text, "allow", source="session", root=self.cwd))
                if shell:
                    base.shell_line()  # the line's facts, worked out once and shared by every trial
                verdict = builtin_check(replace(base, rules=trial, steps=[])).behavior
                if verdict != "passthrough":
                    return verdict == "allow"
                # the tool's own check has no say: the rule order's tool-wide rules decide
                # (an ask rule before an allow rule), as they would for the real call
                tool = request.tool
                return (trial.tool_wide("ask", tool.name, tool.aliases) is None
                        and trial.tool_wide("allow", tool.name, tool.aliases) is not None)
            except Exception:  # noqa: BLE001 - a rule or check that fails covers nothing
                return False

        return covers

    async def _save_always(self, asked: ApprovalRequest, answer: ApprovalAnswer, approver: Approver) -> str:
        """Keep what an "always allow" answer names (its rules, else the suggested ones) as
        session rules and, for ``destination="localSettings"``, in the project's
        .claude/settings.local.json too; release the waiting calls they now cover. Returns
        what was saved, where, or why the file refused (``saved_rules_text``), which the
        approver's holder is also told (``tell_saved``: a broker's ``saved`` event)."""
        saved: list[str] = []
        for rule in answer.rules or asked.suggested_rules:
            try:
                saved.append(self.add_session_rule(rule).text)
            except PermissionConfigError:
                pass  # a suggestion the person could not have meant: the one call is still allowed
        saved = list(dict.fromkeys(saved))
        # A rule Claude Code's settings would drop (a lowercase tool name) stays in the session.
        kept = [rule for rule in saved if claude_code_rule_problem(rule) is None]
        session_only = [rule for rule in saved if rule not in kept]
        if answer.destination != "localSettings" or not saved:
            note = saved_rules_text(saved, answer.destination)
        else:
            note = save_local_rules(self.cwd, kept).text if kept else ""
            if session_only:
                problems = "; ".join(sorted({str((claude_code_rule_problem(r) or ("", ""))[1]) for r in session_only}))
                note = "; ".join(filter(None, [note, f"saved {', '.join(session_only)} for this session only "
                                                     f"(a settings file would not keep it: {problems})"]))
        if saved:
            await self._release_covered(saved)
        tell = getattr(_holder(approver), "tell_saved", None)
        if callable(tell):
            try:
                tell(asked, answer, note)
            except Exception:  # noqa: BLE001 - telling a UI must not undo the approval
                log.exception("telling %r what was saved failed", approver)
        return note


# -- helpers -------------------------------------------------------------------------------------
def _changes(updated: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    """Whether a hook's or the approver's ``updated_input`` differs from the input already checked."""
    return updated is not None and updated != current


def _rule_value(rule: str) -> dict[str, Any]:
    """A rule string as Claude Code's PermissionRuleValue (``toolName``, ``ruleContent``)."""
    try:
        value = parse_rule(rule)
    except ValueError:
        return {"toolName": rule}
    return {"toolName": value.tool} if value.content is None else {"toolName": value.tool, "ruleContent": value.content}


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


def _holder(approver: Any) -> Any:
    """Who really holds the requests (a broker) behind a run's tracing wrapper."""
    while hasattr(approver, "__wrapped__"):
        approver = approver.__wrapped__
    return approver
