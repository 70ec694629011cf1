"""The published tool list is byte-identical to a committed snapshot, changed only on purpose.

Every tool's name, description, input and output schema, annotations and `_meta`, as tools/list
publishes them for the demo configuration (confirm_sends off, not in repair mode). Moving code
between modules must not change a byte of it; a deliberate change regenerates the snapshot
(`MG_UPDATE_SNAPSHOT=1`) and says so in CHANGELOG.md.

The server answers tools/list from a copy of that list shipped in the package (server/shipped.py,
`data/tools.json`) until its tools are built: that copy must be exactly what the built tools publish,
with `confirm_sends` on and off. `MG_UPDATE_SNAPSHOT=1` regenerates it too.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.demo.setup import demo_accounts
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build, build_server, shipped
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).parent / "tool_list.snapshot.json"
UPDATE_VARIABLE = "MG_UPDATE_SNAPSHOT"
SHIPPED = Path(shipped.__file__).parents[1] / "data" / shipped.SHIPPED_FILE


async def _published_text(runtime: Runtime) -> str:
    server = build_server(runtime)
    server._tool_manager.list_tools()  # the tools as built, not the shipped copy of their list
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    # As on the wire (aliases such as inputSchema and _meta, no absent fields), in the published order.
    listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    return json.dumps(listed, indent=1, ensure_ascii=False) + "\n"


async def test_the_published_tool_list_matches_the_committed_snapshot(demo: Runtime) -> None:
    text = await _published_text(demo)
    if os.environ.get(UPDATE_VARIABLE) == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    committed = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.is_file() else ""
    if text != committed:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True), text.splitlines(keepends=True), "committed", "published", n=2
            )
        )
        pytest.fail(
            f"The published tool list differs from {SNAPSHOT.name}. If the change is deliberate, "
            f"regenerate it with {UPDATE_VARIABLE}=1 uv run pytest tests/server/{Path(__file__).name} and say so in "
            f"CHANGELOG.md.\n{diff[:6000]}"
        )


async def _built_list(runtime: Runtime) -> list[dict[str, Any]]:
    """tools/list of a server whose tools are built (no shipped copy involved)."""
    server = build_server(runtime)
    server._tool_manager.list_tools()  # builds them
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    return shipped.wire_form(tools)


async def _first_list(runtime: Runtime) -> list[dict[str, Any]]:
    """tools/list as a fresh server answers it, before anything built its tools."""
    server = build_server(runtime)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    assert build.tools_built(server) is False  # answered without building them
    return shipped.wire_form(tools)


async def test_the_shipped_tool_list_is_what_the_built_tools_publish(demo: Runtime) -> None:
    built = await _built_list(demo)
    if os.environ.get(UPDATE_VARIABLE) == "1":
        SHIPPED.write_text(json.dumps(built, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        shipped.forget()
    assert shipped.shipped_tools() is not None, f"{SHIPPED} is missing or unreadable"
    assert await _first_list(demo) == built, (
        f"{SHIPPED.name} is out of date: regenerate it with {UPDATE_VARIABLE}=1 uv run pytest -n0 "
        f"tests/server/{Path(__file__).name}"
    )


async def test_the_shipped_tool_list_carries_the_confirm_sends_marks(
    write_config: Callable[..., Path], tmp_path: Path, emulator_session: GmailEmulator
) -> None:
    path = write_config(demo_accounts(), confirm_sends=True, download_dir=str(tmp_path / "downloads"))
    runtime = load_runtime(path, gmail_env(emulator_session), state_dir=tmp_path / "state")
    built = await _built_list(runtime)
    marked = [tool["name"] for tool in built if tool.get("_meta") == build.CONFIRM_META]
    assert sorted(marked) == sorted(build.SENDING_TOOLS)
    assert await _first_list(runtime) == built


async def test_a_shipped_list_that_differs_from_the_built_tools_is_announced_at_the_first_call(
    demo: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool changed without regenerating data/tools.json: the first call, which builds the tools, tells
    the client to list them again, and the list is the built one from then on."""
    real = shipped.shipped_tools()
    assert real is not None
    stale = [tool.model_copy(update={"description": "an old description"}) for tool in real]
    monkeypatch.setattr(build, "shipped_tools", lambda: stale)
    seen: list[str] = []

    async def note(message: Any) -> None:
        seen.append(str(getattr(getattr(message, "root", message), "method", "")))

    async with Client(build_server(demo), mode="legacy", message_handler=note) as client:
        assert (await client.list_tools()).tools[0].description == "an old description"
        await client.call_tool("mg_list_accounts", {})
        assert "notifications/tools/list_changed" in seen
        assert shipped.wire_form((await client.list_tools()).tools) == await _built_list(demo)
