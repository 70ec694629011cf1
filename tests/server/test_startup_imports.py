"""Start-up loads only what the `initialize` answer needs; tools/list is answered from the shipped
list (server/shipped.py); the rest comes at the first tool call."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from gmail_emulator import GmailEmulator
from support import gmail_env

LATE = [
    "imapclient",
    "aiosmtplib",
    "mcp_multi_gmail.gmail.compose",
    "mcp_multi_gmail.gmail.parse",
    "mcp_multi_gmail.server.tools.read",
    "mcp_multi_gmail.mail.read.messages",
]

PROBE = """
import asyncio, gc, json, os, sys
from pathlib import Path
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from mcp_multi_gmail.server.build import after_tools_built
from mcp_multi_gmail.server.lifetime import freeze_long_lived

late = json.loads(sys.argv[2])
runtime = Runtime.load(Path(sys.argv[1]), environ=os.environ)
server = build_server(runtime)
after_tools_built(server, freeze_long_lived)  # as cli.py wires the stdio server
before = [name for name in late if name in sys.modules]
tools = asyncio.run(server.list_tools())
listed = [name for name in late if name in sys.modules]
frozen_before = gc.get_freeze_count()
asyncio.run(server.call_tool("mg_list_accounts", {}))
after = [name for name in late if name in sys.modules]
frozen = [frozen_before, gc.get_freeze_count()]
print(json.dumps({"before": before, "listed": listed, "after": after, "tools": len(tools), "frozen": frozen}))
"""


def test_heavy_modules_wait_for_the_first_tool_use(emulator: GmailEmulator, write_config: Callable[..., Path]) -> None:
    path = write_config([{"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla"}])
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), json.dumps(LATE)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**gmail_env(emulator), "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["before"] == [], "loaded before any tool was asked for"
    assert seen["listed"] == [], "loaded to answer tools/list"
    assert seen["tools"] >= 10 and "mcp_multi_gmail.server.tools.read" in seen["after"]
    # Once the tools are built, what exists is left out of later garbage collections (lifetime.py).
    assert seen["frozen"][0] == 0 < seen["frozen"][1]
