"""Sending through the emulator's SMTP front as the product does (aiosmtplib over TLS), and reading
what it delivered and filed; shared by tests/emulator/test_smtp*.py."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from email.message import EmailMessage
from typing import Any, Literal, TypeVar

import aiosmtplib
from imapclient import IMAPClient

from gmail_emulator import GmailEmulator, MessageInfo
from support import wait_until_async

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
