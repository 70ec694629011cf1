"""`GmailEmulator`: the in-process API tests use to run and steer the emulator.

One asyncio event loop in a daemon thread owns everything (the store, the IMAP server, both SMTP
listeners). Every control method marshals its work onto that loop with
``run_coroutine_threadsafe`` and waits for the result, so tests can call them from any thread.
"""

from __future__ import annotations

import asyncio
import copy
import email.message
import logging
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict, TypeVar

import trustme

from .imap_commands import COMMANDS
from .imap_server import ImapServer
from .knobs import Knobs
from .observe import CommandRecord, FaultRule, Observer, WireEntry
from .seed import Seed, apply_seed, load_seed
from .smtp import SmtpFront
from .smtp_delivery import OutboxEntry
from .smtp_faults import SmtpFault
from .store import Account, Location, Message, Store, bare_id
from .trace import Verdict, gmail_trace

__all__ = ["EmulatorEnv", "GmailEmulator", "MessageInfo"]

log = logging.getLogger("gmail_emulator")

T = TypeVar("T")
SeedSource = Path | str | Mapping[str, Any]
RawMessage = bytes | str | email.message.Message

_CALL_TIMEOUT = 60.0
CERT_NAMES = ("127.0.0.1", "localhost", "::1", "imap.gmail.com", "smtp.gmail.com")


class EmulatorEnv(TypedDict):
    """The emulator's listening host and ports (IMAP, SMTP with implicit TLS, SMTP with STARTTLS)
    and the PEM file of its CA."""

    host: str
    imap_port: int
    smtp_ssl_port: int
    smtp_starttls_port: int
    ca_file: str


@dataclass(frozen=True)
class MessageInfo:
    """A snapshot of one stored message (a copy; later changes do not show up here)."""

    account: str
    msgid: int
    thrid: int
    header_id: str | None  # Message-ID without angle brackets
    labels: frozenset[str]
    flags: frozenset[str]
    location: str
    internaldate: datetime
    raw: bytes

    @classmethod
    def of(cls, account: Account, msg: Message) -> MessageInfo:
        return cls(
            account=account.address,
            msgid=msg.msgid,
            thrid=msg.thrid,
            header_id=msg.header_id,
            labels=frozenset(msg.labels),
            flags=frozenset(msg.flags),
            location=msg.location,
            internaldate=msg.internaldate,
            raw=msg.raw,
        )


def _to_bytes(raw: RawMessage) -> bytes:
    if isinstance(raw, email.message.Message):
        return raw.as_bytes()
    if isinstance(raw, str):
        return raw.encode("utf-8")
    return bytes(raw)


class GmailEmulator:
    """A local Gmail: IMAP (implicit TLS) plus SMTP 465-style and 587-style, on 127.0.0.1."""

    host: str = "127.0.0.1"

    def __init__(
        self,
        *,
        knobs: Knobs | None = None,
        seed: SeedSource | None = None,
        workdir: Path | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._base_knobs = copy.deepcopy(knobs) if knobs is not None else Knobs()
        self._seed_source = seed
        self._workdir_arg = Path(workdir) if workdir is not None else None
        self._clock = clock or time.time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._store: Store | None = None
        self._imap: ImapServer | None = None
        self._smtp: SmtpFront | None = None
        self.observer = Observer()
        self.workdir: Path | None = None
        self.ca_file: Path = Path()
        self.imap_port = 0
        self.smtp_ssl_port = 0
        self.smtp_starttls_port = 0
        self._ca: trustme.CA | None = None

    # ----------------------------------------------------------------- lifecycle

    def __enter__(self) -> GmailEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> GmailEmulator:
        if self._thread is not None:
            raise RuntimeError("the emulator is already running")
        seed = self._load(self._seed_source)
        if self._workdir_arg is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="gmail-emulator-")
            self.workdir = Path(self._tmpdir.name)
        else:
            self.workdir = self._workdir_arg
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._ca = trustme.CA(organization_name="gmail_emulator test CA")
        server_cert = self._ca.issue_cert(*CERT_NAMES)
        self.ca_file = self.workdir / "ca.pem"
        self._ca.cert_pem.write_to_path(str(self.ca_file))
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_cert.configure_cert(server_ctx)

        loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._loop = loop
        self._thread = threading.Thread(target=self._run_loop, args=(loop, ready), name="gmail-emulator", daemon=True)
        self._thread.start()
        ready.wait()
        try:
            self._call(self._async_start(server_ctx, seed))
        except BaseException:
            self.stop()
            raise
        log.info(
            "gmail emulator up: IMAP %s:%d, SMTP %d (TLS) / %d (STARTTLS), CA %s",
            self.host,
            self.imap_port,
            self.smtp_ssl_port,
            self.smtp_starttls_port,
            self.ca_file,
        )
        return self

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def _async_start(self, server_ctx: ssl.SSLContext, seed: Seed | None) -> None:
        store = self._new_store(seed)
        self._store = store
        self._imap = ImapServer(store, self.observer, server_ctx, COMMANDS)
        self.imap_port = await self._imap.start(self.host, 0)
        self._smtp = SmtpFront(store, self.observer, server_ctx)
        self.smtp_ssl_port, self.smtp_starttls_port = await self._smtp.start(self.host)

    def _new_store(self, seed: Seed | None) -> Store:
        store = Store(copy.deepcopy(self._base_knobs), self._clock)
        if seed is not None:
            apply_seed(store, seed)
        return store

    def stop(self) -> None:
        """Close every connection and listener and end the loop thread (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            try:
                self._call(self._async_stop(), timeout=15)
            except Exception:  # pragma: no cover - shutting down anyway
                log.exception("error while stopping the emulator")
            loop.call_soon_threadsafe(loop.stop)
            thread.join(15)
        self._loop = None
        self._thread = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    async def _async_stop(self) -> None:
        if self._smtp is not None:
            await self._smtp.stop()
        if self._imap is not None:
            await self._imap.stop()

    # ----------------------------------------------------------------- plumbing

    def _load(self, source: SeedSource | None) -> Seed | None:
        if source is None:
            return None
        now = datetime.fromtimestamp(self._clock(), UTC)
        return load_seed(source, now=now)

    def _call(self, coro: Any, timeout: float = _CALL_TIMEOUT) -> Any:
        loop = self._loop
        if loop is None or self._thread is None or not self._thread.is_alive():
            coro.close()
            raise RuntimeError("the emulator is not running (use start() or a with block)")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise RuntimeError("control methods cannot be called from the emulator's own loop")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    def _on_loop(self, func: Callable[[], T]) -> T:
        async def run() -> T:
            return func()

        result: T = self._call(run())
        return result

    @property
    def store(self) -> Store:
        """The live store, for inspection only: touch it only through the control methods."""
        if self._store is None:
            raise RuntimeError("the emulator is not running")
        return self._store

    def _account(self, address: str) -> Account:
        account = self.store.account(address)
        if account is None:
            raise KeyError(f"no emulator account {address!r}")
        return account

    def _find(self, account: Account, header_id: str) -> Message:
        wanted = bare_id(header_id)
        found = [m for m in account.messages.values() if m.header_id == wanted]
        if not found:
            raise KeyError(f"no message with Message-ID <{wanted}> in {account.address}")
        return max(found, key=lambda m: m.arrival)

    @property
    def _front(self) -> SmtpFront:
        if self._smtp is None:
            raise RuntimeError("the emulator is not running")
        return self._smtp

    # ----------------------------------------------------------------- endpoints

    def client_ssl_context(self) -> ssl.SSLContext:
        """A client context that trusts the emulator's CA (and only that)."""
        return ssl.create_default_context(cafile=str(self.ca_file))

    def env(self) -> EmulatorEnv:
        """Where the emulator listens and the CA its certificates chain to.

        A client maps these to its own settings (the emulator knows no client's variable names);
        ``python -m gmail_emulator --state`` writes the same keys."""
        return {
            "host": self.host,
            "imap_port": self.imap_port,
            "smtp_ssl_port": self.smtp_ssl_port,
            "smtp_starttls_port": self.smtp_starttls_port,
            "ca_file": str(self.ca_file),
        }

    # ----------------------------------------------------------------- accounts and messages

    def add_account(self, address: str, password: str, labels: Iterable[str] = ()) -> None:
        names = list(labels)

        def run() -> None:
            if self.store.account(address) is not None:
                raise ValueError(f"account {address!r} exists already")
            self.store.add_account(address, password, names)

        self._on_loop(run)

    def deliver(
        self,
        to: str,
        raw: RawMessage,
        *,
        labels: Iterable[str] = ("\\Inbox",),
        flags: Iterable[str] = (),
        internaldate: datetime | None = None,
        location: Location = "normal",
        trace: bool | Verdict = False,
    ) -> MessageInfo:
        """A message arriving in `to`'s mailbox (threaded by its headers, like Gmail on arrival).

        With `trace` (True, or a Verdict) Gmail's delivery trace and verdict go on top, as on a
        delivery over SMTP; without it the message is as if imported."""
        if trace is not False:
            data = _to_bytes(raw)
            when = internaldate or datetime.now(UTC)
            verdict = trace if isinstance(trace, Verdict) else None
            raw = gmail_trace(data, recipient=to, when=when, verdict=verdict) + data
        return self._place(to, raw, labels, flags, internaldate, location)

    def append(
        self,
        to: str,
        raw: RawMessage,
        *,
        labels: Iterable[str] = (),
        flags: Iterable[str] = (),
        internaldate: datetime | None = None,
        location: Location = "normal",
    ) -> MessageInfo:
        """A message placed directly, with exactly these labels (e.g. a draft or a sent copy)."""
        return self._place(to, raw, labels, flags, internaldate, location)

    def _place(
        self,
        to: str,
        raw: RawMessage,
        labels: Iterable[str],
        flags: Iterable[str],
        internaldate: datetime | None,
        location: Location,
    ) -> MessageInfo:
        data = _to_bytes(raw)
        label_list, flag_list = list(labels), list(flags)
        if location not in ("normal", "trash", "spam"):
            raise ValueError(f"location must be normal, trash or spam, not {location!r}")

        def run() -> MessageInfo:
            account = self._account(to)
            msg = account.add_message(
                data, labels=label_list, flags=flag_list, internaldate=internaldate, location=location
            )
            return MessageInfo.of(account, msg)

        return self._on_loop(run)

    def messages(self, address: str) -> list[MessageInfo]:
        """Every message of the account (any location), in arrival order."""

        def run() -> list[MessageInfo]:
            account = self._account(address)
            ordered = sorted(account.messages.values(), key=lambda m: m.arrival)
            return [MessageInfo.of(account, m) for m in ordered]

        return self._on_loop(run)

    def message(self, address: str, header_id: str) -> MessageInfo | None:
        """The newest message with this Message-ID (with or without <>), or None."""

        def run() -> MessageInfo | None:
            account = self._account(address)
            try:
                return MessageInfo.of(account, self._find(account, header_id))
            except KeyError:
                return None

        return self._on_loop(run)

    def add_labels(self, address: str, header_id: str, labels: Iterable[str]) -> MessageInfo:
        """Add labels (system or user; unknown user labels are created) to the newest such message."""
        names = list(labels)

        def run() -> MessageInfo:
            account = self._account(address)
            msg = self._find(account, header_id)
            added = {account.canonical_label(n, create=True) or n for n in names}
            account.set_labels(msg, msg.labels | added)
            return MessageInfo.of(account, msg)

        return self._on_loop(run)

    def remove_labels(self, address: str, header_id: str, labels: Iterable[str]) -> MessageInfo:
        names = list(labels)

        def run() -> MessageInfo:
            account = self._account(address)
            msg = self._find(account, header_id)
            gone = {(account.canonical_label(n) or n).casefold() for n in names}
            account.set_labels(msg, {lb for lb in msg.labels if lb.casefold() not in gone})
            return MessageInfo.of(account, msg)

        return self._on_loop(run)

    def set_flags(self, address: str, header_id: str, flags: Iterable[str]) -> MessageInfo:
        """Replace the flags of the newest such message (\\Flagged stays coupled to \\Starred)."""
        wanted = list(flags)

        def run() -> MessageInfo:
            account = self._account(address)
            msg = self._find(account, header_id)
            account.set_flags(msg, wanted)
            return MessageInfo.of(account, msg)

        return self._on_loop(run)

    def labels(self, address: str) -> list[str]:
        """The account's user labels, sorted case-insensitively."""
        return self._on_loop(lambda: sorted(self._account(address).user_labels.values(), key=str.casefold))

    def outbox(self) -> list[OutboxEntry]:
        return self._front.outbox()

    def smtp_pending(self) -> int:
        """How many Sent filings and local deliveries are still waiting for their delay."""
        return self._on_loop(self._front.pending)

    # ----------------------------------------------------------------- knobs, latency, faults

    @property
    def knobs(self) -> Knobs:
        """A copy of the live knobs (change them with set_knobs)."""
        return self._on_loop(lambda: copy.deepcopy(self.store.knobs))

    def set_knobs(self, **changes: object) -> None:
        self._on_loop(lambda: self.store.knobs.update(**changes))

    def set_latency(self, command: str, seconds: float) -> None:
        """Delay before the reply to an IMAP command ("FETCH" also covers "UID FETCH"; "*" = any)."""
        name = command if command == "*" else command.upper()

        def run() -> None:
            table = dict(self.observer.latency)
            table[name] = float(seconds)
            self.observer.latency = table

        self._on_loop(run)

    def set_bandwidth(self, bytes_per_second: float | None) -> None:
        """Throttle every IMAP reply to this many bytes per second (a slow drip); None = unlimited."""

        def run() -> None:
            self.observer.bandwidth_bps = bytes_per_second

        self._on_loop(run)

    def add_fault(self, rule: FaultRule) -> None:
        self._on_loop(lambda: self.observer.add_fault(rule))

    def add_smtp_fault(self, fault: SmtpFault) -> None:
        self._on_loop(lambda: self._front.add_fault(fault))

    def clear_faults(self) -> None:
        def run() -> None:
            self.observer.clear_faults()
            self._front.clear_faults()

        self._on_loop(run)

    # ----------------------------------------------------------------- observation

    def commands(self, account: str | None = None) -> list[CommandRecord]:
        return self.observer.commands(account)

    def connections(self, account: str | None = None) -> int:
        return self.observer.connections(account)

    def open_imap_sessions(self, account: str | None = None) -> int:
        """IMAP connections open right now (with `account`: those logged in as it): a client that
        leaves a socket behind shows up here."""

        def count() -> int:
            sessions = self._imap.sessions if self._imap is not None else set()
            if account is None:
                return len(sessions)
            wanted = account.lower()
            return sum(1 for s in sessions if s.account is not None and s.account.address.lower() == wanted)

        return self._on_loop(count)

    def smtp_logins(self, account: str | None = None) -> int:
        return self._front.logins(account)

    def smtp_held(self) -> int:
        """SMTP sessions that reached a "hold" fault (each stays held until its client goes)."""
        return self._front.held()

    def login_peak(self, account: str) -> int:
        """The most IMAP sessions logged in to `account` at the same time since the last reset."""
        return self._on_loop(lambda: self._imap.peak_logged_in.get(account.lower(), 0) if self._imap else 0)

    def logged_in_now(self, account: str) -> int:
        """IMAP sessions logged in to `account` right now."""
        return self._on_loop(lambda: self._imap.logged_in.get(account.lower(), 0) if self._imap else 0)

    def smtp_sessions(self) -> int:
        """SMTP connections accepted (both ports) since the last reset."""
        return self._front.sessions()

    def smtp_open_sessions(self) -> int:
        """SMTP connections the server has not yet seen end (a test waits for 0 after a client vanished)."""
        return self._on_loop(self._front.open_sessions)

    def wire_log(self) -> list[WireEntry]:
        return self.observer.wire_log()

    def reset_counters(self) -> None:
        """Forget commands, logins, sessions and the wire log; keep faults and latency."""

        def run() -> None:
            obs = self.observer
            faults, latency = obs.faults(), dict(obs.latency)
            jitter, bandwidth = obs.jitter_frac, obs.bandwidth_bps
            obs.reset()
            for rule in faults:
                seen = rule.seen
                obs.add_fault(rule)
                rule.seen = seen
            obs.latency, obs.jitter_frac, obs.bandwidth_bps = latency, jitter, bandwidth
            self._front.reset_counters()
            if self._imap is not None:
                self._imap.peak_logged_in = dict(self._imap.logged_in)

        self._on_loop(run)

    def snapshot(self) -> dict[str, Any]:
        """Comparable deep state of every account, for "nothing changed" assertions."""

        def run() -> dict[str, Any]:
            state: dict[str, Any] = {}
            for account in sorted(self.store.accounts.values(), key=lambda a: a.address.lower()):
                state[account.address] = account.snapshot()
            return state

        return self._on_loop(run)

    def reset(self, seed: SeedSource | None = None) -> None:
        """A fresh store on the same ports: constructor knobs (+ the seed's), no messages unless
        `seed` is given, empty outbox, no faults or latency, counters at zero. Open connections are
        closed."""
        loaded = self._load(seed)

        def run() -> None:
            store = self._new_store(loaded)
            self._store = store
            self._front.reset(store)
            self.observer.reset()
            imap = self._imap
            if imap is not None:
                imap.store = store
                for session in list(imap.sessions):
                    session.forgotten = True  # a command asleep in a delay lands after the reset
                    session.abort()
                # Aborted sessions may still be asleep in an injected delay: count afresh without them.
                imap.logged_in = {}
                imap.peak_logged_in = {}

        self._on_loop(run)
