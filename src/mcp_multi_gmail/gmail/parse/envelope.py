"""Message-IDs, ENVELOPE address lists and the ENVELOPE itself (RFC 3501 section 7.4.2)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...domain import Address
from ...text import is_hidden
from .charsets import atom_raw, atom_text
from .encoded_words import decode_words


def _visible(text: str) -> str:
    """Like `clean`, but marks hidden characters with U+FFFD instead of deleting them.

    Used for addresses: deleting a zero-width space from "ceo\u200b@example.com" would make a
    look-alike indistinguishable from the real address, and it would then match allow-lists.
    """
    if text.isascii():
        return text
    return "".join("\ufffd" if is_hidden(ch) else ch for ch in text)


_ANGLE_ID = re.compile(r"<[^<>]*>")
# A quoted string (kept whole), a comment or a run of whitespace (both dropped): RFC 5322's CFWS.
_QUOTED_OR_CFWS = re.compile(r'"(?:[^"\\]|\\.)*"?|\((?:[^()\\]|\\.)*\)|\s+')


def _unspaced(text: str) -> str:
    """`text` without comments and whitespace outside quoted strings: RFC 5322's obsolete id syntax
    allows both between the words of an id ("<1234 @ local(blah) .machine .example>"), and
    neither is part of it (RFC 5322 section 3.6.4, 4.5.4)."""
    return _QUOTED_OR_CFWS.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)


def bare_id(value: str | bytes | None) -> str | None:
    """The one form of a Message-ID (or Content-ID) this server shows and accepts: the first
    `<…>` of the value without its angle brackets (a value without brackets as it is), and no
    comments or whitespace outside quoted strings; "" → None. The same rule reads the header, ENVELOPE and a
    caller's argument, so every id shown is accepted back and names the same message.

    Not cleaned: the id is a lookup key and must stay what the header says, spacing aside.
    """
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    match = _ANGLE_ID.search(text)
    if match:
        text = match.group(0)[1:-1]
    else:
        text = text.strip()
        text = text[1:] if text.startswith("<") else text
        text = text[:-1] if text.endswith(">") else text
    return _unspaced(text) or None


# A message whose header has no Message-ID (only imported mail lacks one; BEHAVIOURS.md "A message
# without a Message-ID") is shown, and accepted back, under Gmail's own id of it, X-GM-MSGID.
# RFC 5322 ids always hold an "@", so no conforming id takes this form.
GMAIL_ID_PREFIX = "gmail-msgid-"
_GMAIL_ID = re.compile(r"gmail-msgid-([0-9]{1,20})", re.IGNORECASE)


def gmail_id(msgid: int) -> str:
    """The id shown for a message without a Message-ID: GMAIL_ID_PREFIX and its X-GM-MSGID."""
    return f"{GMAIL_ID_PREFIX}{msgid}"


def gmail_msgid_of(bare: str) -> int | None:
    """The X-GM-MSGID a shown id of the `gmail_id` form names, or None for any other id."""
    match = _GMAIL_ID.fullmatch(bare)
    value = int(match.group(1)) if match else None
    return value if value is not None and 0 < value < 2**64 else None


_ID_WORD = re.compile(r'[^\s"\\@.<>()\[\]]+')


def raw_searchable(bare: str) -> bool:
    """Whether an id fits X-GM-RAW's quoted phrase `rfc822msgid:"…"`: no quote, backslash or
    whitespace (a quoted id such as `"a b"@host` does not)."""
    return not any(ch in '"\\' or ch.isspace() for ch in bare)


def header_fragment(bare: str) -> str:
    """The longest word of an id (between its dots, @, quotes and brackets) that the header holds
    verbatim whatever spacing it had, and that needs no quoting inside a search: a header search
    for it finds every candidate, and the candidates' ids (read by `bare_id`) tell which is meant."""
    words = _ID_WORD.findall(bare)
    return max(words, key=len) if words else ""  # nothing to search by


def _first_id(value: object) -> str | None:
    """The first id of an In-Reply-To / References value (which may list several)."""
    text = atom_text(value)
    if text is None:
        return None
    match = _ANGLE_ID.search(text)
    if match:
        return bare_id(match.group(0))
    words = text.split()
    return bare_id(words[0]) if words else None


def _member(item: object, name: str, index: int) -> object:
    if hasattr(item, name):
        return getattr(item, name)
    if isinstance(item, (tuple, list)) and len(item) > index:
        return item[index]
    return None


def _group_start(entries: list[Any], index: int) -> bool:
    """Whether the host-less entry at `index` opens a group (RFC 3501: NIL host, the group's name
    as mailbox), not a mailbox without a domain: a group's end marker (NIL mailbox and host)
    follows before any other such entry."""
    for item in entries[index + 1 :]:
        if atom_text(_member(item, "host", 3)) is None:
            return atom_text(_member(item, "mailbox", 2)) is None
    return False


def addresses(items: Iterable[Any] | None) -> list[Address]:
    """Addresses of one ENVELOPE address list; group start/end markers are skipped. A mailbox
    without a domain ("nsb (Nathaniel Borenstein)") keeps its name, and has no address."""
    if items is None or isinstance(items, (bytes, str)):
        return []
    try:
        entries = list(items)
    except TypeError:
        return []
    found: list[Address] = []
    for index, item in enumerate(entries):
        host = atom_text(_member(item, "host", 3))
        mailbox = atom_text(_member(item, "mailbox", 2))
        if host is None and (mailbox is None or _group_start(entries, index)):
            continue  # RFC 3501 group syntax: "undisclosed-recipients:;" etc.
        name = decode_words(atom_raw(_member(item, "name", 0)))
        domain = (host or "").strip().lower()
        local = (mailbox or "").strip()
        address = _visible(f"{local}@{domain}") if local and domain else None
        if address is None and not name and local:
            name = decode_words(local)  # the mailbox is all the header names
        if address is None and not name:
            continue
        found.append(Address(name=name or None, address=address))
    return found


@dataclass(frozen=True)
class EnvelopeInfo:
    """The parts of ENVELOPE the service layer uses, decoded and cleaned."""

    date: datetime | None = None  # Date header, aware UTC
    subject: str | None = None
    from_: Address | None = None  # first From address
    to: list[Address] = field(default_factory=list)
    cc: list[Address] = field(default_factory=list)
    bcc: list[Address] = field(default_factory=list)
    message_id: str | None = None  # bare (no angle brackets)
    in_reply_to: str | None = None  # bare, first id only


def _utc(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    # The session sets normalise_times=False, so a naive value is a Date header without a zone:
    # read it as UTC, like INTERNALDATE.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def envelope_info(env: Any | None) -> EnvelopeInfo:
    """Decode imapclient's `Envelope` (or None) into an `EnvelopeInfo`."""
    if env is None:
        return EnvelopeInfo()
    senders = addresses(getattr(env, "from_", None))
    subject = getattr(env, "subject", None)
    return EnvelopeInfo(
        date=_utc(getattr(env, "date", None)),
        subject=decode_words(atom_raw(subject)),
        from_=senders[0] if senders else None,
        to=addresses(getattr(env, "to", None)),
        cc=addresses(getattr(env, "cc", None)),
        bcc=addresses(getattr(env, "bcc", None)),
        message_id=bare_id(atom_text(getattr(env, "message_id", None))),
        in_reply_to=_first_id(getattr(env, "in_reply_to", None)),
    )
