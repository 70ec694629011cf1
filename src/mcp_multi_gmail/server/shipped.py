"""The published tool list, shipped with the package, so tools/list answers before any tool is built.

Building the 21 tools (importing the mail layer behind them and letting pydantic derive every
schema) is most of a start-up, and clients ask for the list right after the handshake. The list
does not depend on the configuration except for the `confirm_sends` mark (build.py), so it is
generated once, written to `data/tools.json`, and read from there. The tools themselves are still
built at the first tools/call, which needs them; the built list replaces the shipped one from then
on. tests/server/test_tool_list_snapshot.py proves the file is what the code publishes, and
`MG_UPDATE_SNAPSHOT=1` regenerates it together with the snapshot (docs/en/development.md).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from mcp.types import Tool

SHIPPED_FILE = "tools.json"

_loaded: list[Tool] | None = None
_tried = False


def wire_form(tools: list[Tool]) -> list[dict[str, Any]]:
    """The tools as tools/list puts them on the wire: aliases such as inputSchema, no absent fields."""
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def shipped_text(tools: list[Tool]) -> str:
    """The contents of data/tools.json for this published list."""
    return json.dumps(wire_form(tools), ensure_ascii=False, separators=(",", ":")) + "\n"


def shipped_tools() -> list[Tool] | None:
    """The shipped list (read once per process), or None when the file is missing or broken."""
    global _loaded, _tried
    if not _tried:
        _tried = True
        try:
            text = (resources.files("mcp_multi_gmail") / "data" / SHIPPED_FILE).read_text(encoding="utf-8")
            _loaded = [Tool.model_validate(item) for item in json.loads(text)]
        except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
            _loaded = None  # build the tools instead: slower, never wrong
    return _loaded


def forget() -> None:
    """Read the file again at the next use (after the tests regenerated it)."""
    global _loaded, _tried
    _loaded, _tried = None, False
