"""The logged-in IMAP session: one class that keeps the connection's state (the folder list,
the open folder, whether a change went out) and speaks for one mailbox in one tool call.

Its methods come by subject: folders, search, fetch, IDLE, writes. Connecting and logging in are
in `login`, the FETCH-answer model in `answers`, line batching in `batches`, and what a refusal
means in `failures`.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ... import deadline
from ...errors import MailError
from ..parse.envelope import gmail_id, gmail_msgid_of, header_fragment, raw_searchable
from ..refusals import is_transient
from ..special_folders import MailboxKey, SpecialFolders
from .answers import Fetched, fetched, first_part_item, text
from .batches import IDS_PER_SEARCH, header_term, id_batches, uid_batches, uid_set
from .failures import accepted, gmail_reason, raise_if_it_stops_the_call

# A spaced Message-ID's longest word found in more headers than this is too common to read them all.
SPACED_CANDIDATES = 200

if TYPE_CHECKING:
    from imapclient import IMAPClient

ALL_MAIL = "\\All"
DRAFTS = "\\Drafts"
SENT = "\\Sent"
TRASH = "\\Trash"
_SPECIAL_USE = {"\\All", "\\Archive", "\\Drafts", "\\Flagged", "\\Important", "\\Junk", "\\Sent", "\\Trash"}
_FOLDER_WORDS = {ALL_MAIL: "all-mail", DRAFTS: "drafts", SENT: "sent", TRASH: "trash"}

_APPENDUID = re.compile(r"APPENDUID (\d+) (\d+)", re.IGNORECASE)


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
        self._view: tuple[str, int, int, int] | None = None  # see view_stamp
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

    # ------------------------------------------------------------------ folders

    def all_folders(self) -> list[tuple[str, str | None, bool]]:
        """(path, special-use flag or None, selectable) for every folder, from one LIST per session."""
        if self._listing is None:
            listing: list[tuple[str, str | None, bool]] = []
            for flags, _delimiter, name in self.client.list_folders():
                names = [text(flag) for flag in flags]
                special = next((f for f in names if f in _SPECIAL_USE), None)
                selectable = not any(f.lower() in ("\\noselect", "\\nonexistent") for f in names)
                listing.append((text(name), special, selectable))
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

    def labels_under(self, parent: str) -> list[str] | None:
        """The labels nested under `parent` (one LIST "" "parent/*"; the folder list stays as it was);
        None when Gmail refuses the LIST (unless the refusal ends the whole call)."""
        found: list[str] = []

        def listed() -> None:
            found.extend(text(name) for _flags, _delimiter, name in self.client.list_folders("", f"{parent}/*"))

        return found if accepted(listed) else None

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
            self._opened(path, answer)
            self._selected = (path, writable)
        return path

    def examine(self, path: str) -> int:
        """EXAMINE any folder by its path (a label's own view); how many messages it shows."""
        answer = self.client.select_folder(path, readonly=True)
        self._opened(path, answer)
        self._selected = (path, False)
        return self._exists

    def _opened(self, path: str, answer: dict[bytes, Any]) -> None:
        self._exists = int(answer.get(b"EXISTS", 0) or 0)
        stamp = [answer.get(key) for key in (b"UIDVALIDITY", b"UIDNEXT", b"HIGHESTMODSEQ")]
        self._view = (path, *stamp) if all(isinstance(n, int) for n in stamp) else None  # type: ignore[assignment]

    @property
    def view_stamp(self) -> tuple[str, int, int, int] | None:
        """(path, UIDVALIDITY, UIDNEXT, HIGHESTMODSEQ) of the open folder from its SELECT/EXAMINE answer,
        None when the answer lacked one. While it stays the same, no message has come into the
        folder (UIDNEXT, RFC 3501 section 2.3.1.1) and none has changed (HIGHESTMODSEQ, RFC 7162
        section 3.1.2.1), so a search there finds what it found before."""
        return self._view

    @property
    def exists(self) -> int:
        """Messages in the open folder, from its SELECT/EXAMINE answer."""
        return self._exists

    # ------------------------------------------------------------------ search

    def search_raw(self, query: str) -> list[int]:
        """UID SEARCH X-GM-RAW: Gmail's own search syntax, non-ASCII sent as a UTF-8 literal."""
        # imapclient quotes a string only when it holds a space or a quote, so a one-word query such
        # as "(is:unread)" went out as an atom, which cannot carry ( ) { % * ] (RFC 3501 section 9):
        # Gmail answered BAD. A trailing space makes it a quoted string; Gmail's search ignores it.
        return sorted(int(u) for u in self.client.gmail_search(query if " " in query else f"{query} "))

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
            criteria = "OR " * (len(batch) - 1) + " ".join(header_term(bare) for bare in batch)
            found.update(int(u) for u in self.client.search(criteria))  # a string goes out as written
        for bare in bare_ids:
            if not bare.isascii() and bare.isprintable():
                found.update(self.search(["HEADER", "Message-ID", f"<{bare}>"]))  # as a UTF-8 literal
        return sorted(found)

    def search_header(self, field: str, value: str) -> list[int] | None:
        """UID SEARCH HEADER <field> "<value>" (a substring of that field, RFC 3501 section 6.4.4);
        None when Gmail refuses it. Whether Gmail searches every field so is not documented: a
        caller reads the fields of what it finds, and copes with finding nothing."""
        found: list[int] = []
        if not accepted(lambda: found.extend(self.search(["HEADER", field, value]))):
            return None
        return found

    def search_message_id(self, bare: str) -> list[int]:
        """UIDs of one Message-ID (in the form parse.envelope.bare_id gives) in the open folder.

        The shown id of a message without a Message-ID (parse.envelope.gmail_id) is asked by its
        X-GM-MSGID. Else X-GM-RAW first (one command when it knows the message, and when its quoted
        phrase can hold the id); Gmail's search index lags behind new mail, so a miss is asked once more by the
        header itself, and then by the header's words for an id written with spaces or comments."""
        msgid = gmail_msgid_of(bare)
        return (
            (self.search_gmail_msgid(msgid) if msgid is not None else [])
            or (self.search_raw(f'rfc822msgid:"{bare}"') if raw_searchable(bare) else [])
            or self.search_header_ids([bare])
            or self.search_spaced_ids([bare])
        )

    def search_spaced_ids(self, bare_ids: list[str]) -> list[int]:
        """Messages whose header writes one of these ids with spaces or comments between its words
        (RFC 5322's obsolete syntax, "<1234 @ host (x)>"), which neither X-GM-RAW nor the exact
        header search matches: a header search for the id's longest word, and each candidate's
        ENVELOPE id read by the one Message-ID rule (parse.envelope.bare_id) decides. A word that
        matches more than SPACED_CANDIDATES messages is too common to be worth reading."""
        wanted = {bare.casefold() for bare in bare_ids}
        candidates: set[int] = set()
        for bare in bare_ids:
            fragment = header_fragment(bare)
            found = self.search(["HEADER", "Message-ID", fragment]) if fragment else []
            if len(found) <= SPACED_CANDIDATES:
                candidates.update(found)
        return sorted(
            uid
            for uid, item in self.fetch(sorted(candidates), ["ENVELOPE"]).items()
            if item.envelope is not None and (item.envelope.message_id or "").casefold() in wanted
        )

    def search_gmail_msgid(self, msgid: int) -> list[int]:
        """UID SEARCH X-GM-MSGID: Gmail's own id of one message, answered without the search index."""
        return self.search(["X-GM-MSGID", msgid])

    def search_gmail_msgids(self, msgids: list[int]) -> list[int]:
        """UIDs of many messages by Gmail's own id, OR-grouped IDS_PER_SEARCH to a command."""
        found: set[int] = set()
        ordered = sorted(set(msgids))
        for start in range(0, len(ordered), IDS_PER_SEARCH):
            batch = ordered[start : start + IDS_PER_SEARCH]
            criteria = "OR " * (len(batch) - 1) + " ".join(f"X-GM-MSGID {msgid}" for msgid in batch)
            found.update(int(u) for u in self.client.search(criteria))
        return sorted(found)

    def _by_message_id(self, uids: list[int]) -> dict[str, list[Fetched]]:
        found: dict[str, list[Fetched]] = {}
        for item in self.fetch(uids, ["ENVELOPE", "X-GM-THRID", "X-GM-LABELS", "FLAGS"]).values():
            key = item.envelope.message_id if item.envelope else None
            if key is not None:
                found.setdefault(key.casefold(), []).append(item)
            shown = gmail_id(item.gmail_msgid) if item.gmail_msgid is not None else None
            if shown is not None and shown != key:  # also by its Gmail id
                found.setdefault(shown, []).append(item)
        return found

    def find_message_ids(self, bare_ids: list[str]) -> dict[str, list[Fetched]]:
        """The copies of many Message-IDs: an X-GM-RAW OR-group and a FETCH (per IDS_PER_SEARCH ids).

        Ids the search index does not know yet (it lags behind new mail) are looked for once more by
        their header, in one more search and FETCH, so that cost is paid only on a miss. Keys are the
        ids as the envelopes carry them, case-folded (Gmail matches them that way), and each
        message's Gmail id (parse.envelope.gmail_id), which its X-GM-MSGID finds."""
        if not bare_ids:
            return {}
        uids: set[int] = set()
        gmail_ids = {bare: gmail_msgid_of(bare) for bare in bare_ids}
        for msgid in {m for m in gmail_ids.values() if m is not None}:  # rare: one SEARCH each
            uids.update(self.search_gmail_msgid(msgid))
        # An id X-GM-RAW's quoted phrase cannot hold (a quote, a space) goes by its header only.
        for batch in id_batches([bare for bare, msgid in gmail_ids.items() if msgid is None and raw_searchable(bare)]):
            terms = " ".join(f'rfc822msgid:"{bare}"' for bare in batch)
            uids.update(self.search_raw(f"{{{terms}}}" if len(batch) > 1 else terms))
        found = self._by_message_id(sorted(uids))
        for search in (self.search_header_ids, self.search_spaced_ids):
            missing = [bare for bare in bare_ids if bare.casefold() not in found]
            if not missing:
                break
            late = [uid for uid in search(missing) if uid not in uids]
            uids.update(late)
            for key, items in self._by_message_id(late).items():
                found.setdefault(key, []).extend(items)
        return found

    # ------------------------------------------------------------------ fetch

    def fetch(self, uids: list[int], items: list[str]) -> dict[int, Fetched]:
        """UID FETCH of a whole set: one command per UIDS_PER_COMMAND messages, never one per message."""
        found: dict[int, Fetched] = {}
        if "ENVELOPE" in items and "X-GM-MSGID" not in items:  # the shown id of a message without one
            items = [*items, "X-GM-MSGID"]
        for batch in uid_batches(uids):
            answer = self.client.fetch(batch, items)  # imapclient keeps only the listed UIDs of the answer
            found.update((int(uid), fetched(int(uid), data)) for uid, data in answer.items())
        return found

    def fetch_with_first_part(self, uids: list[int], items: list[str], length: int) -> dict[int, Fetched]:
        """`fetch` with the first `length` octets of every message's part 1 in the same command
        (Fetched.first_part), which is most often the text part; a refused FETCH is asked once
        more without them."""
        found: dict[int, Fetched] = {}
        if accepted(lambda: found.update(self.fetch(uids, [*items, first_part_item(length)]))):
            return found
        return self.fetch(uids, items)

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
        return self._fetch_one(uid, f"BODY.PEEK[{part_id}]<{start}.{length}>", f"BODY[{part_id}]<{start}>")

    def fetch_part(self, uid: int, part_id: str) -> bytes | None:
        """The raw bytes of one body part (BODY.PEEK: reading never sets \\Seen)."""
        return self._fetch_one(uid, f"BODY.PEEK[{part_id}]", f"BODY[{part_id}]")

    def _fetch_one(self, uid: int, asked: str, answered: str) -> bytes | None:
        """One item of one message (`asked` as sent, `answered` as the server names it back)."""
        data = self.client.fetch([uid], [asked]).get(uid)
        value = data.get(answered.encode()) if data else None
        return bytes(value) if value is not None else None

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
            raise_if_it_stops_the_call(error)
            if is_transient(gmail_reason(error)):
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
                said = " ".join(text(part) for part in response[1:])
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

    # ------------------------------------------------------------------ writes

    def create_label(self, name: str) -> bool:
        """CREATE a label; False when Gmail says it exists already ([ALREADYEXISTS] is success)."""
        from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

        self.changes_sent = True
        try:
            self.client.create_folder(name)
        except IMAPClientAbortError:
            raise
        except IMAPClientError as error:
            if "ALREADYEXISTS" in gmail_reason(error).upper():
                return False
            raise
        self._listing = None
        return True

    def delete_label(self, name: str) -> bool:
        """DELETE a label (Gmail takes it off every message); False when Gmail refuses."""
        self.changes_sent = True
        done = accepted(self.client.delete_folder, name)
        self._listing = None
        return done

    def change_labels(self, uids: list[int], labels: list[str], *, add: bool) -> bool:
        """UID STORE ±X-GM-LABELS.SILENT; False when Gmail refuses (the caller reads back anyway)."""
        store = self.client.add_gmail_labels if add else self.client.remove_gmail_labels
        all_accepted = True
        for batch in uid_batches(uids):
            self.changes_sent = True
            if not accepted(store, uid_set(batch), labels, silent=True):
                all_accepted = False  # the other batches still go: the caller reads every message back
        return all_accepted

    def change_flags(self, uids: list[int], flags: list[str], *, add: bool) -> bool:
        if not flags:
            return True
        store = self.client.add_flags if add else self.client.remove_flags
        all_accepted = True
        for batch in uid_batches(uids):
            self.changes_sent = True
            if not accepted(store, uid_set(batch), flags, silent=True):
                all_accepted = False
        return all_accepted

    def append(self, special: str, data: bytes, flags: list[str], when: datetime | None) -> int | None:
        """APPEND to a special folder; the new UID from APPENDUID, or None when Gmail gave none."""
        path = self.folder(special)
        self.changes_sent = True
        answer = self.client.append(path, data, flags=flags, msg_time=when)
        match = _APPENDUID.search(text(answer))
        return int(match.group(2)) if match else None

    def expunge(self, uids: list[int]) -> None:
        """UID EXPUNGE (RFC 4315): remove these messages of the open folder once marked \\Deleted."""
        self.changes_sent = True
        self.client.expunge(uids)

    def move(self, uids: list[int], special: str) -> bool:
        """UID MOVE to a special folder, or to "INBOX" (Gmail advertises MOVE only after login); False when refused."""
        target = "INBOX" if special == "INBOX" else self.folder(special)
        self.changes_sent = True
        return accepted(self.client.move, uids, target)
