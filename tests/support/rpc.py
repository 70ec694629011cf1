"""The raw JSON-RPC messages of the MCP handshake, for tests that talk to a server subprocess."""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = "2025-06-18"
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize_request(client_name: str, request_id: int = 1) -> dict[str, Any]:
    """The client's `initialize` request; send `INITIALIZED` after its reply."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        },
    }
