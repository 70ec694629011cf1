"""The emulator's IMAP4rev1 front: an asyncio server over implicit TLS that answers like Gmail.

`ImapServer` accepts connections; one `ImapSession` per connection reads commands, applies the
observer's latency and faults, runs the handler (`imap_commands` / `imap_messages`), reports
EXISTS/EXPUNGE for the selected view and writes the tagged reply.  Output is buffered per
command so that faults such as `drop_mid_reply` can cut a reply in half.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import logging
import re
import secrets
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from .imap_codec import decode_mutf7, encode_mutf7, flags_wire, imap_quoted
from .imap_parser import (
    PARSE_ERROR,
    Command,
    ParseError,
    RawCommand,
    SeqSet,
    Token,
    login_name,
    merged_ranges,
    parse_command,
    parse_tag,
    read_command,
)
from .imap_replies import APPEND_LIMIT, BYE_FAULT, REFUSALS, THROTTLE_DELAY_S, THROTTLED_SUFFIX, WEBALERT_LINE
from .observe import FaultRule, Observer, redact_imap_line
from .store import Account, Folder, Message, Store, StoreError

__all__ = [
    "CommandFailed",
    "ImapServer",
    "ImapSession",
]

log = logging.getLogger(__name__)

# Commands during which RFC 3501 forbids EXPUNGE responses (sequence numbers must stay put).
_NO_EXPUNGE = frozenset({"FETCH", "STORE", "SEARCH"})
# Commands that must not report changes before they run (they reset or leave the view).
_NO_UPDATES_BEFORE = frozenset({"SELECT", "EXAMINE", "CLOSE", "UNSELECT", "LOGOUT", "IDLE"})

State = str  # "nonauth" | "auth" | "selected" | "logout"
Handler = Callable[["ImapSession", Command], Awaitable[str]]


class CommandFailed(Exception):
    """Raised by a handler to answer with `<status> <text>` (status NO or BAD)."""

    def __init__(self, status: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


@dataclass(frozen=True)
class Spec:
    handler: Handler
    states: frozenset[str]


class ImapServer:
    """`await start()` binds and returns the port; `await stop()` closes every session.

    `commands` is the command table (`imap_commands.COMMANDS`): passed in because the handler
    modules build on this one (sessions, `Spec`, `CommandFailed`), so this one cannot import them."""

    def __init__(
        self, store: Store, observer: Observer, ssl_context: ssl.SSLContext | None, commands: Mapping[str, Spec]
    ) -> None:
        self.store = store
        self.commands = commands
        self.observer = observer
        self.ssl_context = ssl_context
        self.port = 0
        self.sessions: set[ImapSession] = set()
        self.logged_in: dict[str, int] = {}  # account address (lower) -> live logged-in sessions
        self.peak_logged_in: dict[str, int] = {}  # the most at once since the last counter reset
        self._server: asyncio.Server | None = None
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        # TLS is started per connection (loop.start_tls) rather than by the listener, so that the
        # `tls_fail` fault can abort a handshake; to a client this is implicit TLS as on port 993.
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Accepting(self), host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for session in list(self.sessions):
            session.abort()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    def _spawn(self, transport: asyncio.Transport) -> None:
        task = asyncio.get_running_loop().create_task(self._accept(transport))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, transport: asyncio.Transport) -> None:
        loop = asyncio.get_running_loop()
        session_id = next(self._ids)
        fault = self.observer.take_fault(session_id, "CONNECT", None)
        reader = asyncio.StreamReader(limit=1 << 20)
        protocol = asyncio.StreamReaderProtocol(reader)
        stream: asyncio.BaseTransport = transport
        try:
            if self.ssl_context is None:
                transport.set_protocol(protocol)
                transport.resume_reading()
            elif fault is not None and fault.kind == "tls_fail":
                transport.write(b"HTTP/1.0 400 not TLS\r\n\r\n")  # garbage where a ServerHello belongs
                transport.close()
                return
            else:
                upgraded = await loop.start_tls(
                    transport, protocol, self.ssl_context, server_side=True, ssl_handshake_timeout=15
                )
                if upgraded is None:
                    transport.abort()
                    return
                stream = upgraded
        except (TimeoutError, OSError, ssl.SSLError, ConnectionError):
            transport.abort()
            return
        except asyncio.CancelledError:
            transport.abort()
            raise
        protocol.connection_made(stream)
        writer = asyncio.StreamWriter(stream, protocol, reader, loop)  # type: ignore[arg-type]
        session = ImapSession(self, session_id, reader, writer)
        self.sessions.add(session)
        try:
            await session.run(fault)
        finally:
            self.sessions.discard(session)

    def login_allowed(self, account: Account) -> bool:
        return self.logged_in.get(account.address.lower(), 0) < self.store.knobs.max_connections


class _Accepting(asyncio.Protocol):
    """Holds a fresh connection still (no reads) until its session task takes it over."""

    def __init__(self, server: ImapServer) -> None:
        self.server = server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.pause_reading()
        self.server._spawn(transport)


class ImapSession:
    def __init__(
        self, server: ImapServer, session_id: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.server = server
        self.store = server.store
        self.observer = server.observer
        self.id = session_id
        self.reader = reader
        self.writer = writer
        self.state: State = "nonauth"
        self.account: Account | None = None
        self._counted_in: dict[str, int] | None = None
        self.folder: Folder | None = None
        self.readonly = False
        self.uids: list[tuple[int, int]] = []  # the client's view: (uid, msgid) by sequence number
        self.condstore = False
        self.utf8 = False
        self.changed = asyncio.Event()
        self.closing = False
        self._out: list[bytes] = []
        self._pending_record: tuple[str, str, float, float] | None = None
        self.forgotten = False  # set by a reset: what this session still does is not counted
        self._throttled = False  # the command being served answers slowly, with OK … [THROTTLED]
        self._seen_modseq = 0
        self._clean_version = -1  # account version at which the client's view last matched the folder
        self._loop = asyncio.get_running_loop()
        peer = writer.get_extra_info("peername")
        self.peer_ip = peer[0] if isinstance(peer, tuple) else "127.0.0.1"

    # ----------------------------------------------------------------- lifecycle

    async def run(self, connect_fault: FaultRule | None = None) -> None:
        try:
            if connect_fault is not None and connect_fault.kind == "greeting_bye":
                self._out.append(BYE_FAULT)
                await self.flush()
                return
            greeting = f"* OK Gimap ready for requests from {self.peer_ip} {secrets.token_hex(6)}\r\n"
            self._out.append(greeting.encode())
            await self.flush()
            while not self.closing:
                raw = await read_command(
                    self.reader,
                    self._go_ahead,
                    literal_minus_max=self.store.knobs.literal_minus_max,
                    max_literal=APPEND_LIMIT,
                    max_line=self.store.knobs.max_line_length,
                )
                if raw is None:
                    break
                await self._serve(raw)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, TimeoutError, EOFError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:  # pragma: no cover - a bug; never take the server down
            log.exception("IMAP session %s crashed", self.id)
        finally:
            self._logout_cleanup()
            self.abort(graceful=True)

    def abort(self, *, graceful: bool = False) -> None:
        """Close the connection; `graceful` lets buffered output drain first."""
        self.closing = True
        transport = self.writer.transport
        if transport.is_closing():
            return
        if graceful:
            transport.close()
        else:
            transport.abort()

    def _logout_cleanup(self) -> None:
        if self.account is not None:
            key = self.account.address.lower()
            # The table this session was counted in: after a reset a fresh one counts new sessions.
            table = self._counted_in if self._counted_in is not None else self.server.logged_in
            table[key] = max(table.get(key, 1) - 1, 0)
            with contextlib.suppress(ValueError):
                self.account.listeners.remove(self._on_change)
            self.account = None

    def _on_change(self) -> None:
        # May be called from any thread (tests mutate the store directly).
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self.changed.set)

    def logged_in(self, account: Account) -> None:
        self.account = account
        self.state = "auth"
        key = account.address.lower()
        self._counted_in = self.server.logged_in
        now = self.server.logged_in[key] = self.server.logged_in.get(key, 0) + 1
        self.server.peak_logged_in[key] = max(self.server.peak_logged_in.get(key, 0), now)
        account.listeners.append(self._on_change)
        self.observer.record_login(self.id, account.address)

    # ----------------------------------------------------------------- output

    def untagged(self, data: bytes | str) -> None:
        line = data.encode() if isinstance(data, str) else data
        self._out.append(b"* " + line + b"\r\n")

    async def continuation(self, text: str = "") -> None:
        self._out.append(b"+ " + text.encode() + b"\r\n")
        await self.flush(record=False)

    async def _go_ahead(self) -> None:
        await self.continuation("go ahead")

    async def flush(self, *, cut: bool = False, record: bool = True) -> None:
        """Write the buffered output; `record` first counts the running command (see `_record`)."""
        if record:
            self._record()
        data = b"".join(self._out)
        self._out.clear()
        if cut:
            data = _half_reply(data)
        if not data:
            return
        self.observer.record_wire(self.id, "imap", "s", data)
        bandwidth = self.observer.bandwidth_bps
        if bandwidth:
            chunk = max(int(bandwidth / 20), 512)
            for start in range(0, len(data), chunk):
                self.writer.write(data[start : start + chunk])
                await self.writer.drain()
                await asyncio.sleep(min(chunk, len(data) - start) / bandwidth)
        else:
            self.writer.write(data)
            await self.writer.drain()

    async def readline(self) -> bytes:
        """One line from the client (continuation data, IDLE's DONE); b"" at end of stream."""
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return b""
        except asyncio.LimitOverrunError:
            raise ConnectionError("line too long") from None

    # ----------------------------------------------------------------- one command

    async def _serve(self, raw: RawCommand) -> None:
        started_wall, started = time.time(), time.monotonic()
        redacted = redact_imap_line(raw.data)
        self.observer.record_wire(self.id, "imap", "c", redacted)
        line = _display_line(redacted)
        try:
            cmd = parse_command(raw.data, utf8=self.utf8) if raw.error is None else None
        except ParseError:
            cmd = None
        if cmd is None:
            tag = parse_tag(raw.data) or "*"
            self._tagged(tag, raw.error or f"BAD {PARSE_ERROR}")
            self.closing = raw.fatal
            self._pending_record = ("?", line, started_wall, started)
            await self.flush()
            return
        name = cmd.name
        self._pending_record = (name, line, started_wall, started)
        account_name = self.account.address if self.account else login_name(cmd)
        fault = self.observer.take_fault(self.id, name, account_name)
        delay = self.observer.latency_for(name)
        if fault is not None and fault.kind == "delay":
            delay += fault.seconds
        self._throttled = fault is not None and fault.throttles
        if self._throttled:
            assert fault is not None
            delay += fault.seconds if fault.kind == "throttle" and fault.argument else THROTTLE_DELAY_S
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            if fault is not None and await self._fault(fault, cmd):
                return
            await self._dispatch(cmd)
            cut = fault is not None and fault.kind == "drop_mid_reply"
            await self.flush(cut=cut)
            if cut:
                self.abort()
        finally:
            self._record()

    def _record(self) -> None:
        """Count the command (done before its reply goes out, so a client that got the reply
        always finds the command in the observer)."""
        pending, self._pending_record = self._pending_record, None
        if pending is None or self.forgotten:
            return
        name, line, started_wall, started = pending
        account = self.account.address if self.account else None
        self.observer.record_command(self.id, account, name, line, started_wall, time.monotonic() - started)

    def _tagged(self, tag: str, text: str) -> None:
        self._out.append(f"{tag} {text}\r\n".encode("utf-8", errors="replace"))

    async def _fault(self, fault: FaultRule, cmd: Command) -> bool:
        """Act on an injected fault; True when the command is finished (or the link is gone)."""
        kind, arg = fault.kind, fault.argument
        if kind == "drop_before_reply":
            self.closing = True
            self.abort()
            return True
        if kind == "stall":
            self.closing = True
            with contextlib.suppress(Exception):
                while await self.reader.read(65536):
                    pass
            return True
        if kind == "bye":
            # `bye:<refusal kind>` is that refusal's text as an untagged BYE, `bye:<text>` any text.
            text = REFUSALS[arg].removeprefix("NO ") if arg in REFUSALS else arg
            self._out.append(f"* BYE {text}\r\n".encode() if text else BYE_FAULT)
            self.closing = True
            with contextlib.suppress(Exception):
                await self.flush()
            self.abort()
            return True
        if kind in ("no", "bad"):
            self._tagged(cmd.tag, f"{kind.upper()} {arg or 'Failure'}")
            await self.flush()
            return True
        if kind in ("refuse_login", "refuse") and not fault.throttles:
            if arg == "webalert":
                self._out.append(WEBALERT_LINE)
            self._tagged(cmd.tag, REFUSALS.get(arg, REFUSALS["invalid"]))
            await self.flush()
            return True
        if kind in ("hook", "untagged") and fault.hook is not None:
            # A worker thread, so the hook may use the control methods (they run on this loop).
            await asyncio.to_thread(fault.hook)
        if kind == "untagged":
            self._out.append(f"* {arg}\r\n".encode())
        return False  # delay / drop_mid_reply / hook / untagged: the command runs

    async def _dispatch(self, cmd: Command) -> None:
        spec = self.server.commands.get(cmd.name)
        if spec is None:
            self._tagged(cmd.tag, "BAD Unknown command")
            return
        if self.state not in spec.states:
            self._tagged(cmd.tag, "BAD Command received in Invalid state.")
            return
        if self.folder is not None and self.state == "selected" and cmd.name not in _NO_UPDATES_BEFORE:
            # Let the command see messages that arrived since the last reply (UID SEARCH after a
            # delivery must find the new mail, as on Gmail).
            self.report_updates(expunge_ok=cmd.name.startswith("UID "))
        try:
            result = await spec.handler(self, cmd)
        except CommandFailed as exc:
            result = f"{exc.status} {exc.text}"
        except ParseError as exc:
            result = f"BAD {exc.text}"
        except StoreError as exc:
            result = f"NO [{exc.code}] {exc.text}"
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("IMAP handler for %s failed", cmd.name)
            result = "BAD Internal error (Failure)"
        if self.folder is not None and self.state == "selected":
            self.report_updates(expunge_ok=cmd.name not in _NO_EXPUNGE)
        if self._throttled and result.startswith("OK "):
            result += THROTTLED_SUFFIX
        self._tagged(cmd.tag, result)

    # ----------------------------------------------------------------- the selected view

    def select(self, folder: Folder, readonly: bool) -> list[tuple[int, Message]]:
        assert self.account is not None
        current = self.account.sync(folder)
        self.folder = folder
        self.readonly = readonly
        self.uids = [(uid, msg.msgid) for uid, msg in current]
        self.state = "selected"
        self._seen_modseq = self.account.modseq
        self._clean_version = self.account.version
        return current

    def deselect(self) -> None:
        self.folder = None
        self.uids = []
        self._clean_version = -1
        self.readonly = False
        if self.state == "selected":
            self.state = "auth"

    def resolve(self, seqset: SeqSet, *, uid: bool) -> list[tuple[int, int, Message]]:
        """(seq, uid, message) of the client's view that the set names; vanished messages skipped."""
        assert self.account is not None
        if not self.uids:
            return []
        star = self.uids[-1][0] if uid else len(self.uids)
        # The set merged into sorted ranges once, then one bisect per message: O(n log k) rather
        # than O(n * k), which made a FETCH of 10 000 UIDs in a 20 000-message folder take minutes.
        starts, ends = merged_ranges(seqset, star)
        out: list[tuple[int, int, Message]] = []
        messages = self.account.messages
        for index, (u, msgid) in enumerate(self.uids):
            value = u if uid else index + 1
            at = bisect.bisect_right(starts, value) - 1
            if at >= 0 and value <= ends[at]:
                msg = messages.get(msgid)
                if msg is not None:
                    out.append((index + 1, u, msg))
        return out

    def live_items(self) -> list[tuple[int, int, Message]]:
        """(seq, uid, message) of the client's view that are still in the folder."""
        assert self.account is not None and self.folder is not None
        folder, messages = self.folder, self.account.messages
        out = []
        for index, (u, msgid) in enumerate(self.uids):
            msg = messages.get(msgid)
            if msg is not None and folder.uid_of.get(msgid) == u and folder.contains(msg):
                out.append((index + 1, u, msg))
        return out

    def report_updates(self, *, expunge_ok: bool, idle: bool = False) -> None:
        """Tell the client what changed in the selected view since it last heard (RFC 3501 §7.4.1)."""
        if self.account is None or self.folder is None:
            return
        version = self.account.version
        if version == self._clean_version and not idle:
            return  # nothing changed since the client's view last matched the folder
        current = self.account.sync(self.folder)
        present = {uid for uid, _ in current}
        if expunge_ok:
            for index in range(len(self.uids) - 1, -1, -1):
                if self.uids[index][0] not in present:
                    self.untagged(b"%d EXPUNGE" % (index + 1))
                    del self.uids[index]
        known = {uid for uid, _ in self.uids}
        added = [(uid, msg.msgid) for uid, msg in current if uid not in known]
        if added:
            self.uids.extend(added)
            self.untagged(b"%d EXISTS" % len(self.uids))
        if idle and self.store.knobs.idle_notify_flags:
            for seq, (uid, msgid) in enumerate(self.uids, 1):
                msg = self.account.messages.get(msgid)
                if msg is not None and msg.modseq > self._seen_modseq and uid in present:
                    self.untagged(b"%d FETCH (FLAGS %s)" % (seq, flags_wire(msg.flags)))
        self._seen_modseq = self.account.modseq
        # Expunges held back (during FETCH/STORE/SEARCH) leave the view unclean: report them next time.
        self._clean_version = version if len(self.uids) == len(current) else -1

    def mailbox_wire(self, name: str) -> bytes:
        return imap_quoted(name if self.utf8 else encode_mutf7(name))

    def mailbox_name(self, token: Token) -> str:
        """A mailbox argument as the client sent it -> the stored name (modified UTF-7 decoded)."""
        if isinstance(token, list):
            raise ParseError()
        name = token.decode("utf-8", errors="replace") if isinstance(token, bytes) else token
        name = self.decode_name(name)
        return "INBOX" if name.upper() == "INBOX" else name

    def decode_name(self, name: str) -> str:
        if self.utf8:
            return name
        try:
            return decode_mutf7(name)
        except ValueError:
            return name  # a malformed shift sequence is taken as literal text


# --------------------------------------------------------------------------- helpers

_LITERAL_BODY = re.compile(rb"\{(\d+)\}\r\n")


def _half_reply(data: bytes) -> bytes:
    """The reply up to the middle of its first literal (or half of it when there is none)."""
    m = _LITERAL_BODY.search(data)
    if m is None:
        return data[: max(len(data) // 2, 1)]
    return data[: m.end() + int(m.group(1)) // 2]


def _display_line(redacted: bytes) -> str:
    text = redacted.decode("utf-8", errors="replace").replace("\r\n", " ").strip()
    return text[:300]
