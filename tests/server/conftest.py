"""Fixtures for driving the real server in-process against the emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from sweep_box import CLASSES, PROCESSED, Spec, config_entry, load

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.demo.setup import demo_accounts  # the same three mailboxes the demo shows
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, load_runtime
from support.clients import clients


@pytest.fixture
def make_runtime(emulator: GmailEmulator, tmp_path: Path) -> Callable[..., Runtime]:
    """A runtime for a configuration; `call_timeout_s=` shortens the deadline (deadline tests only)."""

    def make(config_path: Path, call_timeout_s: float | None = None) -> Runtime:
        # the send journal of this test only
        state = tmp_path / "state"
        return load_runtime(config_path, gmail_env(emulator), state_dir=state, call_timeout_s=call_timeout_s)

    return make


@pytest.fixture
def box_runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[..., Runtime]
) -> Callable[..., Runtime]:
    """Messages loaded into sweep_box's mailbox and a runtime for it as mailbox "o", with its processed
    label and classifications (`**settings` adds to the account's entry)."""

    def start(specs: Iterable[Spec], labels: Iterable[str] = (PROCESSED, *CLASSES), **settings: object) -> Runtime:
        load(emulator, specs, labels)
        return make_runtime(write_config([config_entry(**settings)]))

    return start


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


@pytest.fixture
async def call() -> AsyncIterator[Callable[..., Any]]:
    """`await call(runtime, tool, args)`: one tool call through a real in-process MCP client; returns
    the CallToolResult. A test's calls on one runtime share one server and connection (tests/support/clients.py)."""
    async with clients() as open_clients:
        yield open_clients.call
