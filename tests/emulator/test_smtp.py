"""The emulator's SMTP front (smtp.py), driven by aiosmtplib (the product's client) and raw sockets:
the EHLO of both ports, STARTTLS and AUTH as Gmail asks for them, the wire log without secrets, and
clients that vanish mid-session."""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
from typing import Literal

import aiosmtplib
import pytest

from gmail_emulator import GmailEmulator, SmtpFault
from support import wait_until, wait_until_async
from support.smtp_sending import ALICE, ALICE_PW, BOB, BOB_PW, make_message, run_closed, send


def test_ehlo_shape_on_both_ports(emu: GmailEmulator) -> None:
    async def probe() -> tuple[str, str, set[str], set[str]]:
        implicit = aiosmtplib.SMTP(
            hostname=emu.host, port=emu.smtp_ssl_port, use_tls=True, tls_context=emu.client_ssl_context()
        )
        async with implicit:
            resp = await implicit.ehlo()
            ssl_auth = set(implicit.server_auth_methods)
        submission = aiosmtplib.SMTP(
            hostname=emu.host, port=emu.smtp_starttls_port, start_tls=False, tls_context=emu.client_ssl_context()
        )
        async with submission:
            before = await submission.ehlo()
            plain_auth = set(submission.server_auth_methods)
            assert submission.supports_extension("starttls")
        return resp.message, before.message, ssl_auth, plain_auth

    ssl_ehlo, plain_ehlo, ssl_auth, plain_auth = run_closed(probe())
    assert ssl_ehlo.startswith("smtp.gmail.com at your service, [127.0.0.1]")
    assert "ENHANCEDSTATUSCODES" in ssl_ehlo
    assert {"plain", "login"} <= ssl_auth
    assert plain_ehlo.startswith("smtp.gmail.com at your service")
    assert plain_auth == set()  # 587 advertises AUTH only after STARTTLS


def test_starttls_port_refuses_mail_before_tls(emu: GmailEmulator) -> None:
    async def attempt() -> None:
        client = aiosmtplib.SMTP(hostname=emu.host, port=emu.smtp_starttls_port, start_tls=False, timeout=10)
        async with client:
            await client.ehlo()
            with pytest.raises(aiosmtplib.SMTPSenderRefused) as info:
                await client.mail(ALICE)
            assert info.value.code == 530

    run_closed(attempt())
    assert emu.outbox() == []


def test_mail_without_auth_is_refused(emu: GmailEmulator) -> None:
    async def attempt() -> int:
        client = aiosmtplib.SMTP(
            hostname=emu.host, port=emu.smtp_ssl_port, use_tls=True, tls_context=emu.client_ssl_context(), timeout=10
        )
        async with client:
            await client.ehlo()
            with pytest.raises(aiosmtplib.SMTPSenderRefused) as info:
                await client.mail(ALICE)
        return info.value.code

    assert run_closed(attempt()) == 530


def test_bad_password_gets_gmails_535(emu: GmailEmulator) -> None:
    with pytest.raises(aiosmtplib.SMTPAuthenticationError) as info:
        send(emu, make_message(), password="wrongwrongwrongw")
    assert info.value.code == 535
    assert "5.7.8 Username and Password not accepted" in info.value.message
    assert "https://support.google.com/mail/?p=BadCredentials" in info.value.message
    with pytest.raises(aiosmtplib.SMTPAuthenticationError):
        send(emu, make_message(), username="nobody@example.com")
    assert emu.outbox() == []
    assert emu.smtp_logins() == 0


def test_smtp_logins_are_counted(emu: GmailEmulator) -> None:
    send(emu, make_message())
    send(emu, make_message(msgid="<hello-2@example.com>"), port="starttls")
    send(emu, make_message(sender=BOB, to=ALICE, msgid="<b-1@example.com>"), username=BOB, password=BOB_PW)
    with pytest.raises(aiosmtplib.SMTPAuthenticationError):
        send(emu, make_message(), password="nope")
    assert emu.smtp_logins(ALICE) == 2
    assert emu.smtp_logins(BOB.upper()) == 1
    assert emu.smtp_logins() == 3
    assert emu.smtp_sessions() == 4
    emu.reset_counters()
    assert emu.smtp_logins() == 0


# --------------------------------------------------------------------------- wire log


def _client_wire(emu: GmailEmulator) -> bytes:
    return b"".join(e.data for e in emu.wire_log() if e.protocol == "smtp" and e.direction == "c")


def test_wire_log_redacts_auth_plain(emu: GmailEmulator) -> None:
    send(emu, make_message())
    client = _client_wire(emu)
    secret = base64.b64encode(f"\0{ALICE}\0{ALICE_PW}".encode())
    assert b"AUTH PLAIN ***" in client
    assert secret not in client
    assert ALICE_PW.encode() not in client
    assert b"MAIL FROM:<alice@example.com>" in client
    server = b"".join(e.data for e in emu.wire_log() if e.protocol == "smtp" and e.direction == "s")
    assert b"235 2.7.0 Accepted" in server


def test_wire_log_redacts_auth_login(emu: GmailEmulator) -> None:
    async def login() -> None:
        client = aiosmtplib.SMTP(
            hostname=emu.host, port=emu.smtp_ssl_port, use_tls=True, tls_context=emu.client_ssl_context(), timeout=10
        )
        async with client:
            await client.ehlo()
            await client.auth_login(ALICE, ALICE_PW)

    run_closed(login())
    client = _client_wire(emu)
    assert b"AUTH LOGIN" in client
    assert base64.b64encode(ALICE_PW.encode()) not in client
    assert base64.b64encode(ALICE.encode()) not in client
    assert ALICE_PW.encode() not in client
    assert emu.smtp_logins(ALICE) == 1


# --------------------------------------------------------------------------- robustness


def _raw_session(emu: GmailEmulator) -> ssl.SSLSocket:
    ctx = emu.client_ssl_context()
    sock = socket.create_connection((emu.host, emu.smtp_ssl_port), timeout=5)
    return ctx.wrap_socket(sock, server_hostname=emu.host)


def _reply(conn: socket.socket) -> bytes:
    data = b""
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            return data
        data += chunk
        lines = data.split(b"\r\n")
        if len(lines) >= 2 and len(lines[-2]) >= 4 and lines[-2][3:4] == b" ":
            return data


def test_client_vanishing_during_starttls(emu: GmailEmulator) -> None:
    with socket.create_connection((emu.host, emu.smtp_starttls_port), timeout=5) as sock:
        assert sock.recv(4096).startswith(b"220 ")
        sock.sendall(b"EHLO test\r\n")
        assert _reply(sock).startswith(b"250-")
        sock.sendall(b"STARTTLS\r\n")
        assert sock.recv(4096).startswith(b"220 2.0.0")
        sock.sendall(b"\x16\x03\x01\x00\x05hello")  # the start of a broken ClientHello
    wait_until(lambda: emu.smtp_open_sessions() == 0)
    send(emu, make_message(), port="starttls")
    assert len(emu.outbox()) == 1


@pytest.mark.parametrize("cut_after", ["greeting", "ehlo", "auth", "data-half", "auth-login-half"])
def test_client_vanishing_never_breaks_the_server(emu: GmailEmulator, cut_after: str) -> None:
    plain = base64.b64encode(f"\0{ALICE}\0{ALICE_PW}".encode())
    with _raw_session(emu) as conn:
        assert _reply(conn).startswith(b"220 ")
        if cut_after != "greeting":
            conn.sendall(b"EHLO test\r\n")
            _reply(conn)
        if cut_after == "auth-login-half":
            conn.sendall(b"AUTH LOGIN\r\n")
            assert _reply(conn).startswith(b"334 ")
        elif cut_after in ("auth", "data-half"):
            conn.sendall(b"AUTH PLAIN " + plain + b"\r\n")
            assert _reply(conn).startswith(b"235 ")
        if cut_after == "data-half":
            conn.sendall(b"MAIL FROM:<alice@example.com>\r\n")
            _reply(conn)
            conn.sendall(b"RCPT TO:<bob@example.com>\r\n")
            _reply(conn)
            conn.sendall(b"DATA\r\n")
            assert _reply(conn).startswith(b"354 ")
            conn.sendall(b"Subject: half\r\n\r\nonly half of the")
    wait_until(lambda: emu.smtp_open_sessions() == 0)
    assert emu.outbox() == []
    send(emu, make_message())
    assert len(emu.outbox()) == 1


@pytest.mark.parametrize(("stage", "accepted"), [("mail", False), ("after_data", True)])
def test_fault_hold_keeps_the_reply_until_the_client_goes(
    emu: GmailEmulator, stage: Literal["mail", "after_data"], accepted: bool
) -> None:
    emu.add_smtp_fault(SmtpFault(stage, "hold"))

    async def held_send() -> None:
        client = aiosmtplib.SMTP(
            hostname=emu.host, port=emu.smtp_ssl_port, use_tls=True, tls_context=emu.client_ssl_context(), timeout=10
        )
        await client.connect()
        await client.login(ALICE, ALICE_PW)
        sending = asyncio.ensure_future(client.sendmail(ALICE, [BOB], make_message().as_bytes()))
        await wait_until_async(lambda: emu.smtp_held() >= 1, 10, "the hold")  # the emulator has its own loop
        assert not sending.done()  # no reply while held
        client.close()  # the client goes away, as a killed process would
        with pytest.raises(aiosmtplib.SMTPException):
            await sending

    asyncio.run(held_send())
    assert len(emu.outbox()) == (1 if accepted else 0)
    with pytest.raises(ValueError, match="hold works at"):
        SmtpFault("ehlo", "hold")
