"""Asking a person: approval requests, answers, and a broker that holds them.

An approver is any async callable ``ApprovalRequest -> ApprovalAnswer``. The
``ApprovalBroker`` is the one a notebook or script uses: every pending request is kept
by tool_use_id, several may wait at once (allowed calls keep running meanwhile), and
they can be answered one at a time, all at once, or a chosen set. Observers are plain
sync callables (a UI re-renders from them); answers coming from another thread (a
widget click on a kernel subshell) go through ``answer_threadsafe``.

Headless runs pick a policy instead of a person: ``allow``, ``deny`` or ``defer``
(``defer`` raises ApprovalDeferred, so the scheduler can stop with a serialisable set of
pending approvals and resume later with ``preload``ed answers). The environment
variable NBTOOLSCHED_APPROVAL chooses it when the code does not.

A run has one approver, resolved once when it starts (``resolve_approver``): the run's
override, else the scheduler's, else the permissions', else the headless policy.

An "always allow" answer names where its rules go (``destination``): the session, or also
the project's .claude/settings.local.json, as Claude Code's "Yes, and don't ask again".
What was saved is worded by ``saved_rules_text``: the allowed call's reason says it, and
a broker tells its observers (a ``saved`` event).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from dataclasses import asdict, dataclass
from typing import Any, Awaitable, Callable, Iterable, Literal, Mapping

from ._base import ApprovalDeferred

__all__ = [
    "ApprovalRequest",
    "ApprovalAnswer",
    "Destination",
    "DESTINATIONS",
    "LOCAL_SETTINGS",
    "saved_rules_text",
    "Approver",
    "ApprovalBroker",
    "BrokerEvent",
    "Policy",
    "APPROVAL_ENV",
    "policy_from_env",
    "resolve_approver",
    "headless_approver",
]

log = logging.getLogger(__name__)
APPROVAL_ENV = "NBTOOLSCHED_APPROVAL"
Policy = Literal["interactive", "allow", "deny", "defer"]
_POLICIES = ("interactive", "allow", "deny", "defer")


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person is asked: which call, with what input, why, and rules they could save."""

    tool_use_id: str
    tool_name: str
    input: dict[str, Any]
    reason: str
    suggested_rules: tuple[str, ...] = ()  # what "always allow" saves by default (all of them together)
    alternatives: tuple[str, ...] = ()  # other single rules a person may save instead (narrow to broad)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["suggested_rules"] = list(self.suggested_rules)
        data["alternatives"] = list(self.alternatives)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ApprovalRequest":
        return cls(data["tool_use_id"], data["tool_name"], dict(data["input"]), data["reason"],
                   tuple(data.get("suggested_rules", ())), tuple(data.get("alternatives", ())))


AnswerKind = Literal["allow", "allow_always", "deny"]
# Where "always allow" keeps its rules: for this session only, or also in the project's
# .claude/settings.local.json (Claude Code's "Yes, and don't ask again": localSettings).
Destination = Literal["session", "localSettings"]
DESTINATIONS: tuple[Destination, ...] = ("session", "localSettings")
LOCAL_SETTINGS = ".claude/settings.local.json"  # the localSettings file, as the project names it


def check_destination(destination: object) -> Destination:
    """``destination`` as a Destination; a ValueError naming the ones there are otherwise."""
    for known in DESTINATIONS:
        if destination == known:
            return known
    raise ValueError(f"an approval answer's destination must be one of {', '.join(DESTINATIONS)}, not {destination!r}")


@dataclass(frozen=True)
class ApprovalAnswer:
    kind: AnswerKind
    feedback: str | None = None  # deny: goes to the model; allow: travels with the result
    # allow_always: the rules to save (default: the suggested ones); allow: the rules that
    # released this call while it waited (a sibling's "always allow" covered it)
    rules: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None  # the person edited the call
    by_policy: bool = False  # a headless policy answered, not a person
    # allow_always: "session" (session rules only) or "localSettings" (session rules, and
    # written into the project's .claude/settings.local.json)
    destination: Destination = "session"

    def __post_init__(self) -> None:
        check_destination(self.destination)

    @classmethod
    def allow(cls, feedback: str | None = None, updated_input: dict[str, Any] | None = None) -> "ApprovalAnswer":
        return cls("allow", feedback, (), updated_input)

    @classmethod
    def allow_always(cls, rules: Iterable[str] = (), feedback: str | None = None,
                     destination: str = "session") -> "ApprovalAnswer":
        """Allow, and save ``rules`` (default: the request's ``suggested_rules``) for the
        session, or (``destination="localSettings"``) for the session and in the project's
        .claude/settings.local.json, where Claude Code's "don't ask again" keeps them."""
        return cls("allow_always", feedback, tuple(rules), destination=check_destination(destination))

    @classmethod
    def released(cls, rules: Iterable[str]) -> "ApprovalAnswer":
        """A waiting call that a rule saved meanwhile now allows (no person looked at it)."""
        return cls("allow", None, tuple(rules))

    @classmethod
    def deny(cls, feedback: str | None = None) -> "ApprovalAnswer":
        return cls("deny", feedback or None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rules"] = list(self.rules)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ApprovalAnswer":
        if data.get("kind") not in ("allow", "allow_always", "deny"):
            raise ValueError(f"an approval answer's kind must be allow, allow_always or deny, not {data.get('kind')!r}")
        return cls(data["kind"], data.get("feedback"), tuple(data.get("rules", ())), data.get("updated_input"), bool(data.get("by_policy", False)),
                   check_destination(data.get("destination", "session")))


def saved_rules_text(rules: Iterable[str], destination: str = "session", *, error: str | None = None,
                     already: Iterable[str] = ()) -> str:
    """How a person is told what "always allow" saved: ``saved Bash(touch a.txt) to
    .claude/settings.local.json``, ``saved Edit(src/**) for this session``, or, when the
    file could not take them (``error`` says why), ``could not save Bash(x) to
    .claude/settings.local.json (its JSON is invalid at line 3): allowed for this session
    only``. ``already``: rules the file held before (named as kept, not written twice)."""
    destination = check_destination(destination)
    named = ", ".join(rules)
    if not named:
        return "no rule was saved (none names this call alone): allowed this once"
    where = "for this session" if destination == "session" else f"to {LOCAL_SETTINGS}"
    if error is not None:
        return f"could not save {named} {where} ({error}): allowed for this session only"
    kept = list(already)
    note = f" ({', '.join(kept)} {'was' if len(kept) == 1 else 'were'} already there)" if kept and destination != "session" else ""
    return f"saved {named} {where}{note}"


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
"""Who answers a call that needs a person: any async callable from the request to the answer
(an ``ApprovalBroker``, a function, an object with ``async __call__``)."""


def resolve_approver(*candidates: Approver | None) -> Approver:
    """A run's approver: the first of ``candidates`` that is set, in the order of precedence
    the caller gives (the run's override, the scheduler's, the permissions'), else the
    headless policy. The scheduler calls it once per run; the gate only for a call judged
    outside any run."""
    for approver in candidates:
        if approver is not None:
            return approver
    return headless_approver()


def headless_approver() -> Approver:
    """The answer when nobody was named to give one: the policy ``NBTOOLSCHED_APPROVAL`` names,
    deny when it is unset (a script or CI run has no one to ask)."""
    return ApprovalBroker(policy_from_env("deny"))


@dataclass(frozen=True)
class BrokerEvent:
    """``saved``: the permissions kept what an "always allow" answer named; ``note`` says
    what, and where (``saved_rules_text``), after the answer's ``answered`` event."""

    kind: Literal["added", "answered", "cancelled", "deferred", "saved"]
    request: ApprovalRequest
    answer: ApprovalAnswer | None = None
    pending: int = 0
    note: str | None = None


def policy_from_env(default: Policy = "interactive") -> Policy:
    value = os.environ.get(APPROVAL_ENV, "").strip().lower()
    if not value:
        return default
    if value not in _POLICIES:
        raise ValueError(f"{APPROVAL_ENV}={value!r} is not one of {', '.join(_POLICIES)}")
    return value  # type: ignore[return-value]


@dataclass
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[ApprovalAnswer]


class ApprovalBroker:
    """An approver that holds requests until someone answers them (or a policy does)."""

    def __init__(self, policy: Policy | None = None, *, answers: Mapping[str, ApprovalAnswer | Mapping[str, Any]] | None = None) -> None:
        self.policy: Policy = policy if policy is not None else policy_from_env()
        if self.policy not in _POLICIES:
            raise ValueError(f"unknown approval policy {self.policy!r}; expected one of {', '.join(_POLICIES)}")
        self._pending: dict[str, _Pending] = {}
        self._preloaded: dict[str, ApprovalAnswer] = {}
        self.deferred: dict[str, ApprovalRequest] = {}
        self._observers: list[Callable[[BrokerEvent], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        if answers:
            self.preload(answers)

    # -- the approver side ---------------------------------------------------------------
    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if request.tool_use_id in self._preloaded:
            return self._preloaded.pop(request.tool_use_id)
        if self.policy == "allow":
            return ApprovalAnswer("allow", by_policy=True)
        if self.policy == "deny":
            return ApprovalAnswer("deny", by_policy=True)
        if self.policy == "defer":
            self.deferred[request.tool_use_id] = request
            self._notify(BrokerEvent("deferred", request, pending=len(self._pending)))
            raise ApprovalDeferred(request, f"approval for {request.tool_name} ({request.tool_use_id}) was deferred")
        self._loop = asyncio.get_running_loop()
        if request.tool_use_id in self._pending:
            raise ValueError(f"an approval for tool_use_id {request.tool_use_id!r} is already pending")
        future: asyncio.Future[ApprovalAnswer] = self._loop.create_future()
        self._pending[request.tool_use_id] = _Pending(request, future)
        self._notify(BrokerEvent("added", request, pending=len(self._pending)))
        try:
            return await future
        except asyncio.CancelledError:
            if self._pending.pop(request.tool_use_id, None) is not None:
                self._notify(BrokerEvent("cancelled", request, pending=len(self._pending)))
            raise

    # -- the person side ---------------------------------------------------------------------
    @property
    def pending(self) -> dict[str, ApprovalRequest]:
        """Every waiting request by tool_use_id, oldest first."""
        return {key: p.request for key, p in self._pending.items()}

    def answer(self, tool_use_id: str, answer: ApprovalAnswer) -> None:
        """Answer one pending request (call on the loop's thread; see answer_threadsafe)."""
        entry = self._pending.pop(tool_use_id, None)
        if entry is None:
            raise KeyError(f"no approval is pending for tool_use_id {tool_use_id!r}")
        if not entry.future.done():
            entry.future.set_result(answer)
        self._notify(BrokerEvent("answered", entry.request, answer, len(self._pending)))

    def tell_saved(self, request: ApprovalRequest, answer: ApprovalAnswer, note: str) -> None:
        """The permissions say what an "always allow" answer saved: observers get a
        ``saved`` event with ``note`` (a UI shows it; the file may have refused the rules)."""
        self._notify(BrokerEvent("saved", request, answer, len(self._pending), note))

    def answer_many(self, tool_use_ids: Iterable[str], answer: ApprovalAnswer) -> list[str]:
        """Answer a chosen set; unknown ids raise before anything is answered."""
        ids = list(dict.fromkeys(tool_use_ids))
        missing = [i for i in ids if i not in self._pending]
        if missing:
            raise KeyError(f"no approval is pending for {missing}")
        for tool_use_id in ids:
            self.answer(tool_use_id, answer)
        return ids

    def answer_all(self, answer: ApprovalAnswer) -> list[str]:
        """"Approve all N" (or deny all): every request pending right now."""
        return self.answer_many(list(self._pending), answer)

    def answer_threadsafe(self, tool_use_id: str | Iterable[str] | None, answer: ApprovalAnswer) -> concurrent.futures.Future[list[str]]:
        """From any thread: answer one id, a set of ids, or (None) all. The returned future
        holds the answered ids, or the KeyError for an id that was not pending."""
        result: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        loop = self._loop
        if loop is None:
            result.set_exception(RuntimeError("nothing has waited on this broker yet: there is no loop to answer on"))
            return result

        def apply() -> None:
            try:
                if tool_use_id is None:
                    result.set_result(self.answer_all(answer))
                elif isinstance(tool_use_id, str):
                    self.answer(tool_use_id, answer)
                    result.set_result([tool_use_id])
                else:
                    result.set_result(self.answer_many(tool_use_id, answer))
            except Exception as err:  # noqa: BLE001 - handed to the caller's future
                result.set_exception(err)

        loop.call_soon_threadsafe(apply)
        return result

    # -- resuming and observing -----------------------------------------------------------------
    def preload(self, answers: Mapping[str, ApprovalAnswer | Mapping[str, Any]]) -> None:
        """Answers given ahead of time (a resumed run): used when their call asks."""
        for tool_use_id, answer in answers.items():
            self._preloaded[tool_use_id] = answer if isinstance(answer, ApprovalAnswer) else ApprovalAnswer.from_dict(answer)
            self.deferred.pop(tool_use_id, None)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every request waiting for a person or deferred, as plain JSON-able dicts."""
        seen = {**{k: p.request for k, p in self._pending.items()}, **self.deferred}
        return [request.to_dict() for request in seen.values()]

    def subscribe(self, observer: Callable[[BrokerEvent], None]) -> Callable[[], None]:
        """Call ``observer(event)`` on every change; returns the unsubscribe function."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    def _notify(self, event: BrokerEvent) -> None:
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:  # noqa: BLE001 - one broken observer must not break approvals
                log.exception("approval observer %r failed", observer)
