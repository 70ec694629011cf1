"""Every SMTP connection a call opens is closed when the call returns, however Gmail's side ends it.

After its last answer (221 to QUIT, a 421) Gmail ends the session; the TLS goodbye (close_notify,
RFC 8446 §6.1) then needs one more answer before the socket is closed. aiosmtplib starts that
goodbye and returns, so a call used to return with its socket still open: when the event loop ended
in that moment (a test's end, the server's exit) the socket was never closed, and Python reported
an unclosed socket (issue 42). A session now waits for the goodbye, at most `smtp.GOODBYE_S`, then
drops the line. Gmail's side is tested three ways (`smtp_goodbye`, BEHAVIOURS.md): it answers the
goodbye, it closes without one, or it goes silent.
"""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator, SmtpFault
from mcp_multi_gmail.gmail import smtp
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
GOODBYES = ["tls", "tcp", "silent"]


def open_smtp_sockets(emulator: GmailEmulator) -> set[int]:
    """This process's open sockets whose far end is one of the emulator's SMTP ports (the client's
    side: the emulator's own sockets have the client's port at the far end)."""
    ports = {emulator.smtp_ssl_port, emulator.smtp_starttls_port}
    found: set[int] = set()
    for thing in gc.get_objects():
        if isinstance(thing, socket.socket) and thing.fileno() != -1:
            try:
                peer = thing.getpeername()
            except OSError:
                continue
            if isinstance(peer, tuple) and peer[1] in ports:
                found.add(id(thing))
    return found


@pytest.fixture(params=[465, 587])
def runtime(
    request: pytest.FixtureRequest,
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True, "smtp_port": request.param}
    return make_runtime(write_config([entry]))


@pytest.fixture
def drops(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a session dropped its line because the goodbye was not answered in time."""
    dropped: list[int] = []
    real_drop = smtp._Ends.drop

    def counted(self: smtp._Ends) -> None:
        dropped.append(len(self.lines))
        real_drop(self)

    monkeypatch.setattr(smtp._Ends, "drop", counted)
    # Gmail's silence is waited for this long here (1 s in use), so the silent cases stay quick.
    monkeypatch.setattr(smtp, "GOODBYE_S", 0.3)
    return dropped


@pytest.mark.parametrize("goodbye", GOODBYES)
async def test_a_sent_message_leaves_no_socket_open(
    emulator: GmailEmulator, runtime: Runtime, call: Call, drops: list[int], goodbye: str
) -> None:
    emulator.set_knobs(smtp_goodbye=goodbye)
    before = open_smtp_sockets(emulator)
    data = await ok(call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y")
    assert open_smtp_sockets(emulator) - before == set()
    # The goodbye changes nothing of the send: accepted once, delivered once.
    assert data["accepted"] == ["petr@partner.example"] and len(emulator.outbox()) == 1
    if goodbye == "silent":
        assert drops, "Gmail never answered the goodbye: the session must have dropped the line"


@pytest.mark.parametrize("goodbye", GOODBYES)
@pytest.mark.parametrize(
    ("stage", "action", "code"),
    [
        ("connect", "421", "upstream_error"),  # Gmail closes instead of its greeting
        ("auth", "421", "upstream_error"),  # Gmail closes after the login
        ("auth", "535", "auth_failed"),  # Gmail keeps the session; the client ends it with QUIT
        ("mail", "421", "upstream_error"),
    ],
)
async def test_a_refused_send_leaves_no_socket_open(
    emulator: GmailEmulator,
    runtime: Runtime,
    call: Call,
    drops: list[int],
    goodbye: str,
    stage: str,
    action: str,
    code: str,
) -> None:
    emulator.set_knobs(smtp_goodbye=goodbye)
    emulator.add_smtp_fault(SmtpFault(stage=stage, action=action, times=-1))  # type: ignore[arg-type]
    before = open_smtp_sockets(emulator)
    body = await error(
        call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="x", body="y"
    )
    assert body["code"] == code and "Nothing was sent" in body["message"]
    assert open_smtp_sockets(emulator) - before == set()
    assert emulator.outbox() == []
