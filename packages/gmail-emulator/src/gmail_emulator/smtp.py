"""The emulator's SMTP front: smtp.gmail.com's two submission ports on top of aiosmtpd.

Two listeners share one handler: a 465-style port with implicit TLS and a 587-style port that
requires STARTTLS. Both demand AUTH (PLAIN or LOGIN, checked against the store's account
passwords) and answer in Gmail's shape. An accepted message is recorded in the outbox exactly as
received, filed into the sender's Sent Mail after ``knobs.sent_filing_delay_s`` and delivered to
every recipient that is an emulator account after ``knobs.delivery_delay_s``.

Both listeners run on the emulator's own event loop (``loop.create_server`` with aiosmtpd's
``SMTP`` protocol rather than aiosmtpd's thread-per-controller ``Controller``), so every store
mutation happens on the loop that owns the store and nothing needs marshalling.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import logging
import math
import random
import ssl
import threading
import weakref
from collections.abc import Callable
from typing import Any, cast

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session, TLSSetupException

from .knobs import Knobs
from .oauth import XOAUTH2_CHALLENGE, parse_xoauth2
from .observe import REDACTED, Observer, redact_smtp_line
from .smtp_delivery import OutboxEntry, deliver, file_sent, prepare
from .smtp_faults import Armed, PortKind, SmtpFault, bad_credentials, fault_reply
from .store import Store

__all__ = ["SmtpFront"]

log = logging.getLogger("gmail_emulator.smtp")

GMAIL_HOSTNAME = "smtp.gmail.com"
SIZE_LIMIT = 35882577  # what Gmail advertises in EHLO


class _QuietDeprecation(logging.Filter):
    """aiosmtpd logs a deprecation warning about Session.login_data on every successful AUTH."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "login_data is deprecated" not in str(record.msg)


logging.getLogger("mail.log").addFilter(_QuietDeprecation())


# --------------------------------------------------------------------------- the front


class SmtpFront:
    """Both SMTP listeners, the outbox, the SMTP fault rules and the login counter."""

    def __init__(
        self,
        store: Store,
        observer: Observer,
        ssl_context: ssl.SSLContext,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.store = store
        self.observer = observer
        self.ssl_context = ssl_context
        self._loop = loop
        self._lock = threading.Lock()
        self._outbox: list[OutboxEntry] = []
        self._faults: list[Armed] = []
        self._logins: list[tuple[int, str]] = []
        self._sessions = 0
        self._held = 0
        self._session_ids = itertools.count(1)
        self._servers: list[asyncio.Server] = []
        self._live: weakref.WeakSet[GmailSMTP] = weakref.WeakSet()
        self._timers: set[asyncio.TimerHandle] = set()
        self._rng = random.Random()
        self.ssl_port = 0
        self.starttls_port = 0

    # ----------------------------------------------------------------- lifecycle

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    async def start(self, host: str = "127.0.0.1", ssl_port: int = 0, starttls_port: int = 0) -> tuple[int, int]:
        """Listen on both ports (0 = any free port); returns (ssl_port, starttls_port)."""
        loop = self.loop
        implicit = await loop.create_server(
            lambda: self._protocol("ssl"), host=host, port=ssl_port, ssl=self.ssl_context
        )
        self._servers.append(implicit)
        submission = await loop.create_server(lambda: self._protocol("starttls"), host=host, port=starttls_port)
        self._servers.append(submission)
        self.ssl_port = implicit.sockets[0].getsockname()[1]
        self.starttls_port = submission.sockets[0].getsockname()[1]
        return self.ssl_port, self.starttls_port

    async def stop(self) -> None:
        self.cancel_pending()
        for server in self._servers:
            server.close()
        for proto in list(self._live):
            proto.drop()
        for server in self._servers:
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(server.wait_closed(), 2.0)
        self._servers.clear()
        await asyncio.sleep(0)

    def _protocol(self, port_kind: PortKind) -> GmailSMTP:
        with self._lock:
            self._sessions += 1
        proto = GmailSMTP(self, port_kind, next(self._session_ids))
        self._live.add(proto)
        return proto

    def cancel_pending(self) -> None:
        """Forget scheduled Sent filings and deliveries (used when the store is replaced)."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()

    def reset(self, store: Store) -> None:
        """A fresh start: new store, empty outbox, no faults, counters at zero, no open session (one
        parked by `smtp_goodbye="silent"` stays open until then)."""
        self.cancel_pending()
        self.store = store
        for proto in list(self._live):
            proto.drop()
        with self._lock:
            self._outbox.clear()
            self._faults.clear()
            self._logins.clear()
            self._sessions = 0
            self._held = 0

    # ----------------------------------------------------------------- faults

    def add_fault(self, fault: SmtpFault) -> None:
        with self._lock:
            self._faults.append(Armed(fault, fault.times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def take_fault(self, stage: str, port_kind: str, address: str | None = None) -> SmtpFault | None:
        with self._lock:
            for armed in self._faults:
                if not armed.fault.applies(stage, port_kind, address):
                    continue
                if armed.remaining > 0:
                    armed.remaining -= 1
                self._faults = [a for a in self._faults if a.remaining != 0]
                return armed.fault
        return None

    # ----------------------------------------------------------------- counters

    def note_login(self, session_id: int, account: str) -> None:
        with self._lock:
            self._logins.append((session_id, account.lower()))

    def logins(self, account: str | None = None) -> int:
        with self._lock:
            if account is None:
                return len(self._logins)
            wanted = account.lower()
            return sum(1 for _sid, acc in self._logins if acc == wanted)

    def sessions(self) -> int:
        with self._lock:
            return self._sessions

    def open_sessions(self) -> int:
        return len(self._live)

    def note_held(self) -> None:
        with self._lock:
            self._held += 1

    def held(self) -> int:
        """How many "hold" faults a session has reached (and is held at, until its client goes)."""
        with self._lock:
            return self._held

    def reset_counters(self) -> None:
        with self._lock:
            self._logins.clear()
            self._sessions = 0

    def outbox(self) -> list[OutboxEntry]:
        with self._lock:
            return list(self._outbox)

    def pending(self) -> int:
        """Sent filings and local deliveries scheduled but not yet done (call on the loop)."""
        return len(self._timers)

    # ----------------------------------------------------------------- auth

    def check_password(self, login: str, password: str) -> str | None:
        """The account's address when the credentials are right."""
        account = self.store.account(login)
        if account is None or account.password != password:
            return None
        return account.address

    # ----------------------------------------------------------------- accepting a message

    def transaction_id(self) -> str:
        rng = self._rng
        head = "".join(rng.choice("0123456789abcdef") for _ in range(12))
        tail = "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(16))
        return f"{head}-{tail}sm{rng.randint(100000, 999999)}.{rng.randint(1, 99)}"

    def accept(
        self,
        account: str,
        envelope_from: str,
        recipients: list[str],
        data: bytes,
        port_kind: PortKind,
    ) -> OutboxEntry:
        """Record the message and schedule its Sent filing and local deliveries (on the loop)."""
        entry = OutboxEntry(account, envelope_from, list(recipients), bytes(data), port_kind, self.store.clock())
        with self._lock:
            self._outbox.append(entry)
        try:
            job = prepare(entry, self.store, self._rng)
            knobs = self.store.knobs
            if knobs.sent_filing_delay_s is not None and not math.isinf(knobs.sent_filing_delay_s):
                self._later(knobs.sent_filing_delay_s, file_sent, self.store, job)
            seen: set[str] = set()
            for rcpt in recipients:
                key = rcpt.lower()
                if key in seen or self.store.account(rcpt) is None:
                    continue
                seen.add(key)
                self._later(knobs.delivery_delay_s, deliver, self.store, job, rcpt)
        except Exception:  # the client has its 250 coming; a bug here must not break the session
            log.exception("processing an accepted message failed")
        return entry

    def _later(self, delay: float, func: Callable[..., None], *args: Any) -> None:
        def run() -> None:
            self._timers.discard(handle)
            try:
                func(*args)
            except Exception:
                log.exception("SMTP filing/delivery failed")

        if delay <= 0:
            try:
                func(*args)
            except Exception:
                log.exception("SMTP filing/delivery failed")
            return
        handle = self.loop.call_later(delay, run)
        self._timers.add(handle)


# --------------------------------------------------------------------------- the protocol


class _Hooks:
    """aiosmtpd handler hooks (kept apart from SmtpFront: aiosmtpd scans the handler's members)."""

    async def handle_EHLO(
        self, server: GmailSMTP, session: Session, envelope: Envelope, hostname: str, responses: list[str]
    ) -> list[str]:
        del envelope, responses
        fault = server.front.take_fault("ehlo", server.port_kind)
        if fault is not None:
            return [server.fault(fault, "ehlo")]
        session.host_name = hostname
        return server.ehlo_lines()

    async def handle_MAIL(
        self, server: GmailSMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        del session
        fault = server.front.take_fault("mail", server.port_kind, address)
        if fault is not None:
            return await server.act(fault, "mail")
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return f"250 2.1.0 OK {server.front.transaction_id()} - gsmtp"

    async def handle_RCPT(
        self, server: GmailSMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        del session
        fault = server.front.take_fault("rcpt", server.port_kind, address)
        if fault is not None:
            return await server.act(fault, "rcpt")
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(options)
        return f"250 2.1.5 OK {server.front.transaction_id()} - gsmtp"

    async def handle_DATA(self, server: GmailSMTP, session: Session, envelope: Envelope) -> str:
        del session
        front = server.front
        data = envelope.original_content or b""
        upload = _upload_time(front.store.knobs, len(data))
        if upload > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.gone(), upload)
            if server.is_gone():
                return ""  # the client gave up before the upload was over: nothing was accepted
        fault = front.take_fault("data", server.port_kind)
        if fault is not None:
            return await server.act(fault, "data")
        front.accept(
            server.account or "",
            envelope.mail_from or "",
            list(envelope.rcpt_tos),
            data,
            server.port_kind,
        )
        fault = front.take_fault("after_data", server.port_kind)
        if fault is not None:
            return await server.act(fault, "after_data")
        return f"250 2.0.0 OK  {int(front.store.clock())} {front.transaction_id()} - gsmtp"

    async def handle_exception(self, error: Exception) -> str:
        if isinstance(error, TLSSetupException | ConnectionError | ssl.SSLError):
            log.info("SMTP client went away: %r", error)  # a client problem, not ours
        else:
            log.error("SMTP session error", exc_info=error)
        return "451 4.3.0 Temporary server error. Please try again later. - gsmtp"


_HOOKS = _Hooks()


def _upload_time(knobs: Knobs, size: int) -> float:
    """Seconds the final DATA answer waits, as if the message were still on its way (knobs)."""
    rate = knobs.smtp_upload_bytes_per_s
    return max(knobs.smtp_data_delay_s + (size / rate if rate else 0.0), 0.0)


def _authenticator(server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any) -> AuthResult:
    del session, envelope, mechanism
    assert isinstance(server, GmailSMTP)
    return server.authenticate(auth_data)


class GmailSMTP(SMTP):
    """One SMTP connection, shaped like smtp.gmail.com."""

    AuthLoginUsernameChallenge = "Username:"
    AuthLoginPasswordChallenge = "Password:"

    def __init__(self, front: SmtpFront, port_kind: PortKind, session_id: int) -> None:
        self.front = front
        self.port_kind: PortKind = port_kind
        self.session_id = session_id
        self.account: str | None = None
        self._dropped = False
        self._close_after_push = False
        self._in_auth = False
        self._auth_fault: SmtpFault | None = None
        self._in_data = False
        self._pending = b""
        self._gone = asyncio.Event()
        tls = front.ssl_context if port_kind == "starttls" else None
        super().__init__(
            _HOOKS,
            hostname=GMAIL_HOSTNAME,
            ident=f"ESMTP {front.transaction_id()} - gsmtp",
            tls_context=tls,
            require_starttls=port_kind == "starttls",
            auth_required=True,
            auth_require_tls=True,
            authenticator=_authenticator,
            enable_SMTPUTF8=True,
            data_size_limit=SIZE_LIMIT,
            loop=front.loop,
        )
        if port_kind == "ssl":
            # The whole connection is TLS already, but aiosmtpd counts only STARTTLS as TLS
            # (passing auth_require_tls=False to the constructor would emit a warning per session).
            self._auth_require_tls = False

    # ----------------------------------------------------------------- Gmail's shapes

    def ehlo_lines(self) -> list[str]:
        peer = self.session.peer if self.session is not None else None
        ip = peer[0] if isinstance(peer, tuple) and peer else "127.0.0.1"
        lines = [f"{GMAIL_HOSTNAME} at your service, [{ip}]", f"SIZE {SIZE_LIMIT}", "8BITMIME"]
        if self.tls_context and not self._tls_protocol:
            lines.append("STARTTLS")
        if not self._auth_require_tls or self._tls_protocol:
            lines.append("AUTH " + " ".join(sorted(self._auth_methods)))
        lines += ["ENHANCEDSTATUSCODES", "SMTPUTF8"]
        return [f"250-{line}" for line in lines[:-1]] + [f"250 {lines[-1]}"]

    def authenticate(self, auth_data: Any) -> AuthResult:
        tx = self.front.transaction_id()
        refused = AuthResult(success=False, handled=False, message=bad_credentials(tx))
        if not isinstance(auth_data, LoginPassword):
            return refused
        login = auth_data.login.decode("utf-8", errors="replace")
        password = auth_data.password.decode("utf-8", errors="replace")
        # Gmail's verdict is per account: once an auth fault fires, every further AUTH attempt in this
        # session (clients fall back from PLAIN to LOGIN) gets the same answer.
        fault = self._auth_fault or self.front.take_fault("auth", self.port_kind, login)
        if fault is not None:
            self._auth_fault = fault
            reply = self.fault(fault, "auth")
            if not reply:
                return AuthResult(success=False, handled=True)
            return AuthResult(success=False, handled=False, message=reply)
        address = self.front.check_password(login, password)
        google = self.front.store.google
        if google is not None:
            google.note_password_login("smtp", "PLAIN/LOGIN", login, address is not None)
        if address is None:
            return refused
        self.account = address
        self.front.note_login(self.session_id, address)
        return AuthResult(success=True, message="235 2.7.0 Accepted", auth_data=auth_data)

    async def auth_XOAUTH2(self, _: SMTP, args: list[str]) -> AuthResult:
        """AUTH XOAUTH2 (Google's XOAUTH2 page): a refused token gets `334 <base64 JSON>`, the client's
        (empty) answer, then Gmail's 535-5.7.8."""
        tx = self.front.transaction_id()
        if len(args) == 2:
            payload = args[1].encode("ascii", "replace")
        else:
            answer = await self.challenge_auth("", encode_to_b64=False)
            if not isinstance(answer, bytes):
                return AuthResult(success=False, handled=True)  # aborted: aiosmtpd has answered 501
            payload = base64.b64encode(answer)
        parsed = parse_xoauth2(payload)
        google = self.front.store.google
        address = None
        if parsed is not None and google is not None and google.accepts("smtp", *parsed):
            account = self.front.store.account(parsed[0].strip())
            address = account.address if account is not None else None
        if address is None:
            await self.push(f"334 {XOAUTH2_CHALLENGE}")
            await self._reader.readline()  # whatever the client says, the answer is the same
            return AuthResult(success=False, handled=False, message=bad_credentials(tx))
        self.account = address
        self.front.note_login(self.session_id, address)
        return AuthResult(success=True, message="235 2.7.0 Accepted", auth_data=LoginPassword(address.encode(), b""))

    async def act(self, fault: SmtpFault, stage: str) -> str:
        """Like `fault`, and a "hold" waits here, without a reply, until the client has gone."""
        if fault.action != "hold":
            return self.fault(fault, stage)
        log.info("SMTP hold at %s (session %d)", stage, self.session_id)
        self.front.note_held()
        await self._gone.wait()
        return ""

    def fault(self, fault: SmtpFault, stage: str) -> str:
        """Act on a fired fault; returns the reply to send ("" when the connection is gone)."""
        log.info("SMTP fault %s at %s (session %d)", fault.action, stage, self.session_id)
        if fault.action == "drop":
            self.drop()
            return ""
        if fault.action == "421":
            self._close_after_push = True
        return fault_reply(fault.action, stage, self.front.transaction_id())

    def drop(self) -> None:
        """Close the connection at once, without another byte."""
        self._dropped = True
        transports: list[Any] = [self.transport, self._original_transport]
        for transport in transports:
            if transport is not None:
                with contextlib.suppress(Exception):
                    transport.abort()
        task = self._handler_coroutine
        if task is not None and not task.done():
            task.cancel()

    def _close_now(self) -> None:
        """End the session after Gmail's last answer, the way `knobs.smtp_goodbye` says."""
        goodbye = self.front.store.knobs.smtp_goodbye
        transport = cast(asyncio.Transport | None, self.transport)
        if goodbye == "silent":
            # Nothing more is read, so the client's TLS goodbye is never answered; the handler stays
            # parked (cancelling it would close the connection) until a reset or the stop drops it.
            if transport is not None:
                transport.pause_reading()
            return
        if transport is not None:
            if goodbye == "tcp":
                transport.abort()
            else:
                transport.close()
        task = self._handler_coroutine
        if task is not None and not task.done():
            task.cancel()

    # ----------------------------------------------------------------- aiosmtpd overrides

    async def _handle_client(self) -> None:
        fault = self.front.take_fault("connect", self.port_kind)
        if fault is not None:
            reply = self.fault(fault, "connect")
            if reply:
                await self.push(reply)
                self._close_now()
            return
        await super()._handle_client()

    async def smtp_QUIT(self, arg: str) -> None:
        # aiosmtpd's own QUIT closes at once; Gmail's side ends as `_close_now` says.
        if arg:
            await self.push("501 Syntax: QUIT")
            return
        await self.push(f"221 2.0.0 closing connection {self.front.transaction_id()} - gsmtp")
        self._close_now()

    async def push(self, status: str | bytes) -> None:
        if self._dropped:
            return
        if not status:
            return
        text = status.decode("utf-8", errors="replace") if isinstance(status, bytes) else status
        if text.startswith("354 "):
            status = text = f"354  Go ahead {self.front.transaction_id()} - gsmtp"
        elif text == "220 Ready to start TLS":
            status = text = "220 2.0.0 Ready to start TLS"
        self._in_data = text.startswith("354")
        if not text.startswith("334"):
            self._in_auth = False
        data = status.encode("utf-8") if isinstance(status, str) else status
        self.front.observer.record_wire(self.session_id, "smtp", "s", data + b"\r\n")
        await super().push(data)
        if self._close_after_push:
            self._close_after_push = False
            self._close_now()

    def data_received(self, data: bytes) -> None:
        try:
            self._record_incoming(data)
        except Exception:  # pragma: no cover - logging must never break the session
            log.exception("SMTP wire logging failed")
        super().data_received(data)

    def _record_incoming(self, data: bytes) -> None:
        buffer = self._pending + data
        lines = buffer.split(b"\r\n")
        self._pending = lines.pop()
        if len(self._pending) > 65536:  # a huge line without CRLF: log it as it comes
            lines.append(self._pending)
            self._pending = b""
        out: list[bytes] = []
        for line in lines:
            if self._in_data:
                out.append(line + b"\r\n")
                continue
            if line[:5].upper() == b"AUTH ":
                self._in_auth = True
                out.append(redact_smtp_line(line) + b"\r\n")
            elif self._in_auth:
                out.append(REDACTED + b"\r\n")
            else:
                out.append(line + b"\r\n")
        if out:
            self.front.observer.record_wire(self.session_id, "smtp", "c", b"".join(out))

    async def gone(self) -> None:
        """Returns once the client has closed the connection."""
        await self._gone.wait()

    def is_gone(self) -> bool:
        return self._gone.is_set()

    def connection_lost(self, error: Exception | None) -> None:
        self._gone.set()
        try:
            super().connection_lost(error)
        finally:
            self.front._live.discard(self)
