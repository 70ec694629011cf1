"""What imapclient hands back: the model of one message's FETCH answer, and text out of its atoms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..parse.bodystructure import Part
    from ..parse.envelope import EnvelopeInfo

# imapclient and the parser are imported at the first answer, not at start-up: the server
# answers `initialize` before any mailbox is touched.

# Gmail's verdict and the delivery trace that shows Gmail wrote it (see parse.authresults.authentication).
AUTH_FIELDS = "AUTHENTICATION-RESULTS ARC-AUTHENTICATION-RESULTS RECEIVED RECEIVED-SPF"
AUTH_HEADER = f"BODY.PEEK[HEADER.FIELDS ({AUTH_FIELDS})]"
_AUTH_KEY = f"BODY[HEADER.FIELDS ({AUTH_FIELDS})]".encode()


def header_fields_item(names: tuple[str, ...]) -> str:
    """The FETCH item for these header fields only, never the body (RFC 3501 section 6.4.5); its
    answer is `Fetched.auth_header`, the one HEADER.FIELDS answer a FETCH may ask for."""
    return f"BODY.PEEK[HEADER.FIELDS ({' '.join(names)})]"


def text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


_UNREAD: Any = object()  # an ENVELOPE answer not decoded yet


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
    parts: list[Part] | None = None
    auth_header: bytes | None = None  # the HEADER.FIELDS answer: Gmail's verdict (AUTH_HEADER) or other fields
    first_part: bytes | None = None  # the beginning of part 1, when asked for (first_part_item)
    # ENVELOPE as imapclient parsed it, decoded at the first read of `envelope`: a search reads
    # the envelopes of every match but shows those of its page only.
    envelope_answer: Any = field(default=_UNREAD, repr=False)
    _envelope: EnvelopeInfo | None = field(default=None, repr=False)

    @property
    def envelope(self) -> EnvelopeInfo | None:
        """The decoded ENVELOPE, or None when it was not asked for."""
        if self.envelope_answer is not _UNREAD:
            self._envelope = _decoded_envelope(self.envelope_answer, self.gmail_msgid)
            self.envelope_answer = _UNREAD
        return self._envelope


def first_part_item(length: int) -> str:
    """The FETCH item for the first `length` octets of part 1 (RFC 3501 section 6.4.5)."""
    return f"BODY.PEEK[1]<0.{length}>"


def _label(raw: object) -> str:
    from imapclient.imap_utf7 import decode as decode_utf7

    if isinstance(raw, bytes):
        return str(decode_utf7(raw))
    return str(raw)


def _aware(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@cache
def _readers() -> dict[bytes, tuple[str, Callable[[Any], object]]]:
    """FETCH item -> the Fetched field it fills and how its value is read (built at the first answer)."""
    from ..parse.bodystructure import parts

    return {
        b"X-GM-THRID": ("thread_id", int),
        b"X-GM-MSGID": ("gmail_msgid", int),
        b"INTERNALDATE": ("internaldate", _aware),
        b"X-GM-LABELS": ("labels", lambda raw: tuple(_label(x) for x in raw or ())),
        b"FLAGS": ("flags", lambda raw: tuple(text(x) for x in raw or ())),
        b"RFC822.SIZE": ("size", int),
        b"ENVELOPE": ("envelope_answer", lambda raw: raw),
        b"BODYSTRUCTURE": ("parts", parts),
    }


def _decoded_envelope(answer: Any, msgid: int | None) -> EnvelopeInfo:
    """The decoded ENVELOPE. A header without a Message-ID gets the one id the server shows for
    such a message (parse.envelope.gmail_id), so every listing names it and every tool finds it."""
    from ..parse.envelope import envelope_info, gmail_id

    envelope = envelope_info(answer)
    if envelope.message_id is None and msgid is not None:
        return replace(envelope, message_id=gmail_id(msgid))
    return envelope


def fetched(uid: int, data: dict[bytes, Any]) -> Fetched:
    """One message's FETCH answer (imapclient's dict of items) as a Fetched."""
    item = Fetched(uid=uid)
    for key, (name, read) in _readers().items():
        if key in data:
            setattr(item, name, read(data[key]))
    auth = data.get(_AUTH_KEY)
    if auth is None:  # a server may echo the field list in its own spelling
        auth = next((v for k, v in data.items() if bytes(k).upper().startswith(b"BODY[HEADER.FIELDS")), None)
    if auth is not None or _AUTH_KEY in data:
        item.auth_header = bytes(auth or b"")
    first = data.get(b"BODY[1]<0>", data.get(b"BODY[1]"))
    if isinstance(first, bytes | bytearray):
        item.first_part = bytes(first)
    return item
