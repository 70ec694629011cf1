"""One IMAP session per call: connect with implicit TLS, log in, resolve special-use folders, log out.

imapclient is synchronous and not thread-safe, so each session lives in exactly one worker
thread and is never shared; `run_session` is the async doorway the service layer uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .. import deadline
from ..errors import MailError
from .connections import OPEN, Connections, Gate
from .endpoint import Endpoint
from .refusals import (
    THROTTLED,
    bye_refused,
    command_refused,
    is_imap_off,
    is_overquota,
    is_transient,
    login_refused,
)
from .special_folders import MailboxKey, SpecialFolders

if TYPE_CHECKING:
    from imapclient import IMAPClient

    from .parse.bodystructure import Part
    from .parse.envelope import EnvelopeInfo

# imapclient and the parser are imported at the first connection, not at start-up: the server
# answers `initialize` before any mailbox is touched.

T = TypeVar("T")

# Connect quickly (a blocked port stays silent), but let big fetches take their time. Both are
# shortened to what is left of the call's deadline.
CONNECT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 120.0
# The LOGOUT after the answer has gone back: short, because nothing useful depends on it.
LOGOUT_TIMEOUT_S = 5.0
# Gmail's answer to one LOGIN too many; the wait before the one more try is jittered so that
# parallel calls do not come back at the same moment.
TOO_MANY_BACKOFF_S = (1.0, 3.0)

ALL_MAIL = "\\All"
DRAFTS = "\\Drafts"
SENT = "\\Sent"
TRASH = "\\Trash"
_SPECIAL_USE = {"\\All", "\\Archive", "\\Drafts", "\\Flagged", "\\Important", "\\Junk", "\\Sent", "\\Trash"}
_FOLDER_WORDS = {ALL_MAIL: "all-mail", DRAFTS: "drafts", SENT: "sent", TRASH: "trash"}

# imapclient would otherwise log protocol lines; stdout is the MCP channel and stays silent anyway.
logging.getLogger("imapclient").setLevel(logging.WARNING)
logger = logging.getLogger(__name__)
_THROTTLED = THROTTLED.encode()


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _raise_if_it_stops_the_call(error: Exception) -> None:
    """A refused write is normally one failed outcome (the caller reads the messages back), but
    Gmail's daily transfer limit and IMAP switched off end the whole call with their own advice."""
    reason = _gmail_reason(error)
    if is_overquota(reason) or is_imap_off(reason):
        raise error


def _accepted(command: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
    """Run a write command; False when Gmail refuses it (tagged NO/BAD), unless the refusal ends
    the whole call. A broken connection raises as it is."""
    from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

    try:
        command(*args, **kwargs)
    except IMAPClientAbortError:
        raise
    except IMAPClientError as error:
        _raise_if_it_stops_the_call(error)
        return False
    return True


def _gmail_reason(error: Exception) -> str:
    """Gmail's own response text, without imapclient's "login failed:" wrapping."""
    text = _text(error.args[0] if error.args else error)
    for prefix in ("login failed: ", "LOGIN command error: "):
        if text.lower().startswith(prefix.lower()):
            text = text[len(prefix) :]
    # imapclient says "fetch failed: <Gmail's text>", imaplib reports an untagged BYE as
    # "command: FETCH => <Gmail's text>".
    text = re.sub(r"^(?:[a-z_]+ failed: |command: [A-Za-z ]+ => )", "", text)
    if text.startswith(("b'", 'b"')) and text.endswith(("'", '"')):
        text = text[2:-1]
    return text.strip()


def network_error(account: str, error: BaseException, *, changed: bool = False) -> MailError:
    reason = _text(error) or type(error).__name__
    if changed:
        # A command that changes the mailbox was on its way: Gmail may have carried it out.
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": the connection to Gmail broke ({reason}) after a change had been sent, so '
            "the change may or may not have been made. Read the current state before deciding what to do next.",
            retryable=True,
        )
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": the connection to Gmail failed ({reason}). Try again in a moment.',
        retryable=True,
    )


class TooManyConnections(MailError):
    """Gmail refused LOGIN because the account has too many IMAP connections open (the user's
    other clients hold them, or another program): worth one more try after a pause."""

    def __init__(self, refused: MailError) -> None:
        super().__init__(refused.code, refused.message, retryable=refused.retryable)


def too_many_connections(reason: str) -> bool:
    return "too many simultaneous connections" in reason.lower()


_APPENDUID = re.compile(r"APPENDUID (\d+) (\d+)", re.IGNORECASE)

# Gmail's command-length limit is undocumented and other servers answer BAD to very long lines
# (RFC 7162 section 4 asks servers to take at least 8192 octets): long id lists and UID sets are
# split into commands of bounded size, so the number of commands grows in steps, not per message.
IDS_PER_SEARCH = 50
UIDS_PER_COMMAND = 1000
MAX_LINE_CHARS = 7000


def _batches(items: list[T], most: int, width: Callable[[T], int]) -> list[list[T]]:
    """Items in order, in groups of at most `most` whose widths add up to at most MAX_LINE_CHARS."""
    batches: list[list[T]] = []
    current: list[T] = []
    chars = 0
    for item in items:
        wide = width(item)
        if current and (len(current) >= most or chars + wide > MAX_LINE_CHARS):
            batches.append(current)
            current, chars = [], 0
        current.append(item)
        chars += wide
    if current:
        batches.append(current)
    return batches


def uid_batches(uids: list[int]) -> list[list[int]]:
    """Sorted distinct UIDs in groups of at most UIDS_PER_COMMAND that fit on one command line."""
    return _batches(sorted(set(uids)), UIDS_PER_COMMAND, lambda uid: len(str(uid)) + 1)


def id_batches(bare_ids: list[str]) -> list[list[str]]:
    """Message-IDs in groups of at most IDS_PER_SEARCH whose search terms fit on one command line."""
    # The term around each id: rfc822msgid:"…" or OR HEADER Message-ID "<…>".
    return _batches(bare_ids, IDS_PER_SEARCH, lambda bare: len(bare.encode()) + 24)


def _header_term(bare: str) -> str:
    """`HEADER Message-ID "<id>"`, always quoted: an unquoted id such as `a{3}` would read as a literal."""
    escaped = bare.replace("\\", "\\\\").replace('"', '\\"')
    return f'HEADER Message-ID "<{escaped}>"'


# Gmail's verdict and the delivery trace that shows Gmail wrote it (see parse.authresults.authentication).
AUTH_FIELDS = "AUTHENTICATION-RESULTS ARC-AUTHENTICATION-RESULTS RECEIVED RECEIVED-SPF"
AUTH_HEADER = f"BODY.PEEK[HEADER.FIELDS ({AUTH_FIELDS})]"
_AUTH_KEY = f"BODY[HEADER.FIELDS ({AUTH_FIELDS})]".encode()


@dataclass
class Fetched:
    """What one FETCH told us about one message (fields not asked for stay None)."""

    uid: int
    thread_id: int | None = None
    gmail_msgid: int | None = None
    internaldate: datetime | None = None
    labels: tuple[str, ...] | None = None
    flags: tuple[str, ...] | None = None
    size: int | None = None
    envelope: EnvelopeInfo | None = None
    parts: list[Part] | None = None
    auth_header: bytes | None = None


def _label(raw: object) -> str:
    from imapclient.imap_utf7 import decode as decode_utf7

    if isinstance(raw, bytes):
        return str(decode_utf7(raw))
    return str(raw)


def _aware(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _fetched(uid: int, data: dict[bytes, Any]) -> Fetched:
    from .parse.bodystructure import parts
    from .parse.envelope import envelope_info

    item = Fetched(uid=uid)
    if b"X-GM-THRID" in data:
        item.thread_id = int(data[b"X-GM-THRID"])
    if b"X-GM-MSGID" in data:
        item.gmail_msgid = int(data[b"X-GM-MSGID"])
    if b"INTERNALDATE" in data:
        item.internaldate = _aware(data[b"INTERNALDATE"])
    if b"X-GM-LABELS" in data:
        item.labels = tuple(_label(x) for x in data[b"X-GM-LABELS"] or ())
    if b"FLAGS" in data:
        item.flags = tuple(_text(x) for x in data[b"FLAGS"] or ())
    if b"RFC822.SIZE" in data:
        item.size = int(data[b"RFC822.SIZE"])
    if b"ENVELOPE" in data:
        item.envelope = envelope_info(data[b"ENVELOPE"])
    if b"BODYSTRUCTURE" in data:
        item.parts = parts(data[b"BODYSTRUCTURE"])
    auth = data.get(_AUTH_KEY)
    if auth is None:  # a server may echo the field list in its own spelling
        auth = next((v for k, v in data.items() if bytes(k).upper().startswith(b"BODY[HEADER.FIELDS")), None)
    if auth is not None or _AUTH_KEY in data:
        item.auth_header = bytes(auth or b"")
    return item


class ImapSession:
    """A logged-in IMAP connection for one mailbox and one tool call."""

    def __init__(
        self,
        client: IMAPClient,
        account: str,
        remembered: tuple[SpecialFolders, MailboxKey] | None = None,
    ) -> None:
        self.client = client
        self.account = account
        # Where this server remembers the mailbox's special folders across sessions (None: nowhere).
        self._remembered = remembered
        self._listing: list[tuple[str, str | None, bool]] | None = None
        self._selected: tuple[str, bool] | None = None
        self._exists = 0  # messages in the open folder, from the SELECT/EXAMINE answer
        # A command that changes the mailbox (CREATE, STORE, APPEND, MOVE) was sent: if the connection
        # breaks from here on, its outcome is unknown and the error has to say so.
        self._changes_sent = False
        # The connection was found dead (an IDLE answer that never came, a BYE, a closed socket): no
        # LOGOUT is owed or possible, so closing does not wait for one.
        self.dead = False

    @property
    def changes_sent(self) -> bool:
        return self._changes_sent

    @changes_sent.setter
    def changes_sent(self, value: bool) -> None:
        self._changes_sent = value
        if value:
            deadline.with_progress(lambda progress: progress.mark_changed(self.account))

    def all_folders(self) -> list[tuple[str, str | None, bool]]:
        """(path, special-use flag or None, selectable) for every folder, from one LIST per session."""
        if self._listing is None:
            listing: list[tuple[str, str | None, bool]] = []
            for flags, _delimiter, name in self.client.list_folders():
                names = [_text(flag) for flag in flags]
                special = next((f for f in names if f in _SPECIAL_USE), None)
                selectable = not any(f.lower() in ("\\noselect", "\\nonexistent") for f in names)
                listing.append((_text(name), special, selectable))
            self._listing = listing
            if self._remembered is not None:
                memory, key = self._remembered
                memory.remember(key, self._specials(listing))
        return self._listing

    @staticmethod
    def _specials(listing: list[tuple[str, str | None, bool]]) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, special, _selectable in listing:
            if special is not None and special not in found:
                found[special] = name
        return found

    def special_folders(self) -> dict[str, str]:
        """Special-use flag -> folder path (names are localised, flags are not)."""
        cached = self._remembered[0].get(self._remembered[1]) if self._remembered is not None else None
        if self._listing is None and cached is not None:
            return cached
        return self._specials(self.all_folders())

    def folder(self, special: str) -> str:
        path = self.special_folders().get(special)
        if path is None:
            word = _FOLDER_WORDS.get(special, special)
            raise MailError(
                "provider_unsupported",
                f'Mailbox "{self.account}" does not report a {word} folder, which Gmail and Google '
                "Workspace always do. Check that IMAP is enabled and that the folder is shown in IMAP "
                "(Gmail settings, Labels, Show in IMAP).",
            )
        return path

    def open(self, special: str, *, writable: bool = False) -> str:
        """EXAMINE (read-only, never sets \\Seen) or SELECT a special folder found by its flag."""
        from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

        path = self.folder(special)
        if self._selected != (path, writable):
            try:
                answer = self.client.select_folder(path, readonly=not writable)
            except IMAPClientAbortError:
                raise
            except IMAPClientError:
                if self._listing is not None:
                    raise  # the path came from this session's own LIST: a real refusal
                # A remembered path that no longer exists (renamed, hidden from IMAP): list afresh.
                if self._remembered is not None:
                    memory, key = self._remembered
                    memory.forget(key)
                path = self.folder(special)
                answer = self.client.select_folder(path, readonly=not writable)
            self._exists = int(answer.get(b"EXISTS", 0) or 0)
            self._selected = (path, writable)
        return path

    def examine(self, path: str) -> int:
        """EXAMINE any folder by its path (a label's own view); how many messages it shows."""
        answer = self.client.select_folder(path, readonly=True)
        self._exists = int(answer.get(b"EXISTS", 0) or 0)
        self._selected = (path, False)
        return self._exists

    @property
    def exists(self) -> int:
        """Messages in the open folder, from its SELECT/EXAMINE answer."""
        return self._exists

    # ------------------------------------------------------------------ reading

    def search_raw(self, query: str) -> list[int]:
        """UID SEARCH X-GM-RAW: Gmail's own search syntax, non-ASCII sent as a UTF-8 literal."""
        return sorted(int(u) for u in self.client.gmail_search(query))

    def search(self, criteria: list[Any]) -> list[int]:
        """UID SEARCH with standard keys; non-ASCII values (a label like "čeká") go as UTF-8 literals."""
        wide = any(isinstance(item, str) and not item.isascii() for item in criteria)
        return sorted(int(u) for u in self.client.search(criteria, charset="UTF-8" if wide else None))

    def search_header_ids(self, bare_ids: list[str]) -> list[int]:
        """UID SEARCH HEADER Message-ID "<id>" in the open folder, OR-grouped IDS_PER_SEARCH at a time.

        It reads the header itself, not Gmail's search index, which lags behind new mail (the
        brackets make the substring match an exact one)."""
        found: set[int] = set()
        plain = [bare for bare in bare_ids if bare.isascii() and bare.isprintable()]
        for batch in id_batches(plain):
            criteria = "OR " * (len(batch) - 1) + " ".join(_header_term(bare) for bare in batch)
            found.update(int(u) for u in self.client.search(criteria))  # a string goes out as written
        for bare in bare_ids:
            if not bare.isascii() and bare.isprintable():
                found.update(self.search(["HEADER", "Message-ID", f"<{bare}>"]))  # as a UTF-8 literal
        return sorted(found)

    def search_gmail_msgid(self, msgid: int) -> list[int]:
        """UID SEARCH X-GM-MSGID: Gmail's own id of one message, answered without the search index."""
        return self.search(["X-GM-MSGID", msgid])

    def fetch(self, uids: list[int], items: list[str]) -> dict[int, Fetched]:
        """UID FETCH of a whole set: one command per UIDS_PER_COMMAND messages, never one per message."""
        found: dict[int, Fetched] = {}
        for batch in uid_batches(uids):
            answer = self.client.fetch(batch, items)
            found.update((int(uid), _fetched(int(uid), data)) for uid, data in answer.items())
        return found

    def _by_message_id(self, uids: list[int]) -> dict[str, list[Fetched]]:
        found: dict[str, list[Fetched]] = {}
        for item in self.fetch(uids, ["ENVELOPE", "X-GM-THRID", "X-GM-LABELS", "FLAGS"]).values():
            key = item.envelope.message_id if item.envelope else None
            if key is not None:
                found.setdefault(key.casefold(), []).append(item)
        return found

    def find_message_ids(self, bare_ids: list[str]) -> dict[str, list[Fetched]]:
        """The copies of many Message-IDs: an X-GM-RAW OR-group and a FETCH (per IDS_PER_SEARCH ids).

        Ids the search index does not know yet (it lags behind new mail) are looked for once more by
        their header, in one more search and FETCH, so that cost is paid only on a miss. Keys are the
        ids as the envelopes carry them, case-folded (Gmail matches them that way)."""
        if not bare_ids:
            return {}
        uids: set[int] = set()
        for batch in id_batches(bare_ids):
            terms = " ".join(f'rfc822msgid:"{bare}"' for bare in batch)
            uids.update(self.search_raw(f"{{{terms}}}" if len(batch) > 1 else terms))
        found = self._by_message_id(sorted(uids))
        missing = [bare for bare in bare_ids if bare.casefold() not in found]
        if missing:
            late = [uid for uid in self.search_header_ids(missing) if uid not in uids]
            for key, items in self._by_message_id(late).items():
                found.setdefault(key, []).extend(items)
        return found

    # ------------------------------------------------------------------ IDLE (RFC 2177)

    def can_idle(self) -> bool:
        return b"IDLE" in {bytes(c).upper() for c in self.client.capabilities()}

    def idle_start(self, answer_s: float | None = None) -> bool:
        """Enter IDLE on the open folder; False when the server refuses it (tagged NO/BAD) for good.

        `answer_s`: Gmail's `+ idling` must come within this many seconds, else TimeoutError (dead)."""
        from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

        try:
            with self._answer_within(answer_s):
                self.client.idle()
        except IMAPClientAbortError:
            raise
        except IMAPClientError as error:
            _raise_if_it_stops_the_call(error)
            if is_transient(_gmail_reason(error)):
                raise  # [UNAVAILABLE] and the like pass: a failed connection to retry, not IDLE refused
            return False
        return True

    def idle_wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds in IDLE; True when the folder reported new messages (EXISTS).

        Gmail reports only EXISTS and EXPUNGE while idling. A closed connection makes imapclient
        return nothing at once, so an early empty answer or a BYE is treated as a dropped line."""
        began = time.monotonic()
        responses = self.client.idle_check(timeout)
        new_mail = False
        for response in responses:
            if len(response) >= 2 and response[1] == b"EXISTS":
                new_mail = True
            elif response and response[0] == b"BYE":
                self.dead = True
                said = " ".join(_text(part) for part in response[1:])
                raise ConnectionError(f"Gmail ended the IDLE connection: BYE {said}".strip())
        if not responses and time.monotonic() - began < timeout / 2:
            self.dead = True
            raise ConnectionError("the IDLE connection was closed")
        return new_mail

    def idle_stop(self, answer_s: float | None = None) -> None:
        """DONE; the tagged answer must come within `answer_s` seconds, else TimeoutError (dead).
        Gmail sends nothing while idling, so this answer is what proves the connection alive."""
        with self._answer_within(answer_s):
            self.client.idle_done()

    @contextmanager
    def _answer_within(self, seconds: float | None) -> Iterator[None]:
        """Bound the wait for the server's answer; a wait that runs out marks the connection dead."""
        from imapclient.exceptions import IMAPClientAbortError

        sock = self.client.socket()
        previous = sock.gettimeout()
        if seconds is not None:
            sock.settimeout(seconds)
        try:
            yield
        except TimeoutError:
            self.dead = True
            if seconds is None:
                raise
            raise TimeoutError(f"no answer within {seconds:g} s") from None
        except (OSError, IMAPClientAbortError):
            self.dead = True
            raise
        finally:
            with contextlib.suppress(OSError):
                sock.settimeout(previous)

    # ------------------------------------------------------------------ writing

    def create_label(self, name: str) -> bool:
        """CREATE a label; False when Gmail says it exists already ([ALREADYEXISTS] is success)."""
        from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

        self.changes_sent = True
        try:
            self.client.create_folder(name)
        except IMAPClientAbortError:
            raise
        except IMAPClientError as error:
            if "ALREADYEXISTS" in _gmail_reason(error).upper():
                return False
            raise
        self._listing = None
        return True

    def change_labels(self, uids: list[int], labels: list[str], *, add: bool) -> bool:
        """UID STORE ±X-GM-LABELS.SILENT; False when Gmail refuses (the caller reads back anyway)."""
        store = self.client.add_gmail_labels if add else self.client.remove_gmail_labels
        accepted = True
        for batch in uid_batches(uids):
            self.changes_sent = True
            if not _accepted(store, batch, labels, silent=True):
                accepted = False  # the other batches still go: the caller reads every message back
        return accepted

    def change_flags(self, uids: list[int], flags: list[str], *, add: bool) -> bool:
        if not flags:
            return True
        store = self.client.add_flags if add else self.client.remove_flags
        accepted = True
        for batch in uid_batches(uids):
            self.changes_sent = True
            if not _accepted(store, batch, flags, silent=True):
                accepted = False
        return accepted

    def fetch_all(self, items: list[str]) -> dict[int, Fetched]:
        """Every message of the open folder: one SEARCH ALL and one FETCH (an empty folder costs nothing)."""
        if not self._exists:
            return {}
        return self.fetch(self.search(["ALL"]), items)

    def fetch_parts(self, uid: int, part_ids: list[str]) -> dict[str, bytes]:
        """Several body parts of one message in one FETCH."""
        if not part_ids:
            return {}
        answer = self.client.fetch([uid], [f"BODY.PEEK[{p}]" for p in part_ids]).get(uid) or {}
        found: dict[str, bytes] = {}
        for part_id in part_ids:
            value = answer.get(f"BODY[{part_id}]".encode())
            if value is not None:
                found[part_id] = bytes(value)
        return found

    def fetch_same_part(self, uids: list[int], part_id: str) -> dict[int, bytes]:
        """The same body part of many messages in one FETCH (BODY.PEEK: never sets \\Seen)."""
        if not uids:
            return {}
        answer = self.client.fetch(uids, [f"BODY.PEEK[{part_id}]"])
        key = f"BODY[{part_id}]".encode()
        found: dict[int, bytes] = {}
        for uid, data in answer.items():
            value = data.get(key)
            if value is not None:
                found[int(uid)] = bytes(value)
        return found

    def append(self, special: str, data: bytes, flags: list[str], when: datetime | None) -> int | None:
        """APPEND to a special folder; the new UID from APPENDUID, or None when Gmail gave none."""
        path = self.folder(special)
        self.changes_sent = True
        answer = self.client.append(path, data, flags=flags, msg_time=when)
        match = _APPENDUID.search(_text(answer))
        return int(match.group(2)) if match else None

    def move(self, uids: list[int], special: str) -> bool:
        """UID MOVE to a special folder (Gmail advertises MOVE only after login); False when refused."""
        target = self.folder(special)
        self.changes_sent = True
        return _accepted(self.client.move, uids, target)

    def fetch_beginnings(self, uids: list[int], sections: dict[str, int]) -> dict[int, dict[str, bytes]]:
        """The first bytes of body parts of many messages in one FETCH (BODY.PEEK[part]<0.n>).

        Every message is asked for every section; a part a message lacks comes back NIL (absent)."""
        if not uids or not sections:
            return {}
        items = [f"BODY.PEEK[{part}]<0.{size}>" for part, size in sorted(sections.items())]
        answer = self.client.fetch(uids, items)
        found: dict[int, dict[str, bytes]] = {}
        for uid, data in answer.items():
            got: dict[str, bytes] = {}
            for part in sections:
                value = data.get(f"BODY[{part}]<0>".encode(), data.get(f"BODY[{part}]".encode()))
                if isinstance(value, bytes | bytearray):
                    got[part] = bytes(value)
            found[int(uid)] = got
        return found

    def fetch_part_slice(self, uid: int, part_id: str, start: int, length: int) -> bytes | None:
        """At most `length` encoded bytes of a body part from `start` on (BODY.PEEK[part]<start.length>)."""
        answer = self.client.fetch([uid], [f"BODY.PEEK[{part_id}]<{start}.{length}>"])
        data = answer.get(uid)
        if not data:
            return None
        value = data.get(f"BODY[{part_id}]<{start}>".encode())
        return bytes(value) if value is not None else None

    def fetch_part(self, uid: int, part_id: str) -> bytes | None:
        """The raw bytes of one body part (BODY.PEEK: reading never sets \\Seen)."""
        answer = self.client.fetch([uid], [f"BODY.PEEK[{part_id}]"])
        data = answer.get(uid)
        if not data:
            return None
        value = data.get(f"BODY[{part_id}]".encode())
        return bytes(value) if value is not None else None


_CLIENT_CLASS: type[IMAPClient] | None = None


def _client_class() -> type[IMAPClient]:
    """IMAPClient without the CAPABILITY that imaplib sends before LOGIN.

    Gmail's greeting carries no capabilities, and its LOGIN answer carries all of them (imapclient
    asks after LOGIN if an answer ever lacks them). Asking before LOGIN cost a round trip per call
    for nothing this client uses before it is logged in."""
    global _CLIENT_CLASS
    if _CLIENT_CLASS is None:
        from imapclient import IMAPClient, tls

        class _NoEarlyCapability(tls.IMAP4_TLS):  # type: ignore[misc]
            # Told when Gmail throttles: a successful answer that ends in " [THROTTLED]".
            on_throttled: Callable[[str], None] | None = None

            def _get_capabilities(self) -> None:
                self.capabilities = ("IMAP4REV1",)  # what imaplib checks before it lets us log in

            def _command_complete(self, name: str, tag: Any) -> Any:
                typ, data = super()._command_complete(name, tag)
                said = self.on_throttled
                if typ == "OK" and said is not None and any(_THROTTLED in _upper(item) for item in data or ()):
                    said(name)
                return typ, data

        class _Client(IMAPClient):  # type: ignore[misc]
            def _create_IMAP4(self) -> Any:
                connect_timeout = getattr(self._timeout, "connect", None)
                return _NoEarlyCapability(self.host, self.port, self.ssl_context, connect_timeout)

        _CLIENT_CLASS = _Client
    return _CLIENT_CLASS


def _upper(item: object) -> bytes:
    return bytes(item).upper() if isinstance(item, bytes | bytearray) else b""


def _log_throttling(client: IMAPClient, account: str) -> None:
    """Say on stderr (once per session) that Gmail throttles the mailbox; the call itself goes on."""
    told = False

    def said(command: str) -> None:
        nonlocal told
        if not told:
            told = True
            logger.warning(
                'schránka "%s": Gmail ji teď brzdí (odpověď na %s končila „%s“), nejspíš po velkém provozu přes '
                "IMAP. Volání se povedlo, jen odpovědi chodí pomaleji.",
                account,
                command,
                THROTTLED,
            )

    imap = getattr(client, "_imap", None)
    if imap is not None and hasattr(type(imap), "on_throttled"):
        imap.on_throttled = said


def _connect(endpoint: Endpoint, *, early_capability: bool = False) -> IMAPClient:
    """`early_capability`: ask CAPABILITY before LOGIN as imaplib does (the probe reports that answer)."""
    from imapclient import IMAPClient
    from imapclient.imapclient import SocketTimeout

    client_class = IMAPClient if early_capability else _client_class()
    client = client_class(
        endpoint.imap_host,
        port=endpoint.imap_port,
        ssl=True,
        ssl_context=endpoint.tls_context(),
        timeout=SocketTimeout(connect=deadline.remaining(CONNECT_TIMEOUT_S), read=deadline.remaining(READ_TIMEOUT_S)),
    )
    client.normalise_times = False  # keep INTERNALDATE's own offset; we convert to UTC ourselves
    # imapclient writes a SEARCH line and its CRLF separately; with Nagle's algorithm on, the CRLF
    # then waits for the server's delayed ACK (~40 ms per SEARCH on Linux). Send at once instead.
    with contextlib.suppress(OSError, AttributeError):
        client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client


@contextmanager
def open_session(
    account: str, address: str, password: str, endpoint: Endpoint, folders: SpecialFolders | None = None
) -> Iterator[ImapSession]:
    """Connect and log in; always log out (or drop the socket) afterwards. `folders`: where the
    mailbox's special folders are remembered across sessions (None: looked up in each session)."""
    with OPEN.held():
        yield from _open_session(account, address, password, endpoint, folders)


def _open_session(
    account: str, address: str, password: str, endpoint: Endpoint, folders: SpecialFolders | None
) -> Iterator[ImapSession]:
    from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

    try:
        client = _connect(endpoint)
    except (OSError, ssl.SSLError, IMAPClientError) as error:
        raise network_error(account, error) from None
    progress = deadline.current()
    sock = client.socket()
    session: ImapSession | None = None
    _log_throttling(client, account)
    try:
        if not OPEN.track(sock):
            raise ConnectionAbortedError("the server is shutting down")  # its client has gone
        if progress is not None and not progress.register(sock):
            raise TimeoutError("the call's deadline passed")  # abandoned while connecting
        _login(client, account, address, password)
        # Cache the capabilities Gmail sent with the login answer now: EXAMINE flushes imaplib's
        # untagged responses, and a later check would cost an extra CAPABILITY round trip.
        client.capabilities()
        key = (endpoint.imap_host, endpoint.imap_port, address.casefold())
        session = ImapSession(client, account, (folders, key) if folders is not None else None)
        yield session
        OPEN.answered(sock)
    except MailError:
        raise
    except IMAPClientAbortError as error:
        changed = session is not None and session.changes_sent
        said = bye_refused(account, _gmail_reason(error), changed=changed)  # Gmail's BYE may say why
        raise (said or network_error(account, error, changed=changed)) from None
    except (TimeoutError, OSError, ssl.SSLError) as error:
        raise network_error(account, error, changed=session is not None and session.changes_sent) from None
    except IMAPClientError as error:
        changed = session is not None and session.changes_sent
        raise command_refused(account, _gmail_reason(error), changed=changed) from None
    finally:
        if session is not None and session.dead:
            with contextlib.suppress(Exception):
                client.shutdown()
        else:
            _close(client)
        OPEN.untrack(sock)
        if progress is not None:
            progress.unregister(sock)


def _login(client: IMAPClient, account: str, address: str, password: str) -> None:
    from imapclient.exceptions import IMAPClientAbortError, LoginError

    try:
        client.login(address, password)
    except LoginError as error:
        # imapclient wraps a connection dropped during LOGIN in LoginError too: that is the
        # network, not a refused password, and must stay retryable (unless Gmail's BYE said why).
        if isinstance(error.__context__, IMAPClientAbortError | OSError):
            said = bye_refused(account, _gmail_reason(error.__context__))
            if said is not None:
                raise said from None
            raise network_error(account, error.__context__) from None
        refused = login_refused(account, _gmail_reason(error), web_alert=_web_alert(client))
        if too_many_connections(_gmail_reason(error)):
            raise TooManyConnections(refused) from None
        raise refused from None


def _web_alert(client: IMAPClient) -> bool:
    """Whether Gmail sent `* NO [WEBALERT <url>] Web login required.` before refusing the login
    (imaplib files the response code under its own name)."""
    untagged = getattr(getattr(client, "_imap", None), "untagged_responses", None) or {}
    if "WEBALERT" in untagged:
        return True
    return any("WEBALERT" in _text(line).upper() for line in untagged.get("NO", []))


def _close(client: IMAPClient) -> None:
    # A LOGOUT is still owed to Gmail (a dropped socket counts against its connection limit), but
    # nobody waits for it any more: a silent server must not keep the worker for the full read timeout.
    with contextlib.suppress(Exception):
        client.socket().settimeout(LOGOUT_TIMEOUT_S)
    try:
        client.logout()
    except Exception:  # noqa: BLE001 - closing is best effort: whatever LOGOUT raised, the socket still goes
        with contextlib.suppress(Exception):
            client.shutdown()


# Sessions whose answer is out but whose LOGOUT is still under way (see finish_logouts).
_LOGGING_OUT: set[asyncio.Future[None]] = set()


async def run_session(
    account: str,
    address: str,
    password: str,
    endpoint: Endpoint,
    work: Callable[[ImapSession], T],
    *,
    connections: Connections | None = None,
    max_connections: int = 4,
) -> T:
    """Run `work` inside one IMAP session on a worker thread, within the mailbox's connection cap.

    Waiting for a free slot counts against the call's deadline. When Gmail still refuses the login
    for too many connections (other clients hold them), wait a jittered moment and try once more.
    """
    pool = connections if connections is not None else _default_connections()
    gate = pool.gate(f"{endpoint.imap_host}:{endpoint.imap_port}:{address}", max_connections)
    for attempt in (1, 2):
        try:
            return await _one_session(pool, gate, account, address, password, endpoint, work)
        except TooManyConnections as refused:
            if attempt == 2:
                raise MailError(
                    "upstream_error",
                    f"{refused.message} (Tried twice, a few seconds apart. This server itself opens at most "
                    f"{max_connections} connections to the mailbox at once: max_connections in the settings.)",
                    retryable=True,
                ) from None
        deadline.note(f'waiting to log in again to mailbox "{account}" (Gmail: too many connections)')
        await anyio.sleep(random.uniform(*TOO_MANY_BACKOFF_S))
    raise AssertionError("unreachable")


async def _one_session(
    pool: Connections,
    gate: Gate,
    account: str,
    address: str,
    password: str,
    endpoint: Endpoint,
    work: Callable[[ImapSession], T],
) -> T:
    deadline.note(f'waiting for a free connection to mailbox "{account}" ({gate.busy} of {gate.cap} in use)')
    await gate.acquire()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if answer.done():  # the caller gave up (a deadline): nobody is listening any more
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value)  # type: ignore[arg-type]

    def report(value: T | None, error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone (process shutting down)
            loop.call_soon_threadsafe(settle, value, error)

    def in_thread() -> None:
        try:
            deadline.note(f'working with mailbox "{account}" over IMAP')
            with open_session(account, address, password, endpoint, pool.special_folders) as session:
                # The answer goes back now; the LOGOUT and the close follow on this thread.
                report(work(session), None)
        except BaseException as error:  # noqa: BLE001 - handed to the caller, never lost in the worker
            report(None, error)
        finally:
            gate.release()  # only now is the connection really closed

    async def in_pool() -> None:
        try:
            # Cancelled before a thread took the work: the slot was never handed over, give it back here.
            await pool.run(in_thread, on_skipped=gate.release)
        except asyncio.CancelledError:
            settle(None, asyncio.CancelledError())
            raise

    closing = asyncio.ensure_future(in_pool())
    _LOGGING_OUT.add(closing)
    closing.add_done_callback(_LOGGING_OUT.discard)
    try:
        return await answer
    except asyncio.CancelledError:
        closing.cancel()  # work no thread has taken yet never runs; a running one is abandoned
        raise


async def finish_logouts(timeout: float = LOGOUT_TIMEOUT_S + 1.0) -> None:
    """Wait (at most `timeout` seconds) until every session handed back has logged out."""
    loop = asyncio.get_running_loop()
    pending = [task for task in _LOGGING_OUT if not task.done() and task.get_loop() is loop]
    if pending:
        await asyncio.wait(pending, timeout=timeout)


_DEFAULT: Connections | None = None


def _default_connections() -> Connections:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Connections()
    return _DEFAULT


def verify_login(account: str, address: str, password: str, endpoint: Endpoint) -> None:
    with open_session(account, address, password, endpoint):
        pass
