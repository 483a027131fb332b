"""MCP server configuration, read the way Claude Code reads its ``mcpServers`` entries.

Accepted: ``{"mcpServers": {name: entry}}``, ``{name: entry}``, or a path to a JSON
file holding either. An entry is one of

* stdio: ``{"command", "args", "env", "cwd"}``, ``"type": "stdio"`` optional;
* Streamable HTTP: ``{"type": "http", "url", "headers"}``;
* HTTP+SSE: ``{"type": "sse", "url", "headers"}``;

each with an optional ``timeout`` (per call) and ``startup_timeout``, in seconds.
``${VAR}`` and ``${VAR:-default}`` in the strings (command, args, env, url, header
values) are expanded from the environment. An entry with a ``url`` and no ``type`` is
refused, as Claude Code refuses it; so is any other transport, by name.

What ``${VAR}`` expands to may be a secret: messages show a remote server's url as the
config wrote it (``written_url``, unexpanded, without userinfo, query or fragment), never
an expanded value, and ``secrets()`` lists what a message or a log line must not show.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Union
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from pydantic import (
    BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, ValidationInfo, field_validator,
)

from ..._errors import ConfigurationError

__all__ = [
    "McpServerConfig", "McpStdioServerConfig", "McpHttpServerConfig", "McpSseServerConfig", "McpConfigError",
    "parse_mcp_config", "normalize_name",
]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
TRANSPORTS = ("stdio", "http", "sse")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 token
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")  # printable ASCII, spaces and tabs: what httpx can send
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ORIGIN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")  # scheme and authority of a url as written
MIN_SECRET = 6  # shorter pieces are not redacted: they would garble messages and hide little
_PUBLIC_HEADERS = frozenset({"accept", "accept-language", "content-type", "user-agent", "mcp-protocol-version"})


class McpConfigError(ConfigurationError):
    """The configuration cannot be used; the message names the server and the field."""


class _ServerConfig(BaseModel):
    """What every transport shares."""

    model_config = ConfigDict(extra="ignore")

    timeout: float | None = Field(default=None, gt=0, description="per-call timeout in seconds for this server")
    startup_timeout: float | None = Field(default=None, gt=0, description="seconds this server may take to start")


class McpStdioServerConfig(_ServerConfig):
    """A server started as a child process, speaking MCP on its stdin and stdout."""

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("command is blank")
        return value

    @property
    def where(self) -> str:
        """Where the server is, for error messages."""
        return f"(command {self.command})"

    def secrets(self) -> tuple[str, ...]:
        """What its messages must not show (nothing: a command is no URL)."""
        return ()


class _RemoteServerConfig(_ServerConfig):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    # the url as the config wrote it (${VAR} unexpanded) and what its ${VAR}s expanded to beyond
    # the url's scheme and host, and in the header values: set by parse_mcp_config
    _written_url: str | None = PrivateAttr(default=None)
    _expanded: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str, info: ValidationInfo) -> str:
        written = (info.context or {}).get("written_url") or value
        if _CONTROL.search(value):
            raise ValueError(f"{shown_url(written)!r} holds a control character (a line break, a tab...), which a URL cannot")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"must be an http:// or https:// URL, got {shown_url(written)!r}")
        return value

    @field_validator("headers")
    @classmethod
    def _sendable_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():  # the value is never quoted: it is often a credential
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a valid HTTP header name")
            if not _HEADER_VALUE.fullmatch(text):
                what = "a line break (CR or LF)" if "\r" in text or "\n" in text else "a control or non-ASCII character"
                raise ValueError(
                    f"the value of header {name!r} (after ${{VAR}} expansion) holds {what}, "
                    "which an HTTP header cannot carry; the value is not shown"
                )
        return value

    @property
    def written_url(self) -> str:
        """The url as the config wrote it, ``${VAR}`` unexpanded (the url itself if built directly)."""
        return self._written_url or self.url

    @property
    def where(self) -> str:
        """The URL as written, without credentials, query or fragment (they may hold secrets), for messages."""
        return f"at {shown_url(self.written_url)}"

    def secrets(self) -> tuple[str, ...]:
        """What a message or a log line about this server must not show, longest first.

        The expanded url's userinfo, query values (a bare ``?token``: the token) and fragment;
        what its ``${VAR}``s expanded to, except in its scheme and host (a Zapier-style
        ``/k/<key>/mcp`` path); the header values (but of ``Accept`` and the like) and their
        long words; each also percent-encoded, as httpx writes a URL.
        """
        parts = urlsplit(self.url)
        userinfo = parts.netloc.rpartition("@")[0]
        query = [value or name for name, value in parse_qsl(parts.query, keep_blank_values=True)]
        query += [value or name for name, _, value in (p.partition("=") for p in parts.query.split("&"))]  # as written
        found = {userinfo, userinfo.partition(":")[2], *query, parts.fragment, *self._expanded}  # not the user name
        for name, text in self.headers.items():
            if name.lower() not in _PUBLIC_HEADERS:
                found.update((text, *(word for word in text.split() if len(word) >= 8)))  # not "Bearer"
        pieces = {p for p in found if len(p) >= MIN_SECRET}
        pieces |= {quote(p, safe=safe) for p in pieces for safe in ("", "!$&'()*+,;=:@/?")}
        return tuple(sorted(pieces, key=len, reverse=True))


class McpHttpServerConfig(_RemoteServerConfig):
    """A server at a URL, over MCP's Streamable HTTP transport."""

    type: Literal["http"]


class McpSseServerConfig(_RemoteServerConfig):
    """A server at a URL, over MCP's older HTTP+SSE transport."""

    type: Literal["sse"]


McpServerConfig = Annotated[
    Union[McpStdioServerConfig, McpHttpServerConfig, McpSseServerConfig], Field(discriminator="type")
]
"""One server's validated entry: the model of its transport."""

_SERVER = TypeAdapter[McpServerConfig](McpServerConfig)


def normalize_name(name: str) -> str:
    """A server or tool name as it may appear inside ``mcp__server__tool``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def parse_mcp_config(config: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, McpServerConfig]:
    """Server name -> validated config; raises ``McpConfigError`` naming what is wrong."""
    if isinstance(config, (str, os.PathLike)):
        config = _load(Path(config))
    if not isinstance(config, Mapping):
        raise McpConfigError(f"MCP config must be an object of servers, got {type(config).__name__}")
    servers = config.get("mcpServers", config)
    if not isinstance(servers, Mapping):
        raise McpConfigError(f"'mcpServers' must be an object of servers, got {type(servers).__name__}")
    parsed: dict[str, McpServerConfig] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not name.strip():
            raise McpConfigError(f"MCP server names must be non-empty strings, got {name!r}")
        parsed[name] = _entry(name, entry)
    return parsed


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise McpConfigError(f"cannot read MCP config {path}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise McpConfigError(f"MCP config {path} is not valid JSON: {err}") from None


def _entry(name: str, entry: Any) -> McpServerConfig:
    if isinstance(entry, (McpStdioServerConfig, McpHttpServerConfig, McpSseServerConfig)):
        return entry
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"MCP server {name!r}: the entry must be an object, got {type(entry).__name__}")
    kind = entry.get("type")
    if kind is None and "url" in entry and "command" not in entry:
        raise McpConfigError(
            f"MCP server {name!r}: type: an entry with a url needs \"type\": \"http\" (Streamable HTTP) or "
            "\"sse\"; the transport is not guessed (Claude Code refuses such an entry too)"
        )
    if kind is not None and kind not in TRANSPORTS:
        raise McpConfigError(
            f"MCP server {name!r}: type: transport {kind!r} is not supported; "
            "use \"stdio\" (command + args), \"http\" (Streamable HTTP, url) or \"sse\" (url)"
        )
    written = entry.get("url")
    written = written if isinstance(written, str) else None
    try:
        parsed = _SERVER.validate_python(_expand({**entry, "type": kind or "stdio"}), context={"written_url": written})
    except ValidationError as err:
        first = err.errors()[0]
        loc = first["loc"][1:] if first["loc"][:1] == (kind or "stdio",) else first["loc"]  # drop the union's tag
        where = ".".join(str(p) for p in loc) or "entry"
        raise McpConfigError(f"MCP server {name!r}: {where}: {first['msg']}") from None
    if isinstance(parsed, _RemoteServerConfig) and written is not None:
        parsed._written_url = written
        headers = entry.get("headers") or {}
        parsed._expanded = (*_url_expansions(written), *(v for h in headers.values() for v in _expansions(str(h))))
    return parsed


def shown_url(url: str) -> str:
    """``url`` for a message: without userinfo, query and fragment (``?...`` says a query was there)."""
    parts = urlsplit(url)
    shown = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
    return f"{shown}?..." if parts.query else shown


def _expansions(text: str, start: int = 0) -> list[str]:
    """What the ``${VAR}``s of ``text`` from offset ``start`` on expand to from the environment."""
    return [os.environ[m.group(1)] for m in _VAR.finditer(text, start) if os.environ.get(m.group(1))]


def _url_expansions(url: str) -> list[str]:
    """Expansions beyond the origin (scheme and host, or a leading ``${BASE}``): the path, query, userinfo..."""
    origin = _ORIGIN.match(url)
    if origin is None:
        lead = _VAR.match(url)
        return _expansions(url, lead.end() if lead else 0)
    host_start = origin.group().rfind("@") + 1 or len(origin.group().partition("://")[0]) + 3
    return _expansions(url[:host_start]) + _expansions(url, origin.end())


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v) for k, v in value.items()}
    return value
