"""Fixtures for driving the real server in-process against the emulator."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.demo.setup import demo_accounts  # the same three mailboxes the demo shows
from mcp_multi_gmail.gmail.imap import finish_logouts
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import gmail_env, load_runtime


@pytest.fixture
def make_runtime(emulator: GmailEmulator, tmp_path: Path) -> Callable[[Path], Runtime]:
    def make(config_path: Path) -> Runtime:
        # the send journal of this test only
        return load_runtime(config_path, gmail_env(emulator), state_dir=tmp_path / "state")

    return make


DEMO_SEED = Path(str(files("gmail_emulator.seeds") / "demo" / "seed.json"))


@pytest.fixture
def demo(
    emulator_session: GmailEmulator,
    write_config: Callable[..., Path],
    tmp_path: Path,
) -> Runtime:
    """The emulator loaded with the demo seed and a runtime configured for its three mailboxes."""
    emulator_session.reset(DEMO_SEED)
    path = write_config(demo_accounts(), download_dir=str(tmp_path / "downloads"))
    return load_runtime(path, gmail_env(emulator_session), state_dir=tmp_path / "state")


async def call_tool(runtime: Runtime, tool: str, args: dict[str, Any]) -> Any:
    """One tool call through a real in-process MCP client; returns the CallToolResult."""
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, args)
    # LOGOUT follows the answer in the background; let it land before the test looks at counters.
    await finish_logouts()
    return result


@pytest.fixture
def call() -> Callable[..., Any]:
    return call_tool
