"""Wire encodings for the IMAP front: modified UTF-7 (RFC 3501 §5.1.3), strings, labels, flags, dates."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone

__all__ = [
    "decode_mutf7",
    "encode_mutf7",
    "format_internaldate",
    "imap_astring",
    "imap_nstring",
    "imap_quoted",
    "label_wire",
    "literal",
    "parse_internaldate",
]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_NUMBER = {name.upper(): i + 1 for i, name in enumerate(_MONTHS)}
# Characters that may stand in a bare IMAP atom (we are stricter than RFC 3501 with "[" and "]",
# as Gmail quotes "[foobar]").
_ATOM = re.compile(r"^[!#$&'+,\-./0-9:;<=>?@A-Z^_`a-z|~]+$")
_LITERAL_OVER = 1000
_NEEDS_LITERAL = re.compile(rb"[\x00\r\n\x80-\xff]")


# --------------------------------------------------------------------------- modified UTF-7


def _b64_encode(run: str) -> str:
    data = run.encode("utf-16-be")
    return base64.b64encode(data).decode("ascii").rstrip("=").replace("/", ",")


def encode_mutf7(text: str) -> str:
    """Modified UTF-7 as used for IMAP mailbox names: `Übung` -> `&ANw-bung`, `R&D` -> `R&-D`."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append("&" + _b64_encode("".join(run)) + "-")
            run.clear()

    for ch in text:
        if 0x20 <= ord(ch) <= 0x7E:
            flush()
            out.append("&-" if ch == "&" else ch)
        else:
            run.append(ch)
    flush()
    return "".join(out)


def decode_mutf7(text: str) -> str:
    """Inverse of `encode_mutf7`; raises ValueError on a malformed shift sequence."""
    if "&" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "&":
            out.append(ch)
            i += 1
            continue
        end = text.find("-", i + 1)
        if end < 0:
            raise ValueError("unterminated modified UTF-7 shift")
        chunk = text[i + 1 : end]
        if not chunk:
            out.append("&")
        else:
            padded = chunk.replace(",", "/") + "=" * (-len(chunk) % 4)
            try:
                out.append(base64.b64decode(padded, validate=True).decode("utf-16-be"))
            except ValueError as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors
                raise ValueError("bad modified UTF-7") from exc
        i = end + 1
    return "".join(out)


# --------------------------------------------------------------------------- strings


def imap_quoted(value: str | bytes) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    return b'"' + data.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def literal(data: bytes) -> bytes:
    return b"{%d}\r\n" % len(data) + data


def imap_astring(value: str) -> bytes:
    """An atom where legal, else a quoted string, else a literal (CR/LF/NUL)."""
    if any(c in value for c in "\r\n\0"):
        return literal(value.encode("utf-8"))
    if _ATOM.match(value) and value.upper() != "NIL":
        return value.encode("ascii")
    return imap_quoted(value)


def imap_nstring(value: bytes | None) -> bytes:
    """IMAP nstring: NIL, a quoted string, or a literal when quoting is impossible or unwise."""
    if value is None:
        return b"NIL"
    if len(value) > _LITERAL_OVER or _NEEDS_LITERAL.search(value):
        return literal(value)
    return imap_quoted(value)


def label_wire(label: str, *, utf8: bool) -> bytes:
    """One X-GM-LABELS entry: system labels quoted with the backslash escaped (`"\\\\Inbox"`),
    user labels as atoms where legal, modified UTF-7 unless UTF8=ACCEPT is on."""
    if label.startswith("\\"):
        return imap_quoted(label)
    return imap_astring(label if utf8 else encode_mutf7(label))


def labels_wire(labels: Iterable[str], *, utf8: bool) -> bytes:
    system = sorted(lb for lb in labels if lb.startswith("\\"))
    user = sorted((lb for lb in labels if not lb.startswith("\\")), key=str.casefold)
    return b"(" + b" ".join(label_wire(lb, utf8=utf8) for lb in system + user) + b")"


# --------------------------------------------------------------------------- dates


_FLAG_ORDER = ("\\Answered", "\\Flagged", "\\Draft", "\\Deleted", "\\Seen")


def flags_wire(flags: Iterable[str]) -> bytes:
    present = set(flags)
    ordered = [f for f in _FLAG_ORDER if f in present] + sorted(present - set(_FLAG_ORDER))
    return b"(" + " ".join(ordered).encode("utf-8", errors="replace") + b")"


def format_internaldate(when: datetime) -> bytes:
    """`"17-Jul-1996 02:44:25 +0000"` (always UTC, as Gmail answers)."""
    utc = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return b'"%02d-%s-%04d %02d:%02d:%02d +0000"' % (
        utc.day,
        _MONTHS[utc.month - 1].encode(),
        utc.year,
        utc.hour,
        utc.minute,
        utc.second,
    )


_DATE_TIME = re.compile(r"^\s*(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\s*$")


def parse_internaldate(text: str) -> datetime:
    """Parse an APPEND date-time (`"02-Jan-2026 03:04:05 +0000"`); ValueError if malformed."""
    m = _DATE_TIME.match(text)
    if not m:
        raise ValueError(f"bad date-time {text!r}")
    day, mon, year, hh, mm, ss, sign, oh, om = m.groups()
    month = _MONTH_NUMBER.get(mon.upper())
    if month is None:
        raise ValueError(f"bad month {mon!r}")
    offset = timedelta(hours=int(oh), minutes=int(om))
    tz = timezone(offset if sign == "+" else -offset)
    return datetime(int(year), month, int(day), int(hh), int(mm), int(ss), tzinfo=tz).astimezone(UTC)
