"""A minimal MCP server on stdio with one tool, ``echo``: the protocol's own messages, no SDK.

The MCP SDK's server takes seconds to import; this one starts at once, so a test that
starts it with every session stays quick. The client side (nbtoolsched's MCP manager and
the official SDK's client) is the real one. Run as ``python echo_mcp_server.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {
    "name": "echo",
    "description": "Repeat the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                    "required": ["text"]},
    "annotations": {"readOnlyHint": True},
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification (notifications/initialized...)
    if method == "initialize":
        result: Any = {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                       "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        arguments = params.get("arguments") or {}
        text = " ".join([str(arguments.get("text", ""))] * int(arguments.get("times", 1)))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
