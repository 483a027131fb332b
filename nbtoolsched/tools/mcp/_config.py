"""MCP server configuration, read the way Claude Code reads its ``mcpServers`` entries.

Accepted: ``{"mcpServers": {name: entry}}``, ``{name: entry}``, or a path to a JSON
file holding either. An entry is ``{"command", "args", "env", "cwd"}`` (stdio);
``${VAR}`` and ``${VAR:-default}`` in the command, args and env are expanded from the
environment. Other transports are refused by name rather than ignored.
"""

from __future__ import annotations

from ..._errors import ConfigurationError

import json
import os
import re
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = ["McpServerConfig", "McpConfigError", "parse_mcp_config", "normalize_name"]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(ConfigurationError):
    """The configuration cannot be used; the message names the server and the field."""


class McpServerConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    timeout: float | None = Field(default=None, gt=0, description="per-call timeout in seconds for this server")
    startup_timeout: float | None = Field(default=None, gt=0, description="seconds this server may take to start")

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("command is blank")
        return value


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
    if isinstance(entry, McpServerConfig):
        return entry
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"MCP server {name!r}: the entry must be an object, got {type(entry).__name__}")
    kind = entry.get("type", "stdio")
    if kind != "stdio":
        raise McpConfigError(f"MCP server {name!r}: transport {kind!r} is not supported; only stdio servers (command + args) are")
    try:
        return McpServerConfig.model_validate(_expand(dict(entry)))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        raise McpConfigError(f"MCP server {name!r}: {where}: {first['msg']}") from None


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v) for k, v in value.items()}
    return value
