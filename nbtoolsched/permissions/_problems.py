"""What a settings file holds that loads but will not act exactly as written.

Claude Code keeps loading a settings file whose hook program is missing or whose rule
it cannot use; so do we, and each such thing becomes a ``LoadProblem``: kept in a
structured list (``Permissions.load_warnings``, ``LoadedSettings.warnings``) and issued
once as a Python warning whose category can be filtered::

    warnings.filterwarnings("ignore", category=nbtoolsched.HookWarning)
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import Iterable

__all__ = ["SettingsWarning", "HookWarning", "RuleWarning", "LoadProblem", "issue_warnings"]


class SettingsWarning(UserWarning):
    """Something in a settings file (or hook configuration) that loads with a caveat."""


class HookWarning(SettingsWarning):
    """A hook that cannot run as written, or an event this scheduler never fires."""


class RuleWarning(SettingsWarning):
    """A permission rule Claude Code would drop or ignore, or one read conservatively here."""


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """One caveat found while loading, naming its file and the hook, event or rule."""

    category: type[SettingsWarning]
    kind: str  # e.g. missing_program, event_not_fired, unknown_event, bad_matcher, rule_dropped_by_claude_code
    message: str
    source: str  # the settings file, or "python"
    item: str | None = None  # the hook command, event name or rule text

    def __str__(self) -> str:
        where = f"{self.source}: {self.item!r}" if self.item is not None else self.source
        return f"{where}: {self.message}"


def _outside_package_stacklevel() -> int:
    """The stack level of the first caller outside nbtoolsched, so the warning points there."""
    package = __name__.split(".")[0]
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == package:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def issue_warnings(problems: Iterable[LoadProblem]) -> None:
    """Issue each problem as a Python warning of its category."""
    level = _outside_package_stacklevel()
    for problem in problems:
        warnings.warn(str(problem), problem.category, stacklevel=level)
