"""Gmail semantics of IMAP actions, shared by IMAP, SMTP and the controller (BEHAVIOURS.md;
https://developers.google.com/gmail/imap/imap-extensions).

Folders are views over labels: COPY adds a label, MOVE swaps labels, Trash and Spam are a
message's location, EXPUNGE removes the folder's label (or deletes for good in Trash, Spam and
Drafts).  Nothing here knows about sessions or sequence numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .mime import ParsedMessage
from .store import (
    DRAFT,
    FLAG_ANSWERED,
    FLAG_DELETED,
    FLAG_DRAFT,
    FLAG_FLAGGED,
    FLAG_SEEN,
    IMPORTANT,
    INBOX,
    SENT,
    STARRED,
    Account,
    Folder,
    Location,
    Message,
    StoreError,
    bare_id,
)

__all__ = [
    "SPAM_LABEL",
    "TRASH_LABEL",
    "Op",
    "Reported",
    "append",
    "canonical_flag",
    "copy_to",
    "expunge",
    "has_label",
    "move_to",
    "resolve_label",
    "store_flags",
    "store_labels",
    "visible_labels",
]

Op = Literal["+", "-", ""]  # add, remove, replace
TRASH_LABEL = "\\Trash"
SPAM_LABEL = "\\Spam"
_LOCATION_LABELS: dict[str, Location] = {TRASH_LABEL.lower(): "trash", SPAM_LABEL.lower(): "spam"}
_SYSTEM_NAMES = {
    "\\inbox": INBOX,
    "inbox": INBOX,
    "\\sent": SENT,
    "\\draft": DRAFT,
    "\\drafts": DRAFT,
    "\\important": IMPORTANT,
    "\\starred": STARRED,
    "\\trash": TRASH_LABEL,
    "\\spam": SPAM_LABEL,
}
_SYSTEM_FLAGS = {f.lower(): f for f in (FLAG_SEEN, FLAG_ANSWERED, FLAG_FLAGGED, FLAG_DELETED, FLAG_DRAFT)}


@dataclass(frozen=True)
class Reported:
    """A message's labels and flags after a STORE, as the client is told (applied or not)."""

    labels: frozenset[str]
    flags: frozenset[str]


# --------------------------------------------------------------------------- names


def has_label(labels: Iterable[str], label: str) -> bool:
    if label.startswith("\\"):
        return label in labels
    wanted = label.casefold()
    return any(lb.casefold() == wanted for lb in labels)


def _without(labels: Iterable[str], label: str) -> frozenset[str]:
    if label.startswith("\\"):
        return frozenset(lb for lb in labels if lb != label)
    wanted = label.casefold()
    return frozenset(lb for lb in labels if lb.casefold() != wanted)


def visible_labels(labels: frozenset[str], folder: Folder | None) -> frozenset[str]:
    """X-GM-LABELS as FETCH shows them: the selected folder's own label is left out."""
    own = folder.label if folder is not None else None
    return labels if own is None else _without(labels, own)


def canonical_flag(name: str) -> str | None:
    """A flag as the client wrote it -> stored spelling; None for flags that cannot be stored."""
    lowered = name.lower()
    if lowered in _SYSTEM_FLAGS:
        return _SYSTEM_FLAGS[lowered]
    if name.startswith("\\") or not name:
        return None  # \Recent, \* and unknown system flags
    return name


def resolve_label(account: Account, name: str, *, create: bool) -> str | None:
    """A label as the client wrote it -> stored spelling, \\Trash/\\Spam for the locations.

    Unknown user labels follow `knobs.unknown_label_policy` when `create` is true (create it,
    ignore it, or raise NONEXISTENT); otherwise they resolve to None.
    """
    system = _SYSTEM_NAMES.get(name.lower())
    if system is not None:
        return system
    if name.startswith("\\"):
        return None
    existing = account.canonical_label(name)
    if existing is not None:
        return existing
    if not create:
        return None
    policy = account.store.knobs.unknown_label_policy
    if policy == "ignore":
        return None
    if policy == "no":
        raise StoreError("NONEXISTENT", f"Unknown Mailbox: {name} (Failure)")
    return account.create_label(name)


# --------------------------------------------------------------------------- STORE


def store_flags(
    account: Account,
    folder: Folder | None,
    msgs: Sequence[Message],
    op: Op,
    flags: Iterable[str],
    *,
    check_applies: bool = True,
) -> dict[int, Reported]:
    """`STORE ±FLAGS`: returns msgid -> reported state.  With `auto_expunge`, messages that got
    `\\Deleted` are expunged from `folder` right away (Gmail's default)."""
    wanted = frozenset(f for f in (canonical_flag(x) for x in flags) if f is not None)
    reported: dict[int, Reported] = {}
    deleted: list[Message] = []
    for msg in msgs:
        if op == "+":
            new = msg.flags | wanted
        elif op == "-":
            new = msg.flags - wanted
        else:
            new = wanted
        labels = msg.labels
        if (FLAG_FLAGGED in new) != (FLAG_FLAGGED in msg.flags):
            labels = labels | {STARRED} if FLAG_FLAGGED in new else labels - {STARRED}
        reported[msg.msgid] = Reported(labels, new)
        if check_applies and not account.store_applies(msg):
            continue
        if new != msg.flags:
            account.set_flags(msg, new)
        if FLAG_DELETED in new:
            deleted.append(msg)
    if folder is not None and deleted and account.store.knobs.auto_expunge:
        expunge(account, folder, deleted)
    return reported


def store_labels(
    account: Account,
    folder: Folder | None,
    msgs: Sequence[Message],
    op: Op,
    names: Iterable[str],
    *,
    check_applies: bool = True,
) -> dict[int, Reported]:
    """`STORE ±X-GM-LABELS`: returns msgid -> reported state.

    Removing the selected folder's own label is silently a no-op; `\\Trash`/`\\Spam` move the
    message to that location (and removing them brings it back).
    """
    resolved: list[str] = []
    for name in names:
        label = resolve_label(account, name, create=op != "-")
        if label is not None and label not in resolved:
            resolved.append(label)
    locations = [lb for lb in resolved if lb.lower() in _LOCATION_LABELS]
    plain = [lb for lb in resolved if lb not in locations]
    own = folder.label if folder is not None else None

    reported: dict[int, Reported] = {}
    for msg in msgs:
        labels, location = _stored(msg, op, plain, locations, own)
        new = frozenset(labels)
        flags = msg.flags
        if (STARRED in new) != (STARRED in msg.labels):
            flags = flags | {FLAG_FLAGGED} if STARRED in new else flags - {FLAG_FLAGGED}
        reported[msg.msgid] = Reported(new, flags)
        if check_applies and not account.store_applies(msg):
            continue
        if new != msg.labels:
            account.set_labels(msg, new)
        if location != msg.location:
            account.set_location(msg, location)
    return reported


def _stored(msg: Message, op: Op, plain: list[str], locations: list[str], own: str | None) -> tuple[set[str], Location]:
    """The labels and location `msg` has after the STORE (`own`: the selected folder's label)."""
    labels = set(msg.labels)
    location: Location = msg.location
    if op == "+":
        labels |= set(plain)
        if locations:
            location = _LOCATION_LABELS[locations[-1].lower()]
    elif op == "-":
        for lb in plain:
            if own is None or not has_label([lb], own):
                labels = set(_without(labels, lb))
        if any(_LOCATION_LABELS[lb.lower()] == msg.location for lb in locations):
            location = "normal"
    else:
        labels = set(plain)
        if own is not None and has_label(msg.labels, own) and not has_label(labels, own):
            labels |= {lb for lb in msg.labels if has_label([lb], own)}
        if locations:
            location = _LOCATION_LABELS[locations[-1].lower()]
    return labels, location


# --------------------------------------------------------------------------- COPY / MOVE


def _file_into(account: Account, msg: Message, dst: Folder) -> None:
    if dst.kind in ("trash", "spam"):
        if msg.location != dst.kind:
            account.set_location(msg, "trash" if dst.kind == "trash" else "spam")
        if dst.kind == "trash" and not account.store.knobs.trash_keeps_labels:
            # The user labels and the Inbox go; system labels (\\Sent, \\Starred, \\Important) stay.
            kept = frozenset(lb for lb in msg.labels if lb.startswith("\\") and lb != INBOX)
            if kept != msg.labels:
                account.set_labels(msg, kept)
        return
    if msg.location != "normal":
        account.set_location(msg, "normal")  # out of Trash/Spam: restored
    label = dst.label
    if label is not None and not has_label(msg.labels, label):
        account.set_labels(msg, msg.labels | {label})


def copy_to(account: Account, msgs: Sequence[Message], dst: Folder) -> None:
    """COPY: adds the destination's label (Trash/Spam: moves the message there)."""
    for msg in msgs:
        _file_into(account, msg, dst)


def move_to(account: Account, msgs: Sequence[Message], src: Folder, dst: Folder) -> None:
    """MOVE: adds the destination's label and removes the source's; Trash/Spam set the location."""
    if src.name == dst.name:
        return
    for msg in msgs:
        _file_into(account, msg, dst)
        own = src.label
        keep = own is None or dst.kind in ("trash", "spam") or own == dst.label
        if not keep and own is not None and has_label(msg.labels, own):
            account.set_labels(msg, _without(msg.labels, own))


# --------------------------------------------------------------------------- EXPUNGE


def _last_folder(account: Account, msg: Message) -> None:
    """Apply `expunge_behavior` to a message expunged from its last visible folder."""
    behaviour = account.store.knobs.expunge_behavior
    if behaviour == "trash":
        account.set_location(msg, "trash")
    elif behaviour == "delete":
        account.remove_message(msg)


def expunge(account: Account, folder: Folder, msgs: Sequence[Message]) -> None:
    """Expunge `msgs` from `folder` the Gmail way (the caller picks the \\Deleted ones).

    INBOX: archive (remove \\Inbox); a label folder: remove the label; Trash, Spam and Drafts:
    delete forever; All Mail: per `expunge_behavior`.
    """
    for msg in msgs:
        if msg.msgid not in account.messages:
            continue
        if folder.kind in ("trash", "spam", "drafts"):
            account.remove_message(msg)
            continue
        if msg.flags & {FLAG_DELETED}:
            account.set_flags(msg, msg.flags - {FLAG_DELETED})
        if folder.kind == "all":
            _last_folder(account, msg)
            continue
        label = folder.label
        if label is not None and has_label(msg.labels, label):
            account.set_labels(msg, _without(msg.labels, label))
        if not msg.labels:
            _last_folder(account, msg)


# --------------------------------------------------------------------------- APPEND


def _folder_placement(folder: Folder) -> tuple[list[str], Location]:
    if folder.kind == "trash":
        return [], "trash"
    if folder.kind == "spam":
        return [], "spam"
    label = folder.label
    return ([label] if label is not None else []), "normal"


def append(
    account: Account,
    folder: Folder,
    raw: bytes,
    flags: Iterable[str] = (),
    internaldate: datetime | None = None,
) -> Message:
    """APPEND: the folder decides labels/location; a future or pre-1970 date becomes now.

    Drafts get the \\Draft label and lose the \\Draft flag (unless `draft_flag_visible`); with
    `merge_similar_sent`, an APPEND to Sent of a "similar" message (same Message-ID and Date)
    replaces the earlier copy.
    """
    knobs = account.store.knobs
    now = account.store.now()
    when = internaldate
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=now.tzinfo)
    if when is None or when > now or when.year < 1970:
        when = now
    stored_flags = {f for f in (canonical_flag(x) for x in flags) if f is not None}
    labels, location = _folder_placement(folder)
    if folder.kind == "drafts" and not knobs.draft_flag_visible:
        stored_flags.discard(FLAG_DRAFT)
    if folder.kind == "sent" and knobs.merge_similar_sent:
        _drop_similar_sent(account, ParsedMessage(raw))
    return account.add_message(raw, labels=labels, flags=stored_flags, internaldate=when, location=location)


def _drop_similar_sent(account: Account, parsed: ParsedMessage) -> None:
    mid = parsed.message_id
    if not mid:
        return
    for other in account.find_by_header_id(bare_id(mid)):
        if SENT in other.labels and other.location == "normal" and other.parsed.date == parsed.date:
            account.remove_message(other)
