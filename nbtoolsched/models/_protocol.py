"""The Model protocol: what the agent loop needs from any model, and how models fail.

It lives in the agent layer because the loop drives it and layers only import the
ones above them; ``nbtoolsched.models`` (below the agent) re-exports it for adapters.

A model is anything with ``stream(messages, tools=..., system=...)`` returning an async
iterator of event dicts in the Anthropic streaming shapes (see ``events.py``). Keeping
the raw event shapes (rather than finished messages) is what lets the loop start a
tool the moment its block is complete.
"""

from __future__ import annotations

from .._errors import NbtoolschedError

from typing import Any, AsyncIterator, Literal, Protocol, runtime_checkable

__all__ = ["Model", "ModelError", "ErrorKind", "RETRYABLE_KINDS", "kind_for_status", "kind_for_error_type", "client_options"]

ErrorKind = Literal[
    "overloaded",  # HTTP 529 / overloaded_error before the answer started
    "rate_limited",  # HTTP 429
    "api_error",  # other 5xx
    "stream_error",  # an ``error`` event (or a broken connection) after the answer started
    "invalid_request",  # 400, 404, 413, 422: retrying the same request will not help
    "authentication",  # 401, 403
    "connection",  # could not reach the server, or it timed out
    "bad_stream",  # events that do not fit together (a delta for a block never started...)
    "script",  # a ScriptedModel was misused or ran out of turns in strict mode
    "unexpected",  # anything else a model raised
]

RETRYABLE_KINDS = frozenset({"overloaded", "rate_limited", "api_error", "stream_error", "connection"})


class ModelError(NbtoolschedError):
    """A model call failed; ``kind`` says how, ``retryable`` whether trying again may help."""

    def __init__(
        self,
        kind: ErrorKind | str,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        events_before: int = 0,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.error_type = error_type  # the API's ``error.type``, when it sent one
        self.events_before = events_before  # how many events arrived before the failure

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    @property
    def overloaded(self) -> bool:
        """The server is over capacity (HTTP 529, or an ``overloaded_error`` event mid-stream):
        what makes an agent switch to its fallback model."""
        return self.kind == "overloaded" or self.status == 529 or self.error_type == "overloaded_error"

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def __repr__(self) -> str:
        return f"ModelError(kind={self.kind!r}, message={self.message!r}, status={self.status!r})"


@runtime_checkable
class Model(Protocol):
    """Streams one answer to a conversation as Anthropic-shaped event dicts."""

    def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        system: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]: ...


_TYPE_KINDS: dict[str, ErrorKind] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limited",
    "api_error": "api_error",
    "invalid_request_error": "invalid_request",
    "request_too_large": "invalid_request",
    "not_found_error": "invalid_request",
    "authentication_error": "authentication",
    "permission_error": "authentication",
}


def kind_for_error_type(error_type: str | None) -> ErrorKind:
    """The kind for an API ``error.type`` sent before the answer started."""
    return _TYPE_KINDS.get(error_type or "", "api_error")


def kind_for_status(status: int) -> ErrorKind:
    """The kind for an HTTP status returned instead of a stream."""
    if status == 529:
        return "overloaded"
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "authentication"
    if 400 <= status < 500:
        return "invalid_request"
    return "api_error"


def client_options(api_key: str | None, base_url: str | None, max_retries: int, timeout: float | None) -> dict[str, Any]:
    """The keywords both SDKs' async clients take (a timeout only when one is given: the SDKs' own default otherwise)."""
    options: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "max_retries": max_retries}
    if timeout is not None:
        options["timeout"] = timeout
    return options
