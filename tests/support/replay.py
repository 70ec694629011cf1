"""A loopback IMAP server over TLS that answers our client with recorded imap.gmail.com bytes.

What comes from the recordings (tests/gmail_recordings): the greeting, the login answer with its
CAPABILITY, every FETCH item Gmail sent for a message (UID, FLAGS, INTERNALDATE, RFC822.SIZE,
ENVELOPE, X-GM-*, BODY/BODYSTRUCTURE), recorded `BODY[section]` answers as they were, and the
whole message as Gmail served it (`BODY[]`), from which a section our client asks for and Gmail
was not recorded answering is cut (RFC 3501 section 6.4.5 numbering). Tags are replaced by our
client's.

What is made here, because no recording has it: LIST (today's Gmail answer shape, with the
RFC 6154 special-use flags our client looks for), EXAMINE, SEARCH (by Message-ID, from the
recorded ENVELOPE), X-GM-THRID/X-GM-MSGID/X-GM-LABELS for recordings made before Gmail was asked
for them, and the `+ go ahead` before a literal (Gmail's own words, MailKit 2014). Anything else
is answered BAD and remembered in `unexpected`, so a test sees a command nobody planned for.
"""

from __future__ import annotations

import re
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import trustme

from .recordings import RECORDINGS, fetch_responses, server_bytes

GO_AHEAD = server_bytes(RECORDINGS / "mailkit-2014" / "go-ahead.txt")  # the recorded continuation

# ------------------------------------------------------------------ IMAP values as raw bytes


def _skip_value(data: bytes, i: int) -> int:
    """The index after one IMAP value (atom, quoted string, literal or parenthesised list) at i."""
    c = data[i : i + 1]
    if c == b"(":
        i += 1
        while data[i : i + 1] != b")":
            if data[i : i + 1] == b" ":
                i += 1
                continue
            i = _skip_value(data, i)
        return i + 1
    if c == b'"':
        i += 1
        while data[i : i + 1] != b'"':
            i += 2 if data[i : i + 1] == b"\\" else 1
        return i + 1
    literal = re.compile(rb"\{(\d+)\}\r\n").match(data, i)
    if literal:
        return literal.end() + int(literal.group(1))
    while i < len(data) and data[i : i + 1] not in b" ()":
        i += 1
    return i


def _item_name(data: bytes, i: int) -> int:
    """The index after a FETCH item name such as BODY[HEADER.FIELDS (A B)]<0>."""
    while i < len(data) and data[i : i + 1] not in b" [":
        i += 1
    if data[i : i + 1] == b"[":
        i = data.index(b"]", i) + 1
        if data[i : i + 1] == b"<":
            i = data.index(b">", i) + 1
    return i


def fetch_items(wire: bytes) -> list[tuple[bytes, bytes]]:
    """(item name, raw value) pairs of one recorded `* n FETCH (...)` response."""
    start = wire.index(b"(") + 1
    items: list[tuple[bytes, bytes]] = []
    i = start
    while wire[i : i + 1] != b")":
        if wire[i : i + 1] == b" ":
            i += 1
            continue
        end = _item_name(wire, i)
        name = wire[i:end]
        value_end = _skip_value(wire, end + 1)
        items.append((name, wire[end + 1 : value_end]))
        i = value_end
    return items


# ------------------------------------------------------------------ MIME sections of a message


def _split(entity: bytes) -> tuple[bytes, bytes]:
    cut = entity.find(b"\r\n\r\n")
    if entity.startswith(b"\r\n"):
        return b"", entity[2:]
    return (entity, b"") if cut < 0 else (entity[: cut + 2], entity[cut + 4 :])


def _content_type(header: bytes) -> tuple[str, str | None]:
    parsed = BytesHeaderParser(policy=compat32).parsebytes(header)
    boundary = parsed.get_param("boundary")
    return parsed.get_content_type(), boundary if isinstance(boundary, str) else None


def _children(entity: bytes) -> list[bytes]:
    header, body = _split(entity)
    _type, boundary = _content_type(header)
    if boundary is None:
        return []
    delimiter = re.compile(rb"(?:^|\r\n)--" + re.escape(boundary.encode()) + rb"(--)?[ \t]*(?:\r\n|$)")
    pieces: list[bytes] = []
    last: int | None = None
    for match in delimiter.finditer(body):
        if last is not None:
            pieces.append(body[last : match.start()])
        if match.group(1):
            break
        last = match.end()
    return pieces


def _in_part(part: bytes, rest: list[int]) -> bytes:
    header, body = _split(part)
    if not rest:
        return body
    kind, _boundary = _content_type(header)
    if kind.startswith("multipart/"):
        return _in_part(_children(part)[rest[0] - 1], rest[1:])
    if kind in ("message/rfc822", "message/global"):
        return section_of(body, ".".join(map(str, rest)))
    raise KeyError("no such section")


def section_of(message: bytes, section: str) -> bytes:
    """`BODY[section]` of a whole message, as RFC 3501 numbers the parts."""
    path = [int(n) for n in section.split(".")]
    header, _body = _split(message)
    kind, _boundary = _content_type(header)
    if kind.startswith("multipart/"):
        return _in_part(_children(message)[path[0] - 1], path[1:])
    if path[0] != 1:
        raise KeyError("no such section")
    return _in_part(message, path[1:])


def header_fields(message: bytes, names: list[str]) -> bytes:
    """`BODY[HEADER.FIELDS (names)]`: the named header lines, and the blank line after them."""
    header, _body = _split(message)
    wanted = {n.lower() for n in names}
    lines = re.split(rb"\r\n(?![ \t])", header.rstrip(b"\r\n")) if header else []
    kept = [line for line in lines if line.split(b":", 1)[0].strip().lower().decode("latin-1") in wanted]
    return b"".join(line + b"\r\n" for line in kept) + b"\r\n"


# ------------------------------------------------------------------ the recorded mailbox


@dataclass
class Recorded:
    """One message as Gmail served it: its recorded FETCH items and, when recorded, its bytes."""

    uid: int
    items: dict[bytes, bytes]
    whole: bytes | None = None
    sections: dict[str, bytes] = field(default_factory=dict)  # recorded BODY[n] answers, verbatim

    @property
    def thread_id(self) -> int:
        """The recorded X-GM-THRID, or the one made here for a recording without it."""
        return int(self.items.get(b"X-GM-THRID", b"%d" % (1_000_000 + self.uid)))

    @property
    def message_id(self) -> str | None:
        envelope = self.items.get(b"ENVELOPE", b"")
        found = re.findall(rb'"<([^">]+)>"\)$', envelope)
        return found[-1].decode() if found else None


@dataclass
class Session:
    """A recorded session: its greeting, its login answer (tag as `{tag}`) and its messages."""

    greeting: bytes
    login_answer: bytes
    messages: list[Recorded]


def _literal(response: bytes) -> bytes:
    match = re.search(rb"\{(\d+)\}\r\n", response)
    if match is None:
        raise ValueError("no literal")
    return response[match.end() : match.end() + int(match.group(1))]


def _retag(answer: bytes, placeholder: bytes) -> bytes:
    """The recorded tagged line with its tag replaced by `{tag}`."""
    lines = answer.split(b"\r\n")
    last = next(i for i in range(len(lines) - 1, -1, -1) if lines[i])
    lines[last] = b"{tag}" + lines[last][len(placeholder) :]
    return b"\r\n".join(lines)


def mailkit_2014(uids: list[int] | None = None) -> Session:
    """The January 2014 session: 21 summaries, 11 of them with the whole message recorded."""
    folder = RECORDINGS / "mailkit-2014"
    summaries = {int(dict(fetch_items(r.wire))[b"UID"]): r.wire for r in fetch_responses(folder / "search-summary.txt")}
    messages: list[Recorded] = []
    for uid, wire in summaries.items():
        if uids is not None and uid not in uids:
            continue
        whole_file = folder / f"fetch.{uid}.txt"
        whole = _literal(server_bytes(whole_file)) if whole_file.exists() else None
        messages.append(Recorded(uid, dict(fetch_items(wire)), whole))
    login = server_bytes(folder / "authenticate.txt")
    return Session(server_bytes(folder / "greeting.txt"), _retag(login, b"A00000001"), messages)


def rsc_2011() -> Session:
    """The October 2011 session: the message UID 57046 with its recorded BODY[], BODY[1], BODY[2]."""
    folder = RECORDINGS / "rsc-2011"
    (summary,) = fetch_responses(
        folder / "uid-fetch-57047-flags-internaldate-rfc822-size-envelope-body-x-gm-msgid-x-gm-thrid-x-gm-labels.txt"
    )
    message = Recorded(
        57046, dict(fetch_items(summary.wire)), _literal(server_bytes(folder / "uid-fetch-57046-body.txt"))
    )
    for section in ("1", "2"):
        message.sections[section] = _literal(server_bytes(folder / f"uid-fetch-57046-body-{section}.txt"))
    login = server_bytes(folder / "login-gre-host-com-password.txt")
    return Session(server_bytes(folder / "greeting.txt"), _retag(login, b"#"), [message])


# ------------------------------------------------------------------ the server


_LIST = (
    b'* LIST (\\HasNoChildren) "/" "INBOX"\r\n'
    b'* LIST (\\HasChildren \\Noselect) "/" "[Gmail]"\r\n'
    b'* LIST (\\All \\HasNoChildren) "/" "[Gmail]/All Mail"\r\n'
    b'* LIST (\\Drafts \\HasNoChildren) "/" "[Gmail]/Drafts"\r\n'
    b'* LIST (\\HasNoChildren \\Sent) "/" "[Gmail]/Sent Mail"\r\n'
    b'* LIST (\\HasNoChildren \\Junk) "/" "[Gmail]/Spam"\r\n'
    b'* LIST (\\Flagged \\HasNoChildren) "/" "[Gmail]/Starred"\r\n'
    b'* LIST (\\HasNoChildren \\Trash) "/" "[Gmail]/Trash"\r\n'
)
_ITEM = re.compile(rb"BODY(?:\.PEEK)?\[([^\]]*)\](?:<(\d+)\.(\d+)>)?|[A-Z0-9.\-]+", re.IGNORECASE)


class ReplayServer:
    """Serves one recorded Session to any number of connections, one thread each."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.by_uid = {m.uid: m for m in session.messages}
        self.unexpected: list[bytes] = []
        self.commands: list[bytes] = []
        self._ca = trustme.CA(organization_name="gmail replay test CA")
        self._cert = self._ca.issue_cert("127.0.0.1", "localhost")
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self.ca_file: Path | None = None

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, workdir: Path) -> ReplayServer:
        self.ca_file = workdir / "replay-ca.pem"
        self._ca.cert_pem.write_to_path(str(self.ca_file))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._cert.configure_cert(context)
        listener = socket.create_server(("127.0.0.1", 0))
        self._listener = listener
        self.port = listener.getsockname()[1]
        thread = threading.Thread(target=self._accept, args=(listener, context), daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def env(self) -> dict[str, str]:
        from mcp_multi_gmail.gmail.endpoint import loopback_environ

        # SMTP is never used by the read tools; the IMAP port stands in for both SMTP ports.
        return loopback_environ(
            host="127.0.0.1",
            imap_port=self.port,
            smtp_ssl_port=self.port,
            smtp_starttls_port=self.port,
            ca_file=str(self.ca_file),
        )

    def _accept(self, listener: socket.socket, context: ssl.SSLContext) -> None:
        while True:
            try:
                raw, _address = listener.accept()
            except OSError:
                return
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers go out at once, as Gmail's do
            thread = threading.Thread(target=self._serve, args=(raw, context), daemon=True)
            thread.start()

    def _serve(self, raw: socket.socket, context: ssl.SSLContext) -> None:
        try:
            with context.wrap_socket(raw, server_side=True) as conn, conn.makefile("rb") as reader:
                conn.sendall(self.session.greeting)
                for command in _commands(reader, conn):
                    self.commands.append(command)
                    if not self._answer(conn, command):
                        return
        except (OSError, ssl.SSLError):
            return

    def _answer(self, conn: ssl.SSLSocket, command: bytes) -> bool:
        tag, _, rest = command.partition(b" ")
        verb = rest.split(b" ", 1)[0].upper()
        uid = verb == b"UID"
        if uid:
            rest = rest[4:]
            verb = rest.split(b" ", 1)[0].upper()
        if verb == b"LOGIN":
            conn.sendall(self.session.login_answer.replace(b"{tag}", tag))
        elif verb == b"LIST":
            conn.sendall(_LIST + tag + b" OK Success\r\n")
        elif verb in (b"EXAMINE", b"SELECT"):
            uids = sorted(self.by_uid)
            conn.sendall(
                b"* FLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $NotPhishing $Phishing)\r\n"
                b"* OK [PERMANENTFLAGS ()] Flags permitted.\r\n"
                b"* OK [UIDVALIDITY 611764547] UIDs valid.\r\n"
                + f"* {len(uids)} EXISTS\r\n* 0 RECENT\r\n".encode()
                + f"* OK [UIDNEXT {uids[-1] + 1 if uids else 1}] Predicted next UID.\r\n".encode()
                + tag
                + b" OK [READ-ONLY] [Gmail]/All Mail selected. (Success)\r\n"
            )
        elif verb == b"SEARCH" and uid:
            wanted = re.search(rb'rfc822msgid:\\?"?<?([^"\\>\s]+)', rest, re.IGNORECASE)
            thread = re.search(rb"X-GM-THRID (\d+)", rest, re.IGNORECASE)
            found = [
                m.uid
                for m in self.session.messages
                if (wanted and m.message_id == wanted.group(1).decode())
                or (thread and m.thread_id == int(thread.group(1)))
            ]
            conn.sendall(
                b"* SEARCH"
                + b"".join(b" %d" % u for u in found)
                + b"\r\n"
                + tag
                + b" OK SEARCH completed (Success)\r\n"
            )
        elif verb == b"FETCH" and uid:
            conn.sendall(self._fetch(rest) + tag + b" OK Success\r\n")
        elif verb == b"LOGOUT":
            conn.sendall(b"* BYE LOGOUT Requested\r\n" + tag + b" OK 73 good day (Success)\r\n")
            return False
        elif verb == b"NOOP":
            conn.sendall(tag + b" OK Success\r\n")
        else:
            self.unexpected.append(command)
            conn.sendall(tag + b" BAD Unknown command\r\n")
        return True

    def _fetch(self, rest: bytes) -> bytes:
        _verb, uid_set, items = rest.split(b" ", 2)
        wanted = [int(u) for u in uid_set.split(b",") if u.isdigit()]
        out = b""
        for number, uid in enumerate(sorted(self.by_uid), 1):
            if uid in wanted:
                out += b"* %d FETCH (" % number + b" ".join(self._items(self.by_uid[uid], items)) + b")\r\n"
        return out

    def _items(self, message: Recorded, items: bytes) -> Iterator[bytes]:
        yield b"UID %d" % message.uid
        for match in _ITEM.finditer(items.strip(b"()")):
            name = match.group(0).upper()
            if name == b"UID":
                continue
            if match.group(1) is not None or name.startswith(b"BODY["):
                yield self._section(message, match)
            elif name == b"BODYSTRUCTURE":
                value = message.items.get(b"BODYSTRUCTURE", message.items.get(b"BODY"))
                yield b"BODYSTRUCTURE " + (value or b"NIL")
            elif name in message.items:
                yield name + b" " + message.items[name]
            elif name == b"X-GM-THRID" or name == b"X-GM-MSGID":
                yield name + b" %d" % (1_000_000 + message.uid)  # made here: recorded before X-GM-EXT-1 was asked
            elif name == b"X-GM-LABELS":
                yield b"X-GM-LABELS ()"
            elif name == b"FIELDS":
                continue  # the word inside HEADER.FIELDS (...), already answered with the section
            else:
                self.unexpected.append(name)

    def _section(self, message: Recorded, match: re.Match[bytes]) -> bytes:
        section = match.group(1).decode()
        data: bytes | None
        if section.upper().startswith("HEADER.FIELDS"):
            names = re.findall(r"[A-Za-z0-9-]+", section[len("HEADER.FIELDS") :])
            data = header_fields(message.whole, names) if message.whole is not None else b"\r\n"
            name = b"BODY[HEADER.FIELDS (" + " ".join(n.upper() for n in names).encode() + b")]"
        else:
            name = b"BODY[" + section.encode() + b"]"
            if section in message.sections:
                data = message.sections[section]
            elif message.whole is None:
                data = None
            elif section == "":
                data = message.whole
            else:
                try:
                    data = section_of(message.whole, section)
                except (KeyError, IndexError, ValueError):
                    data = None
        if match.group(2) is not None and data is not None:
            start, length = int(match.group(2)), int(match.group(3))
            data = data[start : start + length]
            name += b"<%d>" % start
        if data is None:
            return name + b" NIL"
        return name + b" {%d}\r\n" % len(data) + data


def _commands(reader: BinaryIO, conn: ssl.SSLSocket) -> Iterator[bytes]:
    """Client command lines with their literals folded in (a `+ go ahead` before each literal)."""
    while True:
        line = reader.readline()
        if not line:
            return
        command = line.rstrip(b"\r\n")
        while (literal := re.search(rb"\{(\d+)\+?\}$", command)) is not None:
            if not command.endswith(b"+}"):
                conn.sendall(GO_AHEAD)
            data = reader.read(int(literal.group(1)))
            command = command[: literal.start()] + b'"' + data + b'"' + reader.readline().rstrip(b"\r\n")
        yield command
