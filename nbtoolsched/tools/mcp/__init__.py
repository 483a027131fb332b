"""MCP: stdio servers configured like Claude Code's ``mcpServers``, their tools as scheduler tools."""
