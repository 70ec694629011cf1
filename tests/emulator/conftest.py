"""The emulator's own tests: a private IMAP-only emulator for the IMAP front, and the whole emulator
for the SMTP front's tests (tests/emulator/test_smtp*.py).

The IMAP-only one builds a `Store` directly, runs `ImapServer` on an event loop in a background thread and hands
out imapclient / imaplib / raw-socket clients over TLS (trustme certificates).  Store mutations
from a test go through `ImapEmu.call`, so they run on the loop thread like everything else.
"""

from __future__ import annotations

import asyncio
import imaplib
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from email.message import EmailMessage
from typing import Any, TypeVar

import pytest
import trustme
from imapclient import IMAPClient

from gmail_emulator import GmailEmulator
from gmail_emulator.imap_commands import COMMANDS
from gmail_emulator.imap_server import ImapServer
from gmail_emulator.knobs import Knobs
from gmail_emulator.observe import Observer
from gmail_emulator.store import Account, Message, Store
from support.smtp_sending import SEED

T = TypeVar("T")

ALICE = "alice@gmail.test"
ALICE_PW = "abcdefghijklmnop"
BOB = "bob@gmail.test"
BOB_PW = "bobsecretpasswrd"


def make_mail(
    subject: str = "Hello",
    body: str = "Hi there, see you tomorrow.",
    *,
    sender: str = "Carol <carol@example.com>",
    to: str = ALICE,
    message_id: str | None = None,
    date: str = "Mon, 05 Jan 2026 10:00:00 +0000",
    in_reply_to: str | None = None,
    attachment: tuple[str, bytes] | None = None,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = date
    if message_id is not None:
        msg["Message-ID"] = message_id
    if in_reply_to is not None:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg.set_content(body)
    if attachment is not None:
        name, data = attachment
        msg.add_attachment(data, maintype="application", subtype="pdf", filename=name)
    return msg.as_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


class RawImap:
    """A bare TLS socket for exact wire assertions (no client library in between)."""

    def __init__(self, port: int, ctx: ssl.SSLContext) -> None:
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.file = self.sock.makefile("rb")
        self.greeting = self.file.readline()
        self._tag = 0

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def readline(self) -> bytes:
        return self.file.readline()

    def command(self, text: str | bytes) -> list[bytes]:
        """Send `<tag> text` and return every line up to and including the tagged reply
        (literal contents are folded into their line)."""
        self._tag += 1
        tag = b"r%d" % self._tag
        line = text.encode() if isinstance(text, str) else text
        self.send(tag + b" " + line + b"\r\n")
        return self.until(tag)

    def until(self, tag: bytes) -> list[bytes]:
        out: list[bytes] = []
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("closed")
            while (m := re.search(rb"\{(\d+)\}\r\n$", line)) is not None:
                line += self.file.read(int(m.group(1)))
                line += self.file.readline()
            out.append(line.rstrip(b"\r\n"))
            if line.startswith(tag + b" "):
                return out

    def close(self) -> None:
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass


class ImapEmu:
    user = ALICE
    password = ALICE_PW
    other_user = BOB
    other_password = BOB_PW
    make_mail = staticmethod(make_mail)

    def __init__(self, ca: trustme.CA, knobs: Knobs | None = None) -> None:
        self.offset = 0.0  # seconds added to the real clock (see advance())
        self.store = Store(knobs or Knobs(), clock=lambda: time.time() + self.offset)
        self.observer = Observer()
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(server_ctx)
        # The test CA alone: loading the system's trust store too cost ~30 ms of CPU per test.
        self.client_ctx = ssl.create_default_context(cadata=ca.cert_pem.bytes().decode("ascii"))
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.server = ImapServer(self.store, self.observer, server_ctx, COMMANDS)
        self.port: int = self._run(self.server.start())
        self._clients: list[Any] = []
        self.alice = self.call(self.store.add_account, ALICE, ALICE_PW, ["Work", "Été"])
        self.bob = self.call(self.store.add_account, BOB, BOB_PW)

    def advance(self, seconds: float) -> None:
        """Move the store's clock forward (search-index lag, newer_than:, ...)."""
        self.offset += seconds

    def _run(self, coro: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        async def run() -> T:
            return fn(*args, **kwargs)

        result: T = self._run(run())
        return result

    def deliver(
        self,
        raw: bytes,
        labels: Iterable[str] = ("\\Inbox",),
        flags: Iterable[str] = (),
        *,
        account: Account | None = None,
        internaldate: datetime | None = None,
        location: str = "normal",
    ) -> Message:
        target = account or self.alice
        return self.call(
            target.add_message,
            raw,
            labels=list(labels),
            flags=list(flags),
            internaldate=internaldate,
            location=location,
        )

    def client(self, user: str = ALICE, password: str = ALICE_PW, *, login: bool = True, **kw: Any) -> IMAPClient:
        kw.setdefault("timeout", 10)
        client = IMAPClient("127.0.0.1", port=self.port, ssl=True, ssl_context=self.client_ctx, **kw)
        self._clients.append(client)
        if login:
            client.login(user, password)
        return client

    def imaplib(self, user: str = ALICE, password: str = ALICE_PW, *, login: bool = True) -> imaplib.IMAP4_SSL:
        conn = imaplib.IMAP4_SSL("127.0.0.1", self.port, ssl_context=self.client_ctx, timeout=10)
        self._clients.append(conn)
        if login:
            conn.login(user, password)
        return conn

    def raw(self, *, login: bool = True) -> RawImap:
        conn = RawImap(self.port, self.client_ctx)
        self._clients.append(conn)
        if login:
            conn.command(f'LOGIN {ALICE} "{ALICE_PW}"')
        return conn

    def close(self) -> None:
        for client in self._clients:
            try:
                if isinstance(client, RawImap):
                    client.close()
                elif isinstance(client, IMAPClient):
                    client.shutdown()
                else:
                    client.shutdown()
            except (OSError, imaplib.IMAP4.error):  # already closed by the test
                pass
        self._run(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture(scope="session")
def imap_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def imap_knobs(request: pytest.FixtureRequest) -> Knobs:
    """Knobs for the store; `@pytest.mark.parametrize("imap_knobs", [Knobs(...)], indirect=True)`."""
    param = getattr(request, "param", None)
    # Without a parameter: Gmail's behaviour minus the index lag, which only the lag tests want.
    return param if isinstance(param, Knobs) else Knobs(raw_search_lag_s=0.0)


@pytest.fixture
def imap_emu(imap_ca: trustme.CA, imap_knobs: Knobs) -> Iterator[ImapEmu]:
    emu = ImapEmu(imap_ca, imap_knobs)
    try:
        yield emu
    finally:
        emu.close()


# --------------------------------------------------------------------------- the SMTP front's tests


@pytest.fixture(scope="module")
def emu_module() -> Iterator[GmailEmulator]:
    # Filing and index delays off: the tests that are about them set them.
    with GmailEmulator(seed=SEED, knobs=Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)) as emu:
        yield emu


@pytest.fixture
def emu(emu_module: GmailEmulator) -> GmailEmulator:
    emu_module.reset(SEED)
    return emu_module
