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


SECRET = "sk-test-SECRET-4711"


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({"Authorization": "Bearer ${NTS_TEST_SECRET}\r\nX-Injected: 1"}, "header 'Authorization' (after ${VAR} expansion) holds a line break (CR or LF)"),
        ({"Authorization": "Bearer ${NTS_TEST_SECRET}\n"}, "header 'Authorization' (after ${VAR} expansion) holds a line break (CR or LF)"),
        ({"X-Key": "${NTS_TEST_BROKEN}"}, "header 'X-Key' (after ${VAR} expansion) holds a line break (CR or LF)"),
        ({"X-Key": "${NTS_TEST_SECRET}\x00"}, "header 'X-Key' (after ${VAR} expansion) holds a control or non-ASCII character"),
        ({"X-Key": "caf\u00e9-${NTS_TEST_SECRET}"}, "header 'X-Key' (after ${VAR} expansion) holds a control or non-ASCII character"),
        ({"Bad Name": "v"}, "'Bad Name' is not a valid HTTP header name"),
    ],
)
def test_a_header_that_http_cannot_carry_is_refused_without_showing_its_value(
    headers: dict[str, str], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NTS_TEST_SECRET", SECRET)
    monkeypatch.setenv("NTS_TEST_BROKEN", f"{SECRET}\r\nX-Injected: 1")  # the line break comes from the variable
    for kind in ("http", "sse"):
        with pytest.raises(McpConfigError) as err:
            parse_mcp_config({"api": {"type": kind, "url": "https://example.com/mcp", "headers": headers}})
        message = str(err.value)
        assert message.startswith("MCP server 'api': headers: ") and said in message, message
        assert SECRET not in message and "Injected" not in message


def test_sendable_headers_are_kept() -> None:
    headers = {"Authorization": "Bearer abc\tdef", "X-Api-Key": "k=1; v=2 ~!@#$%^&*()"}
    [entry] = parse_mcp_config({"s": {"type": "http", "url": "https://example.com/mcp", "headers": headers}}).values()
    assert isinstance(entry, McpHttpServerConfig) and entry.headers == headers


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("ftp://u:${NTS_TEST_SECRET}@h/mcp", "url: Value error, must be an http:// or https:// URL, got 'ftp://h/mcp'"),
        ("http:///mcp?key=${NTS_TEST_SECRET}", "url: Value error, must be an http:// or https:// URL, got 'http:///mcp?...'"),
        ("https://h/k/${NTS_TEST_SECRET}/mcp\n", "url: Value error, 'https://h/k/${NTS_TEST_SECRET}/mcp' holds a control character"),
        ("https://h/k/${NTS_TEST_BROKEN}/mcp", "url: Value error, 'https://h/k/${NTS_TEST_BROKEN}/mcp' holds a control character"),
    ],
)
def test_a_bad_url_is_quoted_as_written_never_expanded(url: str, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTS_TEST_SECRET", SECRET)
    monkeypatch.setenv("NTS_TEST_BROKEN", f"{SECRET}\n")
    with pytest.raises(McpConfigError) as err:
        parse_mcp_config({"s": {"type": "http", "url": url}})
    assert f"MCP server 's': {said}" in str(err.value), str(err.value)
    assert SECRET not in str(err.value)


def test_where_is_the_url_as_written_and_secrets_name_what_it_must_not_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTS_TEST_SECRET", SECRET)
    monkeypatch.setenv("NTS_TEST_HOST", "mcp.example.com")
    written = "https://user:${NTS_TEST_SECRET}@${NTS_TEST_HOST}/k/${NTS_TEST_SECRET}/mcp?key=${NTS_TEST_SECRET}#f-${NTS_TEST_SECRET}"
    [entry] = parse_mcp_config({"zap": {"type": "http", "url": written, "headers": {"X-Api-Key": "literal-key-123"}}}).values()
    assert isinstance(entry, McpHttpServerConfig)
    assert entry.url == f"https://user:{SECRET}@mcp.example.com/k/{SECRET}/mcp?key={SECRET}#f-{SECRET}"
    assert entry.written_url == written
    assert entry.where == "at https://${NTS_TEST_HOST}/k/${NTS_TEST_SECRET}/mcp?..."
    secrets = entry.secrets()
    assert {SECRET, f"user:{SECRET}", f"f-{SECRET}", "literal-key-123"} <= set(secrets)
    assert "mcp.example.com" not in secrets and "user" not in secrets  # the host and the user name are no secret
    assert list(secrets) == sorted(secrets, key=len, reverse=True)  # longest first, so redacting is whole
    built = McpHttpServerConfig(type="http", url="https://h/mcp?token=abcdef123")  # not from a config file
    assert built.written_url == built.url and built.where == "at https://h/mcp?..." and "abcdef123" in built.secrets()


def test_an_entry_with_a_command_and_a_url_but_no_type_is_stdio() -> None:
    """Claude Code's stdio schema leaves ``type`` optional, so ``command`` decides; the url is ignored."""
    [entry] = parse_mcp_config({"s": {"command": "srv", "url": "https://example.com/mcp"}}).values()
    assert isinstance(entry, McpStdioServerConfig) and entry.command == "srv"
