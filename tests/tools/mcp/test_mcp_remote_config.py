"""``.mcp.json`` entries for Streamable HTTP and SSE servers, read as Claude Code reads them (no server needed)."""

from __future__ import annotations

from typing import Any

import pytest

from nbtoolsched.tools.mcp._config import (
    McpConfigError, McpHttpServerConfig, McpSseServerConfig, McpStdioServerConfig, parse_mcp_config,
)


def test_each_transport_gets_its_own_model() -> None:
    parsed = parse_mcp_config({"mcpServers": {
        "local": {"command": "srv"},
        "local_typed": {"type": "stdio", "command": "srv", "args": ["-v"]},
        "api": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}, "timeout": 5},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse", "startup_timeout": 2},
    }})
    assert isinstance(parsed["local"], McpStdioServerConfig) and isinstance(parsed["local_typed"], McpStdioServerConfig)
    api, legacy = parsed["api"], parsed["legacy"]
    assert isinstance(api, McpHttpServerConfig) and api.headers == {"Authorization": "Bearer t"} and api.timeout == 5
    assert isinstance(legacy, McpSseServerConfig) and legacy.headers == {} and legacy.startup_timeout == 2


def test_url_and_header_values_are_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTS_TEST_HOST", "mcp.example.com")
    monkeypatch.setenv("NTS_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("NTS_TEST_UNSET", raising=False)
    [entry] = parse_mcp_config({"s": {
        "type": "http", "url": "https://${NTS_TEST_HOST}/${NTS_TEST_UNSET:-v1}/mcp",
        "headers": {"Authorization": "Bearer ${NTS_TEST_TOKEN}", "X-Region": "${NTS_TEST_UNSET:-eu}"},
    }}).values()
    assert isinstance(entry, McpHttpServerConfig)
    assert entry.url == "https://mcp.example.com/v1/mcp"
    assert entry.headers == {"Authorization": "Bearer s3cret", "X-Region": "eu"}


def test_error_messages_show_where_a_server_is_without_its_secrets() -> None:
    parsed = parse_mcp_config({
        "api": {"type": "http", "url": "https://user:pw@example.com:8443/mcp?token=abc"},
        "local": {"command": "uvx", "args": ["mcp-server-git"]},
    })
    assert parsed["api"].where == "at https://example.com:8443/mcp?..."
    assert parsed["local"].where == "(command uvx)"


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"url": "https://example.com/mcp"}, "MCP server 's': type: an entry with a url needs \"type\": \"http\""),
        ({"type": "ws", "url": "wss://example.com/mcp"}, "MCP server 's': type: transport 'ws' is not supported"),
        ({"type": "streamable-http", "url": "https://example.com/mcp"}, "transport 'streamable-http' is not supported"),
        ({"type": "http"}, "MCP server 's': url: Field required"),
        ({"type": "sse", "url": "example.com/sse"}, "MCP server 's': url: Value error, must be an http:// or https:// URL"),
        ({"type": "http", "url": "ftp://example.com/mcp"}, "url: Value error, must be an http:// or https:// URL"),
        ({"type": "http", "url": "https://example.com/mcp", "headers": {"X-Retries": 3}}, "MCP server 's': headers.X-Retries: Input should be a valid string"),
        ({"type": "http", "url": "https://example.com/mcp", "headers": ["Authorization: x"]}, "MCP server 's': headers: Input should be a valid dictionary"),
        ({"type": "sse", "url": "https://example.com/sse", "timeout": 0}, "MCP server 's': timeout: Input should be greater than 0"),
        ({"type": "stdio", "url": "https://example.com/mcp"}, "MCP server 's': command: Field required"),
    ],
)
def test_bad_remote_entries_name_the_server_and_the_field(entry: dict[str, Any], said: str) -> None:
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config({"mcpServers": {"s": entry}})
    assert said in str(err.value)


def test_an_entry_with_a_command_and_a_url_but_no_type_is_stdio() -> None:
    """Claude Code's stdio schema leaves ``type`` optional, so ``command`` decides; the url is ignored."""
    [entry] = parse_mcp_config({"s": {"command": "srv", "url": "https://example.com/mcp"}}).values()
    assert isinstance(entry, McpStdioServerConfig) and entry.command == "srv"
