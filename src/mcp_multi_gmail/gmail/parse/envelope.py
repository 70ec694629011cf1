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


def bare_id(value: str | bytes | None) -> str | None:
    """A Message-ID without surrounding whitespace and one pair of angle brackets; "" → None.

    Not cleaned: the id is a lookup key and must stay byte-for-byte what the header says.
    """
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    text = text.strip()
    if text.startswith("<"):
        text = text[1:]
    if text.endswith(">"):
        text = text[:-1]
    return text.strip() or None


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


def addresses(items: Iterable[Any] | None) -> list[Address]:
    """Addresses of one ENVELOPE address list; group start/end markers (no host) are skipped."""
    if items is None or isinstance(items, (bytes, str)):
        return []
    try:
        entries = list(items)
    except TypeError:
        return []
    found: list[Address] = []
    for item in entries:
        host = atom_text(_member(item, "host", 3))
        if host is None:
            continue  # RFC 3501 group syntax: "undisclosed-recipients:;" etc.
        mailbox = atom_text(_member(item, "mailbox", 2))
        name = decode_words(atom_raw(_member(item, "name", 0)))
        domain = host.strip().lower()
        address = _visible(f"{mailbox.strip()}@{domain}") if mailbox and domain else None
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
