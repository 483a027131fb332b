"""A policy: the permission setup and scheduler settings a session runs (or is replayed) under.

It is plain data, so it travels to worker processes and Ray nodes as it is: the settings
files are read once, where the policy is made, and their contents go along (a cluster
node needs no copy of them). Each session gets its own ``Permissions`` from it, for its
own working directory: a project file's ``/src/**`` rule means the session's project, as
it did when the session ran. ``session_permissions`` builds them once per policy and
working directory in each process and hands every session a fresh copy (its own rules,
so an "always allow" of one session is not another's, and its own denial count).
"""

from __future__ import annotations

import copy
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, TypedDict, Unpack

from ..permissions._approvals import ApprovalAnswer, ApprovalRequest
from ..permissions._classifier import DenialTracker
from ..permissions._engine import Permissions
from ..permissions._modes import check_mode
from ..permissions._rules import rules_from
from ..permissions._settings import SettingsFile, apply_settings, default_user_dir, read_settings_json
from ..shell import lexical_paths
from .._errors import ConfigurationError

__all__ = ["Policy", "PolicyApprover", "PromptAnswer", "SettingsSource", "as_policy"]

PromptAnswer = Literal["allow", "allow_always", "deny"]


class PolicyOptions(TypedDict, total=False):
    """The fields of ``Policy`` that ``Policy.from_settings`` takes besides the files and the name."""

    mode: str | None
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    ask: tuple[str, ...]
    max_concurrency: int
    prompt_answer: PromptAnswer
    prompt_seconds: float
    run_hooks: bool
    strict_hooks: bool
_ANSWERS = ("allow", "allow_always", "deny")


@dataclass(frozen=True)
class SettingsSource:
    """One settings.json file as read: which kind it is, where it was, what it holds."""

    source: str  # userSettings | projectSettings | localSettings
    path: str
    data: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class Policy:
    """Permission setup plus scheduler settings; ``Policy.from_settings`` reads settings files.

    ``prompt_answer`` is what the simulated person says when a call needs approval:
    ``allow`` (every such call is one more prompt), ``allow_always`` (the suggested rule
    is saved for the rest of the session, as clicking "always allow" does) or ``deny``.
    ``prompt_seconds`` is what one prompt costs the person, added to the simulated time
    (0 counts tool time only). ``run_hooks=False`` skips the settings' command hooks.
    """

    name: str = "policy"
    settings: tuple[SettingsSource, ...] = ()
    mode: str | None = None  # overrides the files' defaultMode
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    max_concurrency: int = 10
    prompt_answer: PromptAnswer = "allow"
    prompt_seconds: float = 0.0
    run_hooks: bool = True
    strict_hooks: bool = False

    def __post_init__(self) -> None:
        if self.mode is not None:
            check_mode(self.mode)
        if self.prompt_answer not in _ANSWERS:
            raise ConfigurationError(f"prompt_answer must be one of {', '.join(_ANSWERS)}, got {self.prompt_answer!r}")
        if not isinstance(self.max_concurrency, int) or isinstance(self.max_concurrency, bool) or self.max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be a positive integer, got {self.max_concurrency!r}")
        if self.prompt_seconds < 0:
            raise ConfigurationError(f"prompt_seconds must not be negative, got {self.prompt_seconds!r}")
        for behavior in ("allow", "deny", "ask"):
            value = getattr(self, behavior)
            if isinstance(value, str):
                object.__setattr__(self, behavior, (value,))
            rules_from(getattr(self, behavior), behavior, source="python")  # a bad rule fails here, not in a worker

    @classmethod
    def from_settings(
        cls, *files: str | os.PathLike[str], name: str | None = None, **options: Unpack[PolicyOptions]
    ) -> "Policy":
        """A policy from settings.json files, lowest precedence first.

        A file named ``settings.local.json`` is project-local settings, a file inside the
        user's Claude directory (``~/.claude``) user settings, any other project
        settings. Every file is read and checked now; an error names the file."""
        sources = tuple(SettingsSource(_source_of(Path(f)), str(f), read_settings_json(Path(f))) for f in files)
        policy = cls(name=name or (Path(files[-1]).name if files else "policy"), settings=sources, **options)
        policy.check()
        return policy

    def check(self) -> None:
        """Load the settings once here, with warnings, so a broken file fails before any session runs."""
        apply_settings(self._specs(os.getcwd()), os.getcwd(), check_hooks=False, strict_hooks=self.strict_hooks, warn=False)

    def permissions(self, cwd: str | os.PathLike[str], *, home: str | None = None, hook_dir: str | os.PathLike[str] | None = None) -> Permissions:
        """The gate for one session working in ``cwd`` (which need not exist here).

        ``hook_dir``: where command hooks run and what they get as CLAUDE_PROJECT_DIR when
        that is not ``cwd`` (a replay whose project is checked out elsewhere, or not here)."""
        loaded = apply_settings(self._specs(cwd), cwd, check_hooks=False, strict_hooks=self.strict_hooks, warn=False)
        if hook_dir is not None:
            loaded.hooks.project_dir = os.fspath(hook_dir)
        perms = Permissions(
            self.mode or loaded.default_mode or "default", self.allow, self.deny, self.ask,
            cwd=cwd, rules=loaded.rules, additional_dirs=loaded.additional_dirs,
            hooks=loaded.hooks if self.run_hooks and loaded.hooks else None, home=home, sandbox=loaded.sandbox,
        )
        perms.settings_files = loaded.files
        return perms

    def session_permissions(self, cwd: str, *, hook_dir: str | None = None) -> Permissions:
        """``permissions(cwd, hook_dir=...)`` for one session: built once per policy, folder
        and way of judging paths (``lexical_paths``) in this process, then copied, so every
        session starts from the policy's rules alone (rules an "always allow" saves, the
        denial count of auto mode, the calls waiting for a person are the copy's own)."""
        key = (self, cwd, hook_dir, lexical_paths.active)
        template = _TEMPLATES.get(key)
        if template is None:
            template = _TEMPLATES[key] = self.permissions(cwd, hook_dir=hook_dir)
            while len(_TEMPLATES) > _MAX_TEMPLATES:
                _TEMPLATES.popitem(last=False)
        else:
            _TEMPLATES.move_to_end(key)
        fresh = copy.copy(template)
        fresh.rules = template.rules.copy()
        fresh.denials = DenialTracker()
        fresh._waiting = {}
        return fresh

    def _specs(self, cwd: str | os.PathLike[str]) -> list[tuple[SettingsFile, dict[str, Any]]]:
        project = Path(cwd)
        home = default_user_dir().parent
        return [(SettingsFile(s.source, Path(s.path), home if s.source == "userSettings" else project), s.data) for s in self.settings]

    def describe(self) -> str:
        parts = [f"mode {self.mode or 'from settings'}", f"max concurrency {self.max_concurrency}"]
        if self.settings:
            parts.append("settings " + ", ".join(s.path for s in self.settings))
        for behavior in ("allow", "deny", "ask"):
            if getattr(self, behavior):
                parts.append(f"{behavior} {', '.join(getattr(self, behavior))}")
        return f"{self.name}: " + "; ".join(parts)


_TEMPLATES: "OrderedDict[tuple[Policy, str, str | None, bool], Permissions]" = OrderedDict()
_MAX_TEMPLATES = 256  # policies x working directories kept per process (the oldest go first)


class PolicyApprover:
    """The person of a simulated or headless session: counts the asks and answers as the policy says.

    Only "always allow" saves the rules a person is offered, so only then are they worked
    out (``wants_rule_choices``, read by the permission engine)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.wants_rule_choices = answer == "allow_always"
        self.asked = False  # since the caller last reset it
        self.count = 0

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked = True
        self.count += 1
        if self.answer == "deny":
            return ApprovalAnswer.deny()
        if self.answer == "allow_always":
            return ApprovalAnswer.allow_always()
        return ApprovalAnswer.allow()


def _source_of(path: Path) -> str:
    if path.name == "settings.local.json":
        return "localSettings"
    try:
        path.resolve().relative_to(default_user_dir().resolve())
        return "userSettings"
    except ValueError:
        return "projectSettings"


def as_policy(value: "Policy | str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None", name: str | None = None) -> Policy:
    """A Policy from what a caller may pass: a Policy, a settings file, several, or None."""
    if value is None:
        return Policy(name=name or "default")
    if isinstance(value, Policy):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Policy.from_settings(value, name=name)
    return Policy.from_settings(*value, name=name)
