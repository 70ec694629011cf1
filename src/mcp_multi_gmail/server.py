"""The MCP server: instructions from the configuration, the guide resource, every tool family."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource

from . import __version__
from .instructions import GUIDE_URI, build_instructions
from .runtime import Runtime
from .tools import accounts, outgoing, read, work

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
    accounts.register(server, runtime)
    read.register(server, runtime)
    work.register(server, runtime)
    outgoing.register(server, runtime)
    return server
