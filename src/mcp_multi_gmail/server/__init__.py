"""The MCP server: `build_server` wires the instructions, the guide resources and every tool family."""

from .build import build_server

__all__ = ["build_server"]
