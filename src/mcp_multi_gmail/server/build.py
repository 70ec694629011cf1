"""The MCP server: instructions from the configuration, the guide resource, every tool family."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources import TextResource
from mcp.types import CallToolResult, InputRequiredResult, TextContent, Tool
from pydantic import ValidationError

from .. import __version__
from ..errors import MailError
from ..runtime import Runtime
from .instructions import (
    BULK_URI,
    FORWARD_URI,
    GUIDE_URI,
    INVITATIONS_URI,
    LISTS_URI,
    REMINDERS_URI,
    SETUP_URI,
    TROUBLE_URI,
    UNDO_URI,
    build_instructions,
    build_repair_instructions,
)
from .lifetime import LOGOUT_GRACE_S
from .notify import progress_notifications
from .schema import published
from .shipped import shipped_tools, wire_form
from .tools.arguments import invalid_arguments
from .tools.common import compact_json, error_result

logger = logging.getLogger("mcp_multi_gmail")

SERVER_NAME = "mcp-multi-gmail"
PROJECT_DIR = Path(__file__).resolve().parents[3]


# (resource URI, file name, title, description) of the Czech guides for the assistant: the three every
# session may need, then those read by need (named by their tools' descriptions and the instructions).
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
    (
        BULK_URI,
        "pro-asistenta-hromadne.md",
        "Hromadné změny: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to mg_sweep: one change over a whole query, preview and confirm, the daily clean-up.",
    ),
    (
        UNDO_URI,
        "pro-asistenta-vraceni.md",
        "Vracení: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to mg_undo: undo tokens, what comes back, what cannot.",
    ),
    (
        LISTS_URI,
        "pro-asistenta-rozesilky.md",
        "Rozesílky: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to mailing lists: the overview and leaving a list the user chose.",
    ),
    (
        FORWARD_URI,
        "pro-asistenta-preposlani.md",
        "Přeposlání: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to forwarding a message and sending the text of an existing draft.",
    ),
    (
        INVITATIONS_URI,
        "pro-asistenta-pozvanky.md",
        "Pozvánky: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to meeting invitations: reading them, and answering only on the user's word.",
    ),
    (
        REMINDERS_URI,
        "pro-asistenta-pripominky.md",
        "Připomínky: průvodce pro asistenta (mcp-multi-gmail)",
        "The Czech guide to follow-ups: replies the user waits for, reminders kept as labels, nudges.",
    ),
)


def guide_text(name: str = "pro-asistenta.md") -> str:
    """One of the Czech guides for the assistant, shipped inside the package."""
    return (resources.files("mcp_multi_gmail") / "data" / name).read_text(encoding="utf-8")


def local_guide_path() -> Path | None:
    """docs/pro-asistenta.md beside the package when the project folder is there (source or add-on)."""
    path = PROJECT_DIR / "docs" / "pro-asistenta.md"
    return path if path.is_file() else None


class GmailServer(MCPServer):
    """MCPServer whose every tool result has one of two shapes any MCP client can read.

    Success: structuredContent plus the same data as compact JSON text. Error: isError and one
    text item `{"error": {code, message, retryable}}`, no structuredContent, including the
    errors the SDK raises itself before a tool runs (bad arguments, unknown tool).
    """

    runtime: Runtime | None = None  # set by build_server; read for repair mode and confirm_sends
    served_shipped: list[Tool] | None = None  # the shipped list, once tools/list answered with it

    async def list_tools(self) -> list[Tool]:
        if not tools_built(self):
            shipped = shipped_tools()  # the same list, without building a tool (shipped.py)
            if shipped is not None:
                self.served_shipped = shipped
                return _with_send_marks(shipped, self.runtime)
        return await self._built_list()

    async def _built_list(self) -> list[Tool]:
        return [published(tool) for tool in await super().list_tools()]  # standard JSON Schema (schema.py)

    async def _check_shipped(self, context: Context[Any, Any] | None) -> None:
        """At the first call, which builds the tools: a shipped list that differs from them (a
        changed tool whose data/tools.json was not regenerated) is announced, so clients read it anew."""
        shipped, self.served_shipped = self.served_shipped, None
        if shipped is None or wire_form(await self._built_list()) == wire_form(_with_send_marks(shipped, self.runtime)):
            return
        logger.warning("data/tools.json differs from the tools as built; clients are told to list them again")
        if context is not None:
            await _announce_tools_changed(context)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        repair = self.runtime.repair if self.runtime is not None else None
        if repair is not None and name != RELOAD_TOOL and self._tool_manager.get_tool(name) is not None:
            return error_result(repair.error())  # repair mode: only mg_reload_config works
        if self.served_shipped is not None:
            await self._check_shipped(context)
        tools_before = _listed_tools(self) if name == RELOAD_TOOL else None
        try:
            async with progress_notifications(context):  # when the request carries a progressToken
                result = await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            # The tools catch their own failures, so this is a result that broke its own schema.
            logger.exception("tool %s returned a malformed result", name)
            return error_result(MailError("upstream_error", f"Internal error in {name}: its result was malformed."))
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                # Argument names only: the values are the caller's data.
                logger.info(
                    "tool %s refused arguments: %s",
                    name,
                    sorted({str(e["loc"][0]) for e in error.__cause__.errors() if e["loc"]}),
                )
                return error_result(invalid_arguments(name, error.__cause__))
            if self._tool_manager.get_tool(name) is None:
                known = ", ".join(sorted(tool.name for tool in self._tool_manager.list_tools()))
                return error_result(MailError("invalid_input", f"Unknown tool {name}. The tools are: {known}."))
            raise
        if isinstance(result, CallToolResult) and not result.is_error and result.structured_content is not None:
            # The SDK writes the text with a 2-space indent; compact JSON of the same data is a third smaller.
            result.content = [TextContent(type="text", text=compact_json(result.structured_content))]
        if tools_before is not None and self.runtime is not None:
            _mark_sends(self, self.runtime)
            if _listed_tools(self) != tools_before and context is not None:
                await _announce_tools_changed(context)
        return result


@asynccontextmanager
async def _logouts_finish(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
    """When the client goes, wait a moment for the LOGOUTs that still follow answers already given."""
    try:
        yield {}
    finally:
        from ..gmail.imap import finish_logouts

        await finish_logouts(LOGOUT_GRACE_S)  # the server ends within 2 s of its client (lifetime.py)


def _instructions(runtime: Runtime) -> str:
    repair = runtime.repair
    if repair is not None:
        return build_repair_instructions(repair.problem, repair.lines, config_path=repair.config_path)
    return build_instructions(runtime.config, guide_path=local_guide_path())


def build_server(runtime: Runtime) -> MCPServer:
    server = GmailServer(
        name=SERVER_NAME,
        version=__version__,
        instructions=_instructions(runtime),
        lifespan=_logouts_finish,
    )
    server.runtime = runtime
    _announce_tool_list_changes(server)
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

    def register_tools() -> None:
        # The tool modules pull in the mail layer, the result models and the protocol libraries.
        from .tools import accounts, bulk, followups, outgoing, read, subscriptions, work
        from .tools.common import Registrar

        tool = Registrar(server, runtime)
        accounts.register(tool, runtime, lambda: _instructions(runtime))
        read.register(tool, runtime)
        work.register(tool, runtime)
        outgoing.register(tool, runtime)
        bulk.register(tool, runtime)
        subscriptions.register(tool, runtime)
        followups.register(tool, runtime)
        _mark_sends(server, runtime)

    _register_on_first_use(server, register_tools)
    return server


# --- the tool list: confirm_sends, and telling clients when a reload changed it ---------------------

RELOAD_TOOL = "mg_reload_config"
SEND_TOOL = "mg_send_message"
# The tools that send something out of the mailbox: a message, an unsubscribe (mail or one-click), an
# invitation's answer.
SENDING_TOOLS = (SEND_TOOL, "mg_unsubscribe", "mg_respond_invitation")
# Claude Code asks the user before every call of a tool marked so, even in its bypass modes.
CONFIRM_META = {"anthropic/requiresUserInteraction": True}


def _mark_sends(server: MCPServer, runtime: Runtime) -> None:
    """`confirm_sends: true` marks mg_send_message and mg_unsubscribe; a reload may switch it either way."""
    for name in SENDING_TOOLS:
        tool = server._tool_manager.get_tool(name)
        if tool is not None:
            tool.meta = dict(CONFIRM_META) if runtime.config.confirm_sends else None


def _with_send_marks(tools: list[Tool], runtime: Runtime | None) -> list[Tool]:
    """The shipped list (made with confirm_sends off) as _mark_sends would have marked it."""
    if runtime is None or not runtime.config.confirm_sends:
        return tools
    marked = {"meta": dict(CONFIRM_META)}
    return [tool.model_copy(update=marked) if tool.name in SENDING_TOOLS else tool for tool in tools]


def _listed_tools(server: MCPServer) -> list[tuple[str, Any]]:
    return [(tool.name, tool.meta) for tool in server._tool_manager.list_tools()]


async def _announce_tools_changed(context: Context[Any, Any]) -> None:
    """notifications/tools/list_changed on the connection, and on `subscriptions/listen` streams
    for clients of the newer protocol."""
    for announce in (context.session.send_tool_list_changed, context.notify_tools_changed):
        try:
            await announce()
        except Exception:  # a client gone mid-call must not turn a good reload into an error
            logger.warning("could not announce the changed tool list", exc_info=True)


def _announce_tool_list_changes(server: MCPServer) -> None:
    """Declare `tools.listChanged` in `initialize`: the SDK takes it only as an argument of
    create_initialization_options, which its stdio runner calls without one."""
    lowlevel = server._lowlevel_server
    create = lowlevel.create_initialization_options

    def with_tools_changed(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(tools_changed=True)
        return create(options, *args, **kwargs)

    lowlevel.create_initialization_options = with_tools_changed  # type: ignore[method-assign]


class _ToolsOnFirstUse:
    """Stands in for the SDK's tool manager until something asks for a tool.

    `initialize` needs the instructions and capabilities only. Building the tools' schemas and
    importing everything behind them costs about as much again as the rest of start-up, so that
    work waits for the first tools/call; tools/list is answered from the shipped list (shipped.py)."""

    def __init__(self, manager: Any, register: Callable[[], None]) -> None:
        self._manager = manager
        self._register: Callable[[], None] | None = register
        self.then: Callable[[], None] | None = None  # after_tools_built

    def __getattr__(self, name: str) -> Any:
        register, self._register = self._register, None
        if register is not None:
            register()  # its add_tool calls come back here and go straight through
            if self.then is not None:
                self.then()
        return getattr(self._manager, name)


def _register_on_first_use(server: MCPServer, register: Callable[[], None]) -> None:
    server._tool_manager = _ToolsOnFirstUse(server._tool_manager, register)  # type: ignore[assignment]


def tools_built(server: MCPServer) -> bool:
    """Whether the tools exist yet (asking the stand-in anything else would build them)."""
    manager = server._tool_manager
    return not (isinstance(manager, _ToolsOnFirstUse) and manager._register is not None)


def after_tools_built(server: MCPServer, then: Callable[[], None]) -> None:
    """Call `then` once the tools are built (at the first tools/call, or at a tools/list with no
    shipped list), or now."""
    manager = server._tool_manager
    if isinstance(manager, _ToolsOnFirstUse) and manager._register is not None:
        manager.then = then
    else:
        then()
