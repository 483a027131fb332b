"""The MCP servers a client names in ``session/new``, run through nbtoolsched's own MCP support.

Each ACP server becomes an entry in Claude Code's ``mcpServers`` shape and is checked by
``parse_mcp_config``, the same reader a settings file goes through; whatever transport
that reader accepts (stdio; Streamable HTTP and SSE where the installed version has them)
is started with the session, and what it refuses is left out with the reason, as is a
server that fails to start. The session goes on without them either way: a client names
every server its user configured, and one unusable server must not cost the session.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

from acp.schema import McpCapabilities, McpServerHttp, McpServerSse, McpServerStdio

from ..tools.mcp._config import McpConfigError, parse_mcp_config
from ..tools.mcp._manager import McpManager

__all__ = ["McpServers", "start_servers", "mcp_capabilities"]

log = logging.getLogger(__name__)
_PROBE_URL = "http://127.0.0.1:1/mcp"  # never contacted: it only asks the config reader what it takes


@dataclass
class McpServers:
    manager: McpManager | None = None
    left_out: dict[str, str] = field(default_factory=dict)  # server name -> why it is not there

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()


def mcp_capabilities() -> McpCapabilities:
    """The remote transports the config reader takes (stdio is always there)."""
    return McpCapabilities(http=_accepted({"type": "http", "url": _PROBE_URL}), sse=_accepted({"type": "sse", "url": _PROBE_URL}))


async def start_servers(servers: Sequence[Any], cwd: str) -> McpServers:
    found = McpServers()
    config: dict[str, dict[str, Any]] = {}
    for server in servers:
        name = str(getattr(server, "name", "") or "unnamed")
        entry = _entry(server)
        if entry is None:
            found.left_out[name] = f"its transport ({type(server).__name__}) is not supported"
            continue
        if name in config:
            found.left_out[name] = "another server of the request has the same name"
            continue
        try:
            parse_mcp_config({name: entry})
        except McpConfigError as err:
            found.left_out[name] = str(err)
            continue
        config[name] = entry
    if config:
        found.manager = McpManager(config, cwd=cwd)
        await found.manager.start()
        found.left_out.update({name: f"it did not start: {why}" for name, why in found.manager.errors.items()})
    for name, why in found.left_out.items():
        log.warning("MCP server %r is left out of the session: %s", name, why)
    return found


def _entry(server: Any) -> dict[str, Any] | None:
    if isinstance(server, McpServerStdio):
        return {"type": "stdio", "command": server.command, "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env}}
    for kind, model in (("http", McpServerHttp), ("sse", McpServerSse)):
        if isinstance(server, model):
            return {"type": kind, "url": server.url, "headers": {header.name: header.value for header in server.headers}}
    return None


def _accepted(entry: dict[str, Any]) -> bool:
    try:
        parse_mcp_config({"probe": entry})
    except McpConfigError:
        return False
    return True
