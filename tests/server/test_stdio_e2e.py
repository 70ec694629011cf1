"""End to end: the installed server as a subprocess over stdio, with the SDK's client and raw JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextResourceContents

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.server.instructions import GUIDE_PREFIX, GUIDE_URI, GUIDES_BY_NEED, SETUP_URI, TROUBLE_URI
from support import INITIALIZED, SERVER_SCRIPT, gmail_env, initialize_request

OSOBNI = {
    "name": "osobni",
    "address": "osobni@example.cz",
    "password": "osobniheslohesla",
    "processed_label": "Asistent",
    "can_send": True,
}
TYM = {"name": "tym", "address": "tym@example.com", "password": "tymovehesloheslo"}
SCRIPT = SERVER_SCRIPT


def server_env(emulator: GmailEmulator, state_dir: Path) -> dict[str, str]:
    """The server's environment; its state folder (send journal) belongs to the test."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "MG_WATCH_DIR": str(state_dir),
        **gmail_env(emulator),
    }


@pytest.mark.anyio
async def test_sdk_client_over_stdio(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config([OSOBNI, TYM])
    params = StdioServerParameters(
        command=str(SCRIPT), args=["--config", str(config)], env=server_env(emulator, tmp_path)
    )
    async with Client(params) as client:
        assert client.instructions is not None
        assert "osobni" in client.instructions and GUIDE_URI in client.instructions
        tools = (await client.list_tools()).tools
        assert {"mg_list_accounts", "mg_reload_config"} <= {t.name for t in tools}
        for tool in tools:
            assert tool.output_schema is not None and tool.title and tool.annotations is not None
        guide = (await client.read_resource(GUIDE_URI)).contents[0]
        assert isinstance(guide, TextResourceContents) and "mg_next_pass" in guide.text
        # the setup and troubleshooting guides are resources too, named in the instructions
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert listed == {GUIDE_URI, SETUP_URI, TROUBLE_URI} | {uri for uri, _ in GUIDES_BY_NEED}
        # each guide read by need: listed in the instructions, named by a tool's description, readable
        described = " ".join(tool.description or "" for tool in tools)
        for uri, what in GUIDES_BY_NEED:
            assert f"{uri.removeprefix(GUIDE_PREFIX)} ({what})" in client.instructions, uri
            assert uri in described, uri
            page = (await client.read_resource(uri)).contents[0]
            assert isinstance(page, TextResourceContents) and GUIDE_URI in page.text
        assert SETUP_URI in client.instructions and TROUBLE_URI in client.instructions
        setup = (await client.read_resource(SETUP_URI)).contents[0]
        assert isinstance(setup, TextResourceContents) and "SEM_VLOZ_HESLO_APLIKACE" in setup.text
        trouble = (await client.read_resource(TROUBLE_URI)).contents[0]
        assert isinstance(trouble, TextResourceContents) and "`invalid_input`" in trouble.text
        result = await client.call_tool("mg_list_accounts", {"verify": True})
        assert result.is_error is False
        assert result.structured_content is not None
        assert result.structured_content["failures"] == []
        assert result.structured_content["smtp"] == [{"account": "osobni", "port": 465}]


def test_stdout_carries_only_protocol(
    emulator: GmailEmulator, write_config: Callable[..., Path], raw_rpc: Any, tmp_path: Path
) -> None:
    config = write_config([OSOBNI, {**TYM, "password": "wrongwrongwrongw"}])
    proc = subprocess.Popen(
        [str(SCRIPT), "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(emulator, tmp_path),
    )
    rpc = raw_rpc(proc)
    try:
        rpc.send(initialize_request("raw-test"))
        init = rpc.reply(1)
        info = init["result"]["serverInfo"]
        assert (info["name"], info["version"]) == ("mcp-multi-gmail", "2.0.0")
        rpc.send(INITIALIZED)
        rpc.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "mg_list_accounts", "arguments": {"verify": True}},
            },
        )
        reply = rpc.reply(2)["result"]
        failures = reply["structuredContent"]["failures"]
        assert [(f["account"], f["code"]) for f in failures] == [("tym", "auth_failed")]
        rpc.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "mg_list_accounts", "arguments": {"verify": "nope"}},
            },
        )
        assert rpc.reply(3)["result"]["isError"] is True
    finally:
        rest, errors = proc.communicate(timeout=30)  # closes stdin: the server must then exit by itself
    for line in rest.splitlines():
        json.loads(line)
    assert proc.returncode == 0
    text = errors.decode()
    assert "běží" in text
    assert "wrongwrongwrongw" not in text and "osobniheslohesla" not in text


@pytest.mark.anyio
async def test_draft_send_then_trash_the_draft_over_stdio(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config([OSOBNI])
    params = StdioServerParameters(
        command=str(SCRIPT), args=["--config", str(config)], env=server_env(emulator, tmp_path)
    )
    text = {"to": ["petr@partner.example"], "subject": "Schůzka", "body": "Hodí se vám úterý?"}
    async with Client(params) as client:
        draft = await client.call_tool("mg_save_draft", {"account": "osobni", **text})
        assert draft.is_error is False and draft.structured_content is not None
        draft_id = draft.structured_content["message_id"]
        sent = await client.call_tool(
            "mg_send_message", {"account": "osobni", **text, "quote_original": False, "signature": False}
        )
        assert sent.is_error is False and sent.structured_content is not None
        assert sent.structured_content["sent_copy"]["saved"] is True
        trashed = await client.call_tool("mg_trash_message", {"account": "osobni", "message_id": draft_id})
        assert trashed.is_error is False and trashed.structured_content is not None
        assert trashed.structured_content["moved"] is True
        listed = await client.call_tool("mg_list_drafts", {"account": "osobni"})
        assert listed.structured_content is not None and listed.structured_content["total_drafts"] == 0
    [delivered] = emulator.outbox()
    assert delivered.recipients == ["petr@partner.example"] and b"Hodi se vam" not in delivered.data
    draft_info = emulator.message("osobni@example.cz", draft_id)
    assert draft_info is not None and draft_info.location == "trash"
