"""The MCP server: instructions from the configuration, the guide resource, every tool family."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource

from . import __version__
from .instructions import GUIDE_URI, SETUP_URI, TROUBLE_URI, build_instructions
from .runtime import Runtime
from .tools import accounts, outgoing, read, work

SERVER_NAME = "mcp-multi-gmail"
PROJECT_DIR = Path(__file__).resolve().parent.parent.parent


# (resource URI, file name, title, description) of the three Czech guides for the assistant.
GUIDES = (
    (
        GUIDE_URI,
        "pro-asistenta.md",
        "Provoz: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech operations guide: the boundary, the pass, labels, drafts and sending, safety, the report.",
    ),
    (
        SETUP_URI,
        "pro-asistenta-nastaveni.md",
        "Nastavení: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech setup guide: installation, mailboxes, passwords, the first pass, the mail watcher.",
    ),
    (
        TROUBLE_URI,
        "pro-asistenta-potize.md",
        "Potíže: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech troubleshooting guide: start-up messages, tool error codes, sends that ended unclearly.",
    ),
)


def guide_text(name: str = "pro-asistenta.md") -> str:
    """One of the Czech guides for the assistant, shipped inside the package."""
    return (resources.files("mcp_multi_gmail") / "data" / name).read_text(encoding="utf-8")


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
    for uri, name, title, description in GUIDES:
        server.add_resource(
            TextResource(
                uri=uri,
                name=name.removesuffix(".md"),
                title=title,
                description=description,
                mime_type="text/markdown",
                text=guide_text(name),
            )
        )
    accounts.register(server, runtime)
    read.register(server, runtime)
    work.register(server, runtime)
    outgoing.register(server, runtime)
    return server
