"""The published tool list is byte-identical to a committed snapshot, changed only on purpose.

Every tool's name, description, input and output schema, annotations and `_meta`, as tools/list
publishes them for the demo configuration (confirm_sends off, not in repair mode). Moving code
between modules must not change a byte of it; a deliberate change regenerates the snapshot
(`MG_UPDATE_SNAPSHOT=1`) and says so in CHANGELOG.md.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
from mcp import Client

from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).parent / "tool_list.snapshot.json"
UPDATE_VARIABLE = "MG_UPDATE_SNAPSHOT"


async def _published_text(runtime: Runtime) -> str:
    async with Client(build_server(runtime)) as client:
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
