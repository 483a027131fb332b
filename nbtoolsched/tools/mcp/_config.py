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
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Union
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from ..._errors import ConfigurationError

__all__ = [
    "McpServerConfig", "McpStdioServerConfig", "McpHttpServerConfig", "McpSseServerConfig", "McpConfigError",
    "parse_mcp_config", "normalize_name",
]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
TRANSPORTS = ("stdio", "http", "sse")


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


class _RemoteServerConfig(_ServerConfig):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"must be an http:// or https:// URL, got {value!r}")
        return value

    @property
    def where(self) -> str:
        """The URL without credentials or query (they may hold secrets), for error messages."""
        parts = urlsplit(self.url)
        shown = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
        return f"at {shown}{'?...' if parts.query else ''}"


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
    try:
        return _SERVER.validate_python(_expand({**entry, "type": kind or "stdio"}))
    except ValidationError as err:
        first = err.errors()[0]
        loc = first["loc"][1:] if first["loc"][:1] == (kind or "stdio",) else first["loc"]  # drop the union's tag
        where = ".".join(str(p) for p in loc) or "entry"
        raise McpConfigError(f"MCP server {name!r}: {where}: {first['msg']}") from None


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v) for k, v in value.items()}
    return value
