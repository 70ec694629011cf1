"""The MCP server: instructions from the configuration, the guide resource, every tool family."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource

from . import __version__
from .instructions import GUIDE_URI, build_instructions
from .runtime import Runtime

SERVER_NAME = "mcp-multi-gmail"
PROJECT_DIR = Path(__file__).resolve().parent.parent.parent


def guide_text() -> str:
    """The Czech guide for the assistant, shipped inside the package."""
    return (resources.files("mcp_multi_gmail") / "data" / "pro-asistenta.md").read_text(encoding="utf-8")


def local_guide_path() -> Path | None:
    """docs/pro-asistenta.md beside the package when the project folder is there (source or add-on)."""
    path = PROJECT_DIR / "docs" / "pro-asistenta.md"
    return path if path.is_file() else None


def build_server(runtime: Runtime) -> MCPServer:
    server = MCPServer(
        name=SERVER_NAME,
        version=__version__,
        instructions=build_instructions(runtime.config, guide_path=local_guide_path()),
    )
    server.add_resource(
        TextResource(
            uri=GUIDE_URI,
            name="pro-asistenta",
            title="Průvodce pro asistenta (mcp-multi-gmail)",
            description="The Czech guide for the assistant: setup, the pass, labels, sending, troubleshooting.",
            mime_type="text/markdown",
            text=guide_text(),
        )
    )

    def register_tools() -> None:
        # The tool modules pull in the mail layer, the result models and the protocol libraries.
        from .tools import accounts, outgoing, read, work

        accounts.register(server, runtime)
        read.register(server, runtime)
        work.register(server, runtime)
        outgoing.register(server, runtime)

    _register_on_first_use(server, register_tools)
    return server


class _ToolsOnFirstUse:
    """Stands in for the SDK's tool manager until something asks for a tool.

    `initialize` needs the instructions and capabilities only. Building the tools' schemas and
    importing everything behind them costs about as much again as the rest of start-up, so that
    work waits for the first tools/list or tools/call."""

    def __init__(self, manager: Any, register: Callable[[], None]) -> None:
        self._manager = manager
        self._register: Callable[[], None] | None = register

    def __getattr__(self, name: str) -> Any:
        register, self._register = self._register, None
        if register is not None:
            register()  # its add_tool calls come back here and go straight through
        return getattr(self._manager, name)


def _register_on_first_use(server: MCPServer, register: Callable[[], None]) -> None:
    server._tool_manager = _ToolsOnFirstUse(server._tool_manager, register)  # type: ignore[assignment]
