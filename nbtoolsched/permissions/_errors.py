"""The one error a bad permission configuration raises, naming where it came from."""

from __future__ import annotations

from .._errors import ConfigurationError

__all__ = ["PermissionConfigError"]


class PermissionConfigError(ConfigurationError):
    """A rule, mode, settings file or hook that cannot be used as written.

    Raised at load time so a typo never turns into a rule that silently matches
    nothing. ``source`` names the file (or "python"), ``item`` the rule or hook.
    """

    def __init__(self, message: str, *, source: str | None = None, item: str | None = None) -> None:
        self.source = source
        self.item = item
        where = []
        if source:
            where.append(str(source))
        if item is not None:
            where.append(repr(item))
        super().__init__(f"{': '.join(where)}: {message}" if where else message)
