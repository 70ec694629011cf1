"""The answer goes back before the LOGOUT; the LOGOUT still happens and no socket is left open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import login, worker
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server import build_server
from support import wait_until_async

pytestmark = pytest.mark.anyio

BOX = "osobni@example.cz"


async def wait_for(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    await wait_until_async(condition, timeout, what)


def logouts(emulator: GmailEmulator) -> int:
    """LOGOUTs of the sessions this test logged in (a session left over from another test may
    still be winding down on the shared emulator)."""
    commands = emulator.commands(BOX)
    ours = {c.session_id for c in commands if c.name == "LOGIN"}
    return sum(1 for c in commands if c.name == "LOGOUT" and c.session_id in ours)


@pytest.fixture
def sockets(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The client side of every IMAP connection the server opens."""
    opened: list[Any] = []
    connect = login.connect

    def recording(endpoint: Any) -> Any:
        client = connect(endpoint)
        opened.append(client.socket())
        return client

    monkeypatch.setattr(login, "connect", recording)
    return opened


def all_closed(sockets: list[Any]) -> bool:
    return all(sock.fileno() == -1 for sock in sockets)


@pytest.fixture
def runtime(write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    return make_runtime(write_config([{"name": "o", "address": BOX, "password": "osobniheslohesla"}]))


async def test_answer_comes_before_the_logout_which_still_happens(
    emulator: GmailEmulator, runtime: Runtime, sockets: list[Any]
) -> None:
    emulator.set_latency("LOGOUT", 2.0)  # a slow LOGOUT answer must not hold the tool result
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool("mg_list_labels", {"account": "o"})
        assert result.is_error is False
        # The tool answered while Gmail was still sitting on the LOGOUT.
        assert logouts(emulator) == 0
        assert len(sockets) == 1 and not all_closed(sockets)
        await wait_for(lambda: logouts(emulator) == 1, "the LOGOUT")
        await wait_for(lambda: all_closed(sockets), "the socket to close")
    assert emulator.connections(BOX) == 1


async def test_every_session_of_a_busy_client_logs_out(
    emulator: GmailEmulator, runtime: Runtime, sockets: list[Any]
) -> None:
    async with Client(build_server(runtime)) as client:
        for _ in range(5):
            assert (await client.call_tool("mg_list_labels", {"account": "o"})).is_error is False
        await wait_for(lambda: len(sockets) == 5 and all_closed(sockets), "every socket to close")
        await wait_for(lambda: logouts(emulator) == 5, "every LOGOUT")
    assert logouts(emulator) == emulator.connections(BOX) == 5


async def test_a_silent_logout_does_not_keep_the_socket(
    emulator: GmailEmulator, runtime: Runtime, sockets: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(login, "LOGOUT_TIMEOUT_S", 0.2)
    emulator.set_latency("LOGOUT", 2.0)  # Gmail does not answer the LOGOUT in time
    async with Client(build_server(runtime)) as client:
        assert (await client.call_tool("mg_list_labels", {"account": "o"})).is_error is False
        # Bounded by the short LOGOUT timeout, not by the 120 s read timeout.
        await wait_for(lambda: len(sockets) == 1 and all_closed(sockets), "the socket to close")
        await wait_for(lambda: logouts(emulator) == 0 and not worker.LOGGING_OUT, "the worker to finish")
    # The emulator's side ends once its delayed answer finds the socket gone (no leftovers for later tests).
    await wait_for(lambda: logouts(emulator) == 1, "the emulator to notice", timeout=30)
