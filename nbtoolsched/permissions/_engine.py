"""``Permissions``: the PermissionGate, deciding in Claude Code's order.

Order (reference §4.4 and §3.3 step 7):
  hook deny → tool-wide deny → the tool's own check (its deny; then, in plan mode, any
  call that is not read-only is denied) → tool-wide ask → own ask that must prompt
  (content ask rule, safety check, a tool needing a person) → hook ask / hook allow →
  bypassPermissions → tool-wide allow → own allow → ask.
An ``ask`` from the rules is then settled by the mode: dontAsk denies it; auto allows it
when the acceptEdits fast path or the safe-tool allowlist does (reference §4.2), else lets
the classifier decide (until it has refused too often); otherwise a person is asked. A
PreToolUse hook's ``ask`` goes to the person in every mode, as in Claude Code (its
dontAsk and auto mode convert only the rule engine's asks). Before a person is asked,
PermissionRequest hooks may answer instead; after the classifier refuses a call,
PermissionDenied hooks run.
Deliberately stricter than Claude Code in five places: a hook's ``ask`` does not skip
deny rules; the tool's own deny (a content deny rule) is read before a tool-wide ask rule
(Claude Code asks at step 1b first, and a yes runs the call); plan mode denies (rather than
asks for) calls that are not read-only; auto mode keeps an ask rule's ask for a person
(Claude Code sends it through the fast paths and the classifier); and an input that a
PermissionRequest hook or the approver puts in place is checked again (``_recheck``)
instead of being run as given.

The class is built in layers, one job per module, each importing only the ones below:
``_own_check`` (the tool's own check, where a Bash command runs), ``_judge`` (the rule
order), ``_asking`` (hooks and the approver asked for a person), and here the settings,
the gate's ``decide`` (the mode settling an ask, auto mode's classifier) and ``explain``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from pydantic import BaseModel

from .._sync import run_sync
from .._tool._decision import Decision, DecisionReason
from .._tool._base import Tool
from .._tool._context import ToolContext
from ._approvals import Approver
from ._asking import AskPerson
from ._base import PermissionRequest
from ._checks import is_immune_ask, read_only_in, read_protection
from ._classifier import Classifier, ClassifierRequest, DenialTracker, PatternClassifier
from ._explanation import Explanation, NamedTool
from ._hooks import Hooks
from ._judge import _from_hook, _parse, _requires_person
from ._modes import AUTO_SAFE_TOOLS, MODE_TITLES, Mode, check_mode
from ._problems import LoadProblem
from ._rules import Behavior, PermissionRule, RuleSet, make_rule, rules_from
from ..sandbox._settings import SandboxSettings
from ..shell import default_split, lexical_paths
from ._sandbox import settings_from_python, with_rules
from ._settings import load_settings

__all__ = ["Permissions", "Explanation"]

RuleSpec = str | Mapping[str, Any] | PermissionRule


class Permissions(AskPerson):
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
        self.cwd = lexical_paths.realpath(os.fspath(cwd or os.getcwd()))  # resolved, but as written in a replay
        self.rules = RuleSet()
        for rule in rules:
            self.rules.add(rule)
        for behavior, specs in (("allow", allow), ("deny", deny), ("ask", ask)):
            for rule in rules_from(specs, behavior, source="python", root=self.cwd):  # type: ignore[arg-type]
                self.rules.add(rule)
        self.additional_dirs = [os.path.normpath(os.path.join(self.cwd, os.path.expanduser(str(d)))) for d in additional_dirs]
        # Who answers for a person; None: the scheduler's, else the headless policy
        # (``resolve_approver``, once per run).
        self.approver = approver
        self.classifier: Classifier = classifier if classifier is not None else PatternClassifier()
        self.denials = DenialTracker()
        # The hooks that come with these settings. They are held here only: a scheduler
        # given these permissions reads them from here at each call (it keeps no copy).
        self.hooks = hooks
        self.home = home or os.path.expanduser("~")
        self.split_command = split_command or default_split  # the shell layer's; None (so: ask) when it cannot split
        self.tools = {t.name: t for t in tools}
        self._waiting = {}
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
        key = (self._sandbox, tuple(self.rules.rules), self.cwd, self.home, tuple(self.working_dirs))
        cached = self.__dict__.get("_sandbox_merged")
        if cached is None or cached[0] != key:  # merged again only when the rules or folders change
            cached = (key, with_rules(self._sandbox, self.rules.rules, cwd=self.cwd, home=self.home, working_dirs=self.working_dirs))
            self.__dict__["_sandbox_merged"] = cached
        return cached[1]

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
        return (await self.decide_with_cause(request))[1]

    async def decide_with_cause(self, request: PermissionRequest) -> tuple[Decision, Decision]:
        """``decide``, and the decision of the rule order that led to it: (rules, final),
        the same object unless an ask was settled (by the mode, the classifier, a
        PermissionRequest hook or a person). A replay reads both from one judgement."""
        mode = check_mode(request.mode) if request.mode else self._mode  # a run may override the mode
        decision = self._remembered(request.tool, request.hook_decision, mode)  # no await for the common case
        if decision is None:
            decision = await self._evaluate(request.tool, request.input, request.parsed, request.ctx, request.hook_decision, mode)
        if decision.behavior == "allow":
            self.denials.record_allow()
            return decision, decision
        if decision.behavior == "deny":
            return decision, decision
        return decision, await self._settle_ask(request, decision, mode)

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
        if _auto_keeps_for_person(tool, decision):
            return None
        fast = await self._auto_fast(tool, request.input, request.parsed, request.ctx)
        if fast is not None:
            self.denials.record_allow()
            return fast
        if self.denials.exhausted:
            return None
        verdict = await self.classifier.classify(
            ClassifierRequest(tool.name, request.input, request.ctx.cwd, read_only_in(tool, request.parsed, request.ctx.cwd), decision.message or "")
        )
        if verdict.allow:
            self.denials.record_allow()
            return Decision.allow(None, DecisionReason("classifier", verdict.reason))
        self.denials.record_denial()
        message = f"Auto mode refused this {tool.name} call: {verdict.reason}. Try a safer way to reach the goal, or ask the user."
        if await self._permission_denied(request, verdict.reason):
            message += " The PermissionDenied hook indicated this command is now approved. You may retry it if you would like."
        return Decision.deny(message, DecisionReason("classifier", verdict.reason))

    async def _auto_fast(self, tool: Tool, input: dict[str, Any], parsed: Any, ctx: ToolContext) -> Decision | None:
        """Auto mode's allows that need no classifier (reference §4.2): the acceptEdits fast
        path (the tool's own check, judged as in acceptEdits mode, allows the call), then
        the safe-tool allowlist; None when neither applies and the classifier decides.
        A run (``_auto``) and ``explain`` both ask this, so they agree."""
        fast = await self._own_check(self._facts(tool, input, parsed, ctx, mode="acceptEdits"), ctx)
        if fast.behavior == "allow":
            return replace(fast, reason=DecisionReason("mode", "auto mode: allowed as acceptEdits would allow it"))
        if tool.name in AUTO_SAFE_TOOLS:
            return Decision.allow(None, DecisionReason("mode", f"auto mode allows {tool.name} without asking"))
        return None

    # -- explaining (everything before asking) ------------------------------------------------
    async def evaluate(
        self, tool: Tool, input: dict[str, Any], parsed: BaseModel | dict[str, Any] | None = None,
        ctx: ToolContext | None = None, hook_decision: Decision | None = None, *, explain: bool = True,
    ) -> Explanation:
        """The decision before any approver or classifier is consulted, with its steps
        (``parsed``: the tool's input model, parsed from ``input`` when not given;
        ``explain=False`` leaves the steps out, for a caller that only needs the decision)."""
        ctx = ctx or ToolContext(self.cwd, permission_context=self)
        steps: list[str] | None = [] if explain else None
        parsed = parsed if parsed is not None else _parse(tool, input)
        decision = await self._evaluate(tool, input, parsed, ctx, hook_decision, None, steps)
        return Explanation(tool.name, decision.behavior, decision, steps if steps is not None else [])

    def explain(
        self, tool_name: str | Tool, input: dict[str, Any], *, cwd: str | None = None, hook_decision: Decision | None = None
    ) -> Explanation:
        """Which rule, hook, mode or check decides this call, and why (runs no approver).

        A plain call, also inside a running loop: the judging needs nothing of the caller's
        loop, so it runs on one of its own (``run_sync(..., reenter=False)``)."""
        tool = tool_name if isinstance(tool_name, Tool) else self.tool_for(tool_name)
        ctx = ToolContext(cwd or self.cwd, permission_context=self)
        return run_sync(self._explained(tool, input, ctx, hook_decision), reenter=False)

    async def _explained(self, tool: Tool, input: dict[str, Any], ctx: ToolContext, hook_decision: Decision | None) -> Explanation:
        """``explain``'s work: the rule order, then what the mode does with an ask, as a run
        would settle it short of asking a person or the classifier."""
        result = await self.evaluate(tool, input, None, ctx, hook_decision)
        if result.behavior != "ask":
            return result
        if _from_hook(result.decision):
            result.steps.append("a hook's ask goes to a person in every mode: the approver would be asked")
        elif self._mode == "dontAsk":
            result.decision = _dont_ask(tool.name, result.decision)
            result.behavior = "deny"
            result.steps.append("dontAsk mode turns the ask into a deny")
        elif self._mode == "auto":
            if _auto_keeps_for_person(tool, result.decision):
                result.steps.append("auto mode keeps this ask for a person (an ask rule, a safety check or a tool that needs one): the approver would be asked")
                return result
            judged = hook_decision.updated_input if hook_decision is not None and hook_decision.updated_input is not None else input
            fast = await self._auto_fast(tool, judged, _parse(tool, judged), ctx)
            if fast is None:
                result.steps.append("auto mode: the classifier would decide (explain runs no classifier)")
            else:
                result.decision, result.behavior = fast, "allow"
                result.steps.append(f"auto mode settles the ask without the classifier: {fast.reason.describe() if fast.reason else 'allowed'}")
        else:
            result.steps.append("the approver would be asked")
        return result

    def tool_for(self, name: str) -> Tool:
        """The tool a decision by name is made for: one given as ``tools=``, else a stand-in
        known only by its name (a transcript replay meets tools no registry here has)."""
        return self.tools.get(name) or NamedTool(name)


def _auto_keeps_for_person(tool: Tool, decision: Decision) -> bool:
    """An ask auto mode never settles itself: an ask rule's, a safety check's, or one for a
    tool that needs a person (stricter than Claude Code for ask rules, which there reach
    the acceptEdits fast path, the safe-tool allowlist and the classifier)."""
    return is_immune_ask(decision) or _requires_person(tool)


def _dont_ask(tool_name: str, decision: Decision) -> Decision:
    why = decision.message or "it needs approval"
    return Decision.deny(
        f"This {tool_name} call needs approval, but the permission mode is {MODE_TITLES['dontAsk']!r}, which never asks, so it was denied ({why}).",
        DecisionReason("mode", "dontAsk turns every ask into a deny"),
    )
