"""MCP: servers configured like Claude Code's ``mcpServers`` (stdio, Streamable HTTP, SSE), their tools as scheduler tools."""
