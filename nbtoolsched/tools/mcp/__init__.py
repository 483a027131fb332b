"""MCP: stdio servers configured like Claude Code's ``mcpServers``, their tools as scheduler tools."""

from ._config import McpConfigError, McpServerConfig, normalize_name, parse_mcp_config
from ._manager import DEFAULT_CALL_TIMEOUT, McpManager, McpServerConnection, connect_mcp_servers
from ._schema import arguments_of, model_from_schema
from ._tool import McpTool, content_blocks, mcp_tool_name

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "McpConfigError",
    "McpManager",
    "McpServerConfig",
    "McpServerConnection",
    "McpTool",
    "arguments_of",
    "connect_mcp_servers",
    "content_blocks",
    "mcp_tool_name",
    "model_from_schema",
    "normalize_name",
    "parse_mcp_config",
]
