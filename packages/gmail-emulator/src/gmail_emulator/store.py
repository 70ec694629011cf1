"""The emulator's mailboxes: one message, many label views, per-view UIDs.

Everything here runs on the emulator's event-loop thread; the controller marshals calls from
other threads onto it, so nothing in this module takes a lock.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from .knobs import Knobs
from .mime import HeaderEnd, ParsedMessage
from .oauth import GoogleSignIn

Location = Literal["normal", "spam", "trash"]

INBOX = "\\Inbox"
SENT = "\\Sent"
DRAFT = "\\Draft"
IMPORTANT = "\\Important"
STARRED = "\\Starred"
SYSTEM_LABELS = (INBOX, SENT, DRAFT, IMPORTANT, STARRED)
_SYSTEM_BY_LOWER = {name.lower(): name for name in SYSTEM_LABELS}
# The name forms clients send for system labels besides "\\Inbox" itself.
_SYSTEM_ALIASES = {"\\drafts": DRAFT, "\\starred": STARRED}

FLAG_SEEN = "\\Seen"
FLAG_FLAGGED = "\\Flagged"
FLAG_DELETED = "\\Deleted"
FLAG_DRAFT = "\\Draft"
FLAG_ANSWERED = "\\Answered"


# Reply and forward prefixes as mail clients write them in several languages ("Re:", "Fwd:", "AW:"…),
# possibly repeated or numbered ("Re[2]:"); the subject that threads is what is left after them.
_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|fw|fwd|aw|wg|sv|vs|odp|tr|rv|antw|atb)(?:\[\d+\])?\s*:\s*)+", re.I)


def bare_id(header_id: str) -> str:
    """A Message-ID as the store keeps it: without angle brackets and surrounding spaces."""
    return header_id.strip().strip("<>").strip()


def thread_subject(subject: str) -> str:
    """The subject as threading compares it: without reply/forward prefixes, spaces collapsed, case-folded."""
    return " ".join(_SUBJECT_PREFIX.sub("", subject or "").split()).casefold()


class StoreError(Exception):
    """A refusal the IMAP layer turns into a tagged NO with Gmail's response code."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code  # e.g. "ALREADYEXISTS", "NONEXISTENT", "CANNOT"
        self.text = text


@dataclass(frozen=True)
class IndexState:
    """What Gmail's search index believes about a message at some moment (X-GM-RAW sees this)."""

    parsed: ParsedMessage
    labels: frozenset[str]
    flags: frozenset[str]
    location: str
    internaldate: datetime


class Message:
    """One Gmail message. Labels and flags belong to the message, not to a folder."""

    def __init__(
        self,
        *,
        msgid: int,
        thrid: int,
        raw: bytes,
        internaldate: datetime,
        labels: Iterable[str],
        flags: Iterable[str],
        location: Location,
        arrival: int,
        header_end: HeaderEnd = "non_field",
    ) -> None:
        self.msgid = msgid
        self.thrid = thrid
        self.parsed = ParsedMessage(raw, header_end)
        self.raw = self.parsed.raw
        self.size = len(self.raw)
        self.internaldate = internaldate
        self.labels: frozenset[str] = frozenset(labels)
        self.flags: frozenset[str] = frozenset(flags)
        self.location: Location = location
        self.arrival = arrival
        # Labels and flags as the message arrived (knob raw_search_stale_state searches these).
        self.arrived: tuple[frozenset[str], frozenset[str]] = (self.labels, self.flags)
        self.modseq = 1
        # (time of change, state) pairs; the search index reads the newest one old enough.
        self.history: list[tuple[float, IndexState]] = []

    @property
    def header_id(self) -> str | None:
        """Message-ID without angle brackets."""
        mid = self.parsed.message_id
        return bare_id(mid) if mid else None

    def state(self) -> IndexState:
        return IndexState(self.parsed, self.labels, self.flags, self.location, self.internaldate)

    def indexed(self, now: float, lag: float, *, stale_state: bool = False) -> IndexState | None:
        """The search index's view of this message, `lag` seconds behind reality; with `stale_state`
        its labels and flags are those it arrived with (knob raw_search_stale_state)."""
        seen: IndexState | None = None
        if lag <= 0:
            seen = self.state()
        else:
            horizon = now - lag
            for stamp, state in self.history:
                if stamp <= horizon:
                    seen = state
                else:
                    break
        if seen is not None and stale_state:
            seen = replace(seen, labels=self.arrived[0], flags=self.arrived[1])
        return seen

    def settle(self) -> None:
        """Index the current state at once: a seeded message stands for mail that has been there a while."""
        self.history = [(float("-inf"), self.state())]

    def record(self, now: float, lag: float) -> None:
        # Without lag a state is indexed at once; stamping it "always" means a lag switched on
        # later delays only the changes made after that, not mail that was already there.
        self.history.append((now if lag > 0 else float("-inf"), self.state()))
        # Keep only the newest entry older than the lag horizon plus everything after it.
        horizon = now - max(lag, 0.0)
        keep_from = 0
        for i, (stamp, _state) in enumerate(self.history):
            if stamp <= horizon:
                keep_from = i
        del self.history[:keep_from]


FolderKind = Literal["inbox", "label", "all", "sent", "drafts", "starred", "important", "trash", "spam"]

_SPECIAL_KIND: dict[str, FolderKind] = {
    "\\All": "all",
    "\\Drafts": "drafts",
    "\\Important": "important",
    "\\Sent": "sent",
    "\\Junk": "spam",
    "\\Flagged": "starred",
    "\\Trash": "trash",
}
_KIND_LABEL: dict[FolderKind, str] = {
    "inbox": INBOX,
    "sent": SENT,
    "drafts": DRAFT,
    "starred": STARRED,
    "important": IMPORTANT,
}


@dataclass
class Folder:
    """A view over the account's messages, with its own UIDVALIDITY and UID sequence."""

    name: str
    kind: FolderKind
    uidvalidity: int
    special: str | None = None  # special-use attribute, e.g. "\\All"
    user_label: str | None = None  # for kind "label"
    uidnext: int = 1
    uid_of: dict[int, int] = field(default_factory=dict)  # msgid -> uid, in uid order
    # (account version, members) of the last sync: every IMAP command syncs its view twice, and
    # recomputing a 20 000-message view each time cost ~0.2 s per sync.
    synced: tuple[int, list[tuple[int, Message]]] | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str | None:
        """The label this folder stands for (omitted from FETCH X-GM-LABELS inside it)."""
        if self.kind == "label":
            return self.user_label
        return _KIND_LABEL.get(self.kind)

    def contains(self, msg: Message) -> bool:
        if self.kind == "trash":
            return msg.location == "trash"
        if self.kind == "spam":
            return msg.location == "spam"
        if msg.location != "normal":
            return False
        if self.kind == "all":
            return True
        label = self.label
        if label is None:
            return False
        if self.kind == "label":
            return label.casefold() in {lb.casefold() for lb in msg.labels}
        return label in msg.labels


class Account:
    def __init__(self, store: Store, address: str, password: str) -> None:
        self.store = store
        self.address = address
        self.password = password
        self.messages: dict[int, Message] = {}
        self.user_labels: dict[str, str] = {}  # casefolded -> display name
        self.folders: dict[str, Folder] = {}
        self.modseq = 1
        self.version = 0  # bumped by every change (changed()); views are recomputed only then
        self.listeners: list[Callable[[], None]] = []
        self._uidvalidity = 1
        self._build_system_folders()

    # ----------------------------------------------------------------- folders

    def _next_uidvalidity(self) -> int:
        self._uidvalidity += 1
        return self._uidvalidity

    def _build_system_folders(self) -> None:
        self.folders = {"INBOX": Folder("INBOX", "inbox", 1)}
        for special, name in self.store.knobs.folder_names.items():
            self.folders[name] = Folder(name, _SPECIAL_KIND[special], self._next_uidvalidity(), special)

    def special_root(self) -> str:
        """The \\Noselect parent of the special folders, e.g. "[Gmail]"."""
        any_name = next(iter(self.store.knobs.folder_names.values()))
        return any_name.split("/", 1)[0]

    def folder(self, name: str) -> Folder | None:
        if name.upper() == "INBOX":
            return self.folders["INBOX"]
        found = self.folders.get(name)
        if found is None:
            key = self.user_labels.get(name.casefold())
            found = self.folders.get(key) if key else None
        return found

    def list_entries(self) -> list[tuple[tuple[str, ...], str]]:
        """(attributes, name) for LIST, in Gmail's order: INBOX, labels, [Gmail] tree."""
        names = set(self.folders)
        # every ancestor of a nested name ("a/b/c" -> "a/b" and "a"), not just the nearest one
        parents = {n.rsplit("/", i)[0] for n in names for i in range(1, n.count("/") + 1)}
        entries: list[tuple[tuple[str, ...], str]] = [(("\\HasNoChildren",), "INBOX")]
        for name in sorted(self.user_labels.values(), key=str.casefold):
            children = "\\HasChildren" if name in parents else "\\HasNoChildren"
            entries.append(((children,), name))
        for parent in sorted(p for p in parents if p not in names and p != self.special_root()):
            entries.append((("\\Noselect", "\\HasChildren"), parent))
        entries.append((("\\Noselect", "\\HasChildren"), self.special_root()))
        for folder in sorted(self.folders.values(), key=lambda f: f.name):
            if folder.special:
                entries.append((("\\HasNoChildren", folder.special), folder.name))
        return entries

    def is_reserved(self, name: str) -> bool:
        root = self.special_root()
        return name.upper() == "INBOX" or name == root or name.startswith(root + "/")

    def create_label(self, name: str) -> str:
        name = name.strip("/")
        if not name:
            raise StoreError("CANNOT", "Invalid folder name (Failure)")
        if self.is_reserved(name) or name.casefold() in self.user_labels:
            raise StoreError("ALREADYEXISTS", f"Duplicate folder name {name} (Failure)")
        self.user_labels[name.casefold()] = name
        self.folders[name] = Folder(name, "label", self._next_uidvalidity(), user_label=name)
        self.changed()
        return name

    def delete_label(self, name: str) -> None:
        folder = self.folder(name)
        if folder is None or folder.kind != "label":
            if folder is None:
                raise StoreError("NONEXISTENT", f"Unknown Mailbox: {name} (Failure)")
            raise StoreError("CANNOT", f"Cannot delete system folder {name} (Failure)")
        assert folder.user_label is not None
        gone = folder.user_label.casefold()
        del self.folders[folder.name]
        del self.user_labels[gone]
        for msg in self.messages.values():
            kept = frozenset(lb for lb in msg.labels if lb.casefold() != gone)
            if kept != msg.labels:
                msg.labels = kept
                self._touch(msg)
        self.changed()

    def rename_label(self, old: str, new: str) -> None:
        folder = self.folder(old)
        if folder is None:
            raise StoreError("NONEXISTENT", f"Unknown Mailbox: {old} (Failure)")
        if folder.kind != "label" or folder.user_label is None:
            raise StoreError("CANNOT", f"Cannot rename system folder {old} (Failure)")
        new = new.strip("/")
        if (
            not new
            or self.is_reserved(new)
            or (new.casefold() in self.user_labels and new.casefold() != old.casefold())
        ):
            raise StoreError("ALREADYEXISTS", f"Duplicate folder name {new} (Failure)")
        old_label = folder.user_label
        del self.folders[folder.name]
        del self.user_labels[old_label.casefold()]
        self.user_labels[new.casefold()] = new
        self.folders[new] = Folder(new, "label", self._next_uidvalidity(), user_label=new)
        for msg in self.messages.values():
            if any(lb.casefold() == old_label.casefold() for lb in msg.labels):
                msg.labels = frozenset(new if lb.casefold() == old_label.casefold() else lb for lb in msg.labels)
                self._touch(msg)
        self.changed()

    def sync(self, folder: Folder) -> list[tuple[int, Message]]:
        """Current members of a view as (uid, message), assigning UIDs to newcomers.

        A message that leaves a view loses its UID there; coming back gives it a new one.
        """
        if folder.synced is not None and folder.synced[0] == self.version:
            return list(folder.synced[1])
        current = {m.msgid: m for m in self.messages.values() if folder.contains(m)}
        for msgid in [mid for mid in folder.uid_of if mid not in current]:
            del folder.uid_of[msgid]
        for msg in sorted(current.values(), key=lambda m: m.arrival):
            if msg.msgid not in folder.uid_of:
                folder.uid_of[msg.msgid] = folder.uidnext
                folder.uidnext += 1
        members = sorted(((uid, current[mid]) for mid, uid in folder.uid_of.items()), key=lambda p: p[0])
        folder.synced = (self.version, members)
        return list(members)

    # ----------------------------------------------------------------- messages

    def add_message(
        self,
        raw: bytes,
        *,
        labels: Iterable[str] = (),
        flags: Iterable[str] = (),
        internaldate: datetime | None = None,
        location: Location = "normal",
    ) -> Message:
        """Store a message as Gmail does on arrival: msgid from the date, thread from its headers."""
        when = internaldate or self.store.now()
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        msgid = self.store.new_msgid(when)
        labels = [self.canonical_label(lb, create=True) or lb for lb in labels]
        flags = set(flags)
        if STARRED in labels:
            flags.add(FLAG_FLAGGED)
        elif FLAG_FLAGGED in flags:
            labels.append(STARRED)
        msg = Message(
            msgid=msgid,
            thrid=msgid,
            raw=raw,
            internaldate=when.astimezone(UTC),
            labels=labels,
            flags=flags,
            location=location,
            arrival=self.store.next_arrival(),
            header_end=self.store.knobs.header_end,
        )
        msg.thrid = self._thread_of(msg) or msgid
        if self.store.knobs.thread_labels_on_replies and msg.thrid != msgid:
            msg.labels = msg.labels | frozenset(self._thread_labels(msg.thrid))
        self.messages[msgid] = msg
        self._touch(msg)
        self.changed()
        return msg

    def _thread_labels(self, thrid: int) -> list[str]:
        """The user labels every message of the thread carries (system labels start with a backslash)."""
        members = [m for m in self.messages.values() if m.thrid == thrid and m.location == "normal"]
        common = set.intersection(*(set(m.labels) for m in members)) if members else set()
        return sorted(lb for lb in common if not lb.startswith("\\"))

    def _thread_of(self, msg: Message) -> int | None:
        parsed = msg.parsed
        wanted = []
        if parsed.in_reply_to:
            wanted.append(parsed.in_reply_to)
        wanted.extend(reversed(parsed.references))
        by_subject = self.store.knobs.thread_by_subject
        topic = thread_subject(parsed.subject) if by_subject else ""
        for ref in wanted:
            key = bare_id(ref)
            for other in self.messages.values():
                if other.header_id != key or other.msgid == msg.msgid:
                    continue
                # Gmail also wants the subject to match, reply and forward prefixes aside.
                if by_subject and thread_subject(other.parsed.subject) != topic:
                    continue
                return other.thrid
        return None

    def remove_message(self, msg: Message) -> None:
        self.messages.pop(msg.msgid, None)
        self.changed()

    def find_by_header_id(self, header_id: str) -> list[Message]:
        return [m for m in self.messages.values() if m.header_id == header_id]

    def snapshot(self) -> dict[str, Any]:
        """Comparable deep state: the user labels and every message (ids, labels, flags, place, bytes' hash)."""
        msgs = sorted(self.messages.values(), key=lambda m: m.arrival)
        return {
            "user_labels": sorted(self.user_labels.values(), key=str.casefold),
            "messages": [
                {
                    "msgid": m.msgid,
                    "thrid": m.thrid,
                    "header_id": m.header_id,
                    "labels": sorted(m.labels),
                    "flags": sorted(m.flags),
                    "location": m.location,
                    "internaldate": m.internaldate.isoformat(),
                    "sha256": hashlib.sha256(m.raw).hexdigest(),
                }
                for m in msgs
            ],
        }

    def canonical_label(self, name: str, *, create: bool = False) -> str | None:
        """Map a label name as a client wrote it to the stored spelling (system or user)."""
        lowered = name.lower()
        if lowered in _SYSTEM_BY_LOWER:
            return _SYSTEM_BY_LOWER[lowered]
        if lowered in _SYSTEM_ALIASES:
            return _SYSTEM_ALIASES[lowered]
        if name.startswith("\\"):
            return name
        existing = self.user_labels.get(name.casefold())
        if existing is not None:
            return existing
        if create:
            return self.create_label(name)
        return None

    def set_labels(self, msg: Message, labels: Iterable[str]) -> None:
        new = frozenset(labels)
        starred_before = STARRED in msg.labels
        msg.labels = new
        if (STARRED in new) != starred_before:
            # Gmail couples the star label and the \Flagged flag.
            msg.flags = msg.flags | {FLAG_FLAGGED} if STARRED in new else msg.flags - {FLAG_FLAGGED}
        self._touch(msg)
        self.changed()

    def set_flags(self, msg: Message, flags: Iterable[str]) -> None:
        new = frozenset(flags)
        flagged_before = FLAG_FLAGGED in msg.flags
        msg.flags = new
        if (FLAG_FLAGGED in new) != flagged_before:
            msg.labels = msg.labels | {STARRED} if FLAG_FLAGGED in new else msg.labels - {STARRED}
        self._touch(msg)
        self.changed()

    def set_location(self, msg: Message, location: Location) -> None:
        msg.location = location
        self._touch(msg)
        self.changed()

    def store_applies(self, msg: Message) -> bool:
        """False when the knob says Gmail accepts this STORE but does not apply it."""
        knobs = self.store.knobs
        if msg.header_id and msg.header_id in knobs.store_not_applied_ids:
            knobs.store_not_applied_ids.discard(msg.header_id)
            return False
        return not (knobs.store_not_applied_fraction and self.store.rng.random() < knobs.store_not_applied_fraction)

    def _touch(self, msg: Message) -> None:
        self.modseq += 1
        msg.modseq = self.modseq
        msg.record(self.store.clock(), self.store.knobs.raw_search_lag_s)

    def changed(self) -> None:
        self.version += 1
        for listener in list(self.listeners):
            listener()


class Store:
    def __init__(self, knobs: Knobs | None = None, clock: Callable[[], float] = time.time) -> None:
        self.knobs = knobs or Knobs()
        self.clock = clock
        self.accounts: dict[str, Account] = {}
        # Sign-in with OAuth (XOAUTH2), when a test or the demo started its endpoints (oauth_http).
        self.google: GoogleSignIn | None = None
        self.rng = random.Random(1234)
        self._counter = 0
        self._arrival = 0

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def new_msgid(self, when: datetime) -> int:
        # Gmail's msgid carries the internal date in milliseconds above 20 low bits.
        self._counter += 1
        millis = max(int(when.timestamp() * 1000), 0)
        return (millis << 20) | (self._counter & 0xFFFFF)

    def next_arrival(self) -> int:
        self._arrival += 1
        return self._arrival

    def add_account(self, address: str, password: str, labels: Iterable[str] = ()) -> Account:
        account = Account(self, address, password)
        self.accounts[address.lower()] = account
        for label in labels:
            account.create_label(label)
        return account

    def account(self, address: str) -> Account | None:
        return self.accounts.get(address.lower())
