"""The emulator's SMTP front, driven by aiosmtplib (the product's client) and read back over IMAP."""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import time
from collections.abc import Coroutine, Iterator
from email.message import EmailMessage
from typing import Any, Literal, TypeVar

import aiosmtplib
import pytest
from imapclient import IMAPClient

from gmail_emulator import GmailEmulator, Knobs, MessageInfo, SmtpFault
from support import wait_until, wait_until_async

ALICE, ALICE_PW = "alice@example.com", "alicealicealicea"
BOB, BOB_PW = "bob@example.com", "bobbobbobbobbobb"
SEED = {
    "accounts": [
        {"address": ALICE, "password": ALICE_PW, "labels": ["Work"]},
        {"address": BOB, "password": BOB_PW},
    ]
}

Port = Literal["ssl", "starttls"]
T = TypeVar("T")


@pytest.fixture(scope="module")
def emu_module() -> Iterator[GmailEmulator]:
    # Filing and index delays off: the tests that are about them set them.
    with GmailEmulator(seed=SEED, knobs=Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)) as emu:
        yield emu


@pytest.fixture
def emu(emu_module: GmailEmulator) -> GmailEmulator:
    emu_module.reset(SEED)
    return emu_module


def make_message(
    sender: str = ALICE,
    to: str | list[str] = BOB,
    subject: str = "Hello",
    *,
    msgid: str | None = "<hello-1@example.com>",
    in_reply_to: str | None = None,
    body: str = "Hi there.\n",
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to if isinstance(to, str) else ", ".join(to)
    msg["Subject"] = subject
    msg["Date"] = "Mon, 02 Nov 2026 10:00:00 +0000"
    if msgid:
        msg["Message-ID"] = msgid
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg.set_content(body)
    return msg


def send(
    emu: GmailEmulator,
    message: EmailMessage | bytes,
    *,
    port: Port = "ssl",
    username: str = ALICE,
    password: str = ALICE_PW,
    sender: str | None = None,
    recipients: list[str] | None = None,
) -> tuple[dict[str, Any], str]:
    kwargs: dict[str, Any] = {
        "hostname": emu.host,
        "username": username,
        "password": password,
        "tls_context": emu.client_ssl_context(),
        "timeout": 10,
    }
    if port == "ssl":
        kwargs.update(port=emu.smtp_ssl_port, use_tls=True)
    else:
        kwargs.update(port=emu.smtp_starttls_port, start_tls=True)
    if sender is not None:
        kwargs["sender"] = sender
    if recipients is not None:
        kwargs["recipients"] = recipients

    async def run() -> tuple[dict[str, Any], str]:
        return await aiosmtplib.send(message, **kwargs)

    return run_closed(run())


def run_closed(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run that returns once every socket the coroutine opened is closed.

    A closed TLS connection finishes its shutdown a few loop turns later; closing the loop before
    that leaves an unclosed transport behind (a ResourceWarning).
    """

    async def wrapper() -> T:
        loop = asyncio.get_running_loop()
        sockets: list[Any] = []
        opened = loop.create_connection

        async def create_connection(*args: Any, **kwargs: Any) -> Any:
            transport, protocol = await opened(*args, **kwargs)
            sockets.append(transport.get_extra_info("socket"))
            return transport, protocol

        loop.create_connection = create_connection  # type: ignore[method-assign]
        try:
            return await main
        finally:
            await wait_until_async(lambda: all(sock.fileno() == -1 for sock in sockets))

    return asyncio.run(wrapper())


def imap(emu: GmailEmulator, user: str, password: str) -> IMAPClient:
    client = IMAPClient(emu.host, port=emu.imap_port, ssl=True, ssl_context=emu.client_ssl_context(), timeout=10)
    client.login(user, password)
    return client


def sent_copies(emu: GmailEmulator, account: str = ALICE) -> list[MessageInfo]:
    return [m for m in emu.messages(account) if "\\Sent" in m.labels]


def inbox(emu: GmailEmulator, account: str) -> list[MessageInfo]:
    return [m for m in emu.messages(account) if "\\Inbox" in m.labels]


# --------------------------------------------------------------------------- sending and filing


@pytest.mark.parametrize("port", ["ssl", "starttls"])
def test_send_is_filed_into_sent_mail(emu: GmailEmulator, port: Port) -> None:
    errors, reply = send(emu, make_message(subject=f"via {port}"), port=port)
    assert errors == {}
    assert reply.startswith("2.0.0 OK ") and reply.endswith(" - gsmtp")

    with imap(emu, ALICE, ALICE_PW) as client:
        client.select_folder("[Gmail]/Sent Mail", readonly=True)
        uids = client.search()
        assert len(uids) == 1
        data = client.fetch(uids, ["BODY.PEEK[HEADER.FIELDS (SUBJECT MESSAGE-ID)]"])
        header = data[uids[0]][b"BODY[HEADER.FIELDS (SUBJECT MESSAGE-ID)]"]
        assert f"Subject: via {port}".encode() in header
        assert b"<hello-1@example.com>" in header
        client.select_folder("[Gmail]/All Mail", readonly=True)
        all_uids = client.search()
        labels = client.fetch(all_uids, ["X-GM-LABELS"])[all_uids[0]][b"X-GM-LABELS"]
        assert b"\\Sent" in labels
        assert b"\\Inbox" not in labels

    outbox = emu.outbox()
    assert len(outbox) == 1
    assert outbox[0].port_kind == port
    assert outbox[0].account == ALICE
    assert outbox[0].envelope_from == ALICE
    assert outbox[0].recipients == [BOB]


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


def test_filing_delay_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=1.0)
    started = time.monotonic()
    send(emu, make_message())
    assert sent_copies(emu) == [] and emu.smtp_pending() == 1
    assert len(inbox(emu, BOB)) == 1  # delivery has its own (zero) delay
    wait_until(lambda: len(sent_copies(emu)) == 1, timeout=6)
    assert time.monotonic() - started >= 0.9


def test_never_filed_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=None)
    send(emu, make_message())
    assert emu.smtp_pending() == 0  # nothing is scheduled that could file it later
    assert sent_copies(emu) == []
    assert len(emu.outbox()) == 1
    assert len(inbox(emu, BOB)) == 1


def test_delivery_delay_knob(emu: GmailEmulator) -> None:
    emu.set_knobs(delivery_delay_s=1.0)
    send(emu, make_message())
    assert inbox(emu, BOB) == []
    wait_until(lambda: len(inbox(emu, BOB)) == 1, timeout=5)


def test_local_delivery_joins_the_thread(emu: GmailEmulator) -> None:
    send(emu, make_message(subject="Lunch?", msgid="<lunch-1@example.com>"))
    got = inbox(emu, BOB)
    assert [m.header_id for m in got] == ["lunch-1@example.com"]
    assert "\\Sent" not in got[0].labels

    reply = make_message(
        sender=BOB, to=ALICE, subject="Re: Lunch?", msgid="<lunch-2@example.com>", in_reply_to="<lunch-1@example.com>"
    )
    send(emu, reply, port="starttls", username=BOB, password=BOB_PW)

    with imap(emu, ALICE, ALICE_PW) as client:
        client.select_folder("INBOX", readonly=True)
        inbox_uids = client.search()
        assert len(inbox_uids) == 1
        reply_thrid = client.fetch(inbox_uids, ["X-GM-THRID"])[inbox_uids[0]][b"X-GM-THRID"]
        client.select_folder("[Gmail]/Sent Mail", readonly=True)
        sent_uids = client.search()
        original_thrid = client.fetch(sent_uids, ["X-GM-THRID"])[sent_uids[0]][b"X-GM-THRID"]
    assert reply_thrid == original_thrid

    bob_msgs = {m.header_id: m for m in emu.messages(BOB)}
    assert bob_msgs["lunch-1@example.com"].thrid == bob_msgs["lunch-2@example.com"].thrid
    assert "\\Sent" in bob_msgs["lunch-2@example.com"].labels


def test_sent_to_self_is_one_message_with_sent_and_inbox(emu: GmailEmulator) -> None:
    send(emu, make_message(to=ALICE, msgid="<note-to-self@example.com>"))
    msgs = emu.messages(ALICE)
    assert len(msgs) == 1
    assert {"\\Sent", "\\Inbox"} <= msgs[0].labels


def test_sent_to_self_with_filing_delay(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=1.0)
    send(emu, make_message(to=ALICE, msgid="<note-2@example.com>"))
    first = emu.messages(ALICE)
    assert len(first) == 1 and first[0].labels == frozenset({"\\Inbox"})
    wait_until(lambda: "\\Sent" in emu.messages(ALICE)[0].labels)
    assert len(emu.messages(ALICE)) == 1


def test_external_recipient_only_in_outbox(emu: GmailEmulator) -> None:
    send(emu, make_message(to="stranger@elsewhere.example"))
    assert emu.messages(BOB) == []
    assert len(sent_copies(emu)) == 1
    assert emu.outbox()[0].recipients == ["stranger@elsewhere.example"]


def test_bcc_style_envelope_recipients_are_delivered(emu: GmailEmulator) -> None:
    send(emu, make_message(to="stranger@elsewhere.example"), recipients=["stranger@elsewhere.example", BOB])
    assert len(inbox(emu, BOB)) == 1


def test_similar_message_already_in_sent_is_not_filed_again_when_merging(emu: GmailEmulator) -> None:
    emu.set_knobs(merge_similar_sent=True)
    msg = make_message(msgid="<dup-1@example.com>")
    emu.append(ALICE, msg.as_bytes(), labels=["\\Sent"], flags=["\\Seen"])
    send(emu, msg)
    assert len(sent_copies(emu)) == 1
    # A different Date is not "similar": that one is filed.
    del msg["Date"]
    msg["Date"] = "Tue, 03 Nov 2026 10:00:00 +0000"
    send(emu, msg)
    assert len(sent_copies(emu)) == 2


def test_similar_message_is_filed_again_by_default(emu: GmailEmulator) -> None:
    msg = make_message(msgid="<dup-2@example.com>")
    emu.append(ALICE, msg.as_bytes(), labels=["\\Sent"], flags=["\\Seen"])
    send(emu, msg)
    assert len(sent_copies(emu)) == 2  # no merging unless the knob asks for it
    assert emu.smtp_pending() == 0


def test_default_knobs_are_realistic_delays() -> None:
    knobs = Knobs()
    assert knobs.sent_filing_delay_s is not None and 2.0 <= knobs.sent_filing_delay_s <= 10.0
    assert 2.0 <= knobs.raw_search_lag_s <= 5.0
    assert knobs.merge_similar_sent is False and knobs.thread_by_subject is True


def test_outbox_keeps_exact_bytes_and_missing_headers_are_added(emu: GmailEmulator) -> None:
    raw = (
        b"From: alice@example.com\r\n"
        b"To: bob@example.com\r\n"
        b"Subject: =?utf-8?q?P=C5=99=C3=ADli=C5=A1?=\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n"
        b"\r\n"
        b".a line that starts with a dot\r\n"
        b"\xc5\xbelu\xc5\xa5ou\xc4\x8dk\xc3\xbd k\xc5\xaf\xc5\x88\r\n"
        b"..two dots\r\n"
    )
    send(emu, raw, sender=ALICE, recipients=[BOB])
    (entry,) = emu.outbox()
    assert entry.data == raw
    assert b"Message-ID" not in entry.data

    (stored,) = sent_copies(emu)
    assert stored.header_id is not None and stored.header_id.endswith("@mx.google.com")
    assert stored.raw.endswith(raw)
    head = stored.raw[: len(stored.raw) - len(raw)]
    assert head.startswith(b"Message-ID: <") and b"\r\nDate: " in head
    (delivered,) = inbox(emu, BOB)
    assert delivered.header_id == stored.header_id
    # The recipient's copy carries Gmail's delivery trace and verdict on top; the sender's does not.
    assert delivered.raw.endswith(stored.raw)
    trace = delivered.raw[: len(delivered.raw) - len(stored.raw)]
    names = [line.split(b":", 1)[0] for line in trace.split(b"\r\n") if line and line[:1] not in b" \t"]
    assert names == [
        b"Received",
        b"ARC-Authentication-Results",
        b"Return-Path",
        b"Received",
        b"Received-SPF",
        b"Authentication-Results",
    ]
    assert b"by mx.google.com with ESMTPS" in trace and b"Authentication-Results: mx.google.com;" in trace
    assert b"Authentication-Results" not in stored.raw


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


# --------------------------------------------------------------------------- faults


def test_fault_421_at_connect(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("connect", "421"))
    with pytest.raises(aiosmtplib.SMTPConnectResponseError) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert "4.7.0 Try again later" in info.value.message
    send(emu, make_message())  # times=1: the next connection is fine
    assert len(emu.outbox()) == 1


def test_fault_421_at_mail_closes_the_connection(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("mail", "421"))
    with pytest.raises(aiosmtplib.SMTPSenderRefused) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert emu.outbox() == []
    assert sent_copies(emu) == []


def test_fault_421_at_ehlo(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("ehlo", "421"))
    with pytest.raises(aiosmtplib.SMTPResponseException) as info:
        send(emu, make_message())
    assert info.value.code == 421


def test_fault_550_rejects_only_the_matching_recipient(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("rcpt", "550", match="ghost@example.com"))
    errors, _reply = send(emu, make_message(to=[BOB, "ghost@example.com"]))
    assert set(errors) == {"ghost@example.com"}
    code, text = errors["ghost@example.com"]
    assert code == 550 and "5.1.1" in text
    assert emu.outbox()[0].recipients == [BOB]
    assert len(inbox(emu, BOB)) == 1


def test_fault_550_on_the_only_recipient(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("rcpt", "550"))
    with pytest.raises(aiosmtplib.SMTPRecipientsRefused):
        send(emu, make_message())
    assert emu.outbox() == []


def test_fault_534_app_password_required(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("auth", "534", match=ALICE))
    with pytest.raises(aiosmtplib.SMTPAuthenticationError) as info:
        send(emu, make_message())
    assert info.value.code == 534
    assert "5.7.9 Application-specific password required" in info.value.message
    assert emu.smtp_logins() == 0


def test_fault_535_with_the_right_password(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("auth", "535"))
    with pytest.raises(aiosmtplib.SMTPAuthenticationError) as info:
        send(emu, make_message())
    assert info.value.code == 535


def test_fault_drop_during_data_loses_the_message(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("data", "drop"))
    with pytest.raises(aiosmtplib.SMTPServerDisconnected):
        send(emu, make_message())
    wait_until(lambda: emu.smtp_open_sessions() == 0)  # the server is done with the dropped session
    assert emu.outbox() == []
    assert sent_copies(emu) == []
    assert emu.messages(BOB) == []


@pytest.mark.parametrize(("stage", "accepted"), [("data", False), ("after_data", True)])
def test_fault_421_around_data(emu: GmailEmulator, stage: Literal["data", "after_data"], accepted: bool) -> None:
    emu.add_smtp_fault(SmtpFault(stage, "421"))
    with pytest.raises(aiosmtplib.SMTPDataError) as info:
        send(emu, make_message())
    assert info.value.code == 421
    assert len(emu.outbox()) == (1 if accepted else 0)
    assert len(inbox(emu, BOB)) == (1 if accepted else 0)


def test_infinite_filing_delay_means_never(emu: GmailEmulator) -> None:
    emu.set_knobs(sent_filing_delay_s=float("inf"))
    send(emu, make_message())
    assert sent_copies(emu) == []
    assert len(emu.outbox()) == 1


@pytest.mark.parametrize("port", ["ssl", "starttls"])
def test_fault_drop_after_data_message_went_anyway(emu: GmailEmulator, port: Port) -> None:
    emu.add_smtp_fault(SmtpFault("after_data", "drop"))
    with pytest.raises(aiosmtplib.SMTPServerDisconnected):
        send(emu, make_message(), port=port)
    assert len(emu.outbox()) == 1
    assert len(sent_copies(emu)) == 1
    assert len(inbox(emu, BOB)) == 1
    server = b"".join(e.data for e in emu.wire_log() if e.protocol == "smtp" and e.direction == "s")
    assert b"250 2.0.0 OK" not in server


def test_fault_port_kind_and_times(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("mail", "421", times=2, port_kind="starttls"))
    send(emu, make_message(), port="ssl")
    for _ in range(2):
        with pytest.raises(aiosmtplib.SMTPSenderRefused):
            send(emu, make_message(), port="starttls")
    send(emu, make_message(), port="starttls")
    assert [e.port_kind for e in emu.outbox()] == ["ssl", "starttls"]


def test_fault_always_until_cleared(emu: GmailEmulator) -> None:
    emu.add_smtp_fault(SmtpFault("connect", "drop", times=-1))
    for _ in range(2):
        with pytest.raises((aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected)):
            send(emu, make_message())
    emu.clear_faults()
    send(emu, make_message())


def test_fault_rule_validation() -> None:
    with pytest.raises(ValueError, match="unknown SMTP fault stage"):
        SmtpFault("quit", "421")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown SMTP fault action"):
        SmtpFault("mail", "500")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="times must be"):
        SmtpFault("mail", "421", times=0)


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
