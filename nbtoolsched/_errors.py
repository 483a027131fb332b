"""The errors nbtoolsched raises on purpose, under one base users can catch.

A tool call never raises: whatever goes wrong becomes its tool_result. These are for the
code around the calls: loading settings, registering tools, talking to a model, reading
a transcript, resuming a deferred run, accepting a speculation, aborting.

    NbtoolschedError
    ├── ConfigurationError (also a ValueError): settings files, rules, hooks, MCP servers, options
    │   ├── PermissionConfigError
    │   ├── McpConfigError
    │   └── DuplicateToolError
    ├── ModelError: a model stream that failed (kind, status, retryable)
    ├── TranscriptError (also a ValueError): a conversation the Messages API would refuse
    │   └── InvalidTranscript
    ├── ApprovalDeferred: a call waits for an approval nobody can give now
    ├── OverlayConflict: accept refused, files changed on disk meanwhile
    ├── AbortError: raised inside a tool that stops because its call was aborted
    ├── ShellParseError (also a ValueError): shell syntax that cannot be split safely
    └── NotebookError (also a ValueError): a %%toolcall cell or session request that cannot be taken
        ├── CellError
        └── SessionError

Each subclass lives with the code that raises it; all are exported by ``nbtoolsched``.
"""

from __future__ import annotations

__all__ = ["CellError", "ConfigurationError", "NbtoolschedError", "NotebookError", "SessionError", "TranscriptError"]


class NbtoolschedError(Exception):
    """Base of every error nbtoolsched raises on purpose."""


class ConfigurationError(NbtoolschedError, ValueError):
    """Settings, rules, hooks, MCP servers or options that cannot be used as given."""


class TranscriptError(NbtoolschedError, ValueError):
    """A conversation that breaks the Messages API's rules, or a transcript file that cannot be read."""


class NotebookError(NbtoolschedError, ValueError):
    """A notebook cell or session request that cannot be taken; the message is shown as is."""


class CellError(NotebookError):
    """A ``%%toolcall`` cell body that cannot become tool calls."""


class SessionError(NotebookError):
    """A setting or request the notebook session cannot take."""
