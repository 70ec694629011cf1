"""Checks on tool arguments before anything reaches an IMAP command (bad input changes nothing)."""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, date, datetime

from ...errors import invalid_input
from ...gmail.parse.envelope import bare_id

# Characters that would end or split an IMAP command line, whatever quoting is used.
_LINE_BREAKERS = re.compile(r"[\x00\r\n]")
# Unpaired surrogates (invalid UTF-8 in the caller's JSON): they cannot be encoded for any command.
_SURROGATES = re.compile(r"[\ud800-\udfff]")
# RFC 5322 caps a header line at 998 characters, so no real Message-ID is longer.
MAX_MESSAGE_ID = 998


def no_line_breaks(what: str, value: str) -> str:
    if _LINE_BREAKERS.search(value):
        raise invalid_input(f"The {what} contains a line break or NUL character, which no mail command accepts.")
    if _SURROGATES.search(value):
        raise invalid_input(f"The {what} is not valid text: it contains unpaired surrogates (invalid UTF-8).")
    return value


def search_query(query: str) -> str:
    text = query.strip()
    if not text:
        raise invalid_input("The search query is empty. Give a Gmail search, for example from:someone newer_than:7d.")
    return no_line_breaks("search query", text)


def message_id(value: str) -> str:
    """A Message-ID in the one form the server shows (parse.envelope.bare_id): every id the server
    listed is accepted back. Quotes and backslashes are allowed (an id with them is looked up by its
    header, where IMAP's quoting holds them, never by X-GM-RAW); line breaks are not."""
    no_line_breaks("Message-ID", value)
    bare = bare_id(value)
    if not bare:
        raise invalid_input("An empty Message-ID cannot be looked up.")
    if len(bare) > MAX_MESSAGE_ID:
        raise invalid_input(
            f"<{bare[:60]}…> is not a Message-ID: it is {len(bare)} characters long, more than a mail header holds."
        )
    return bare


def thread_id(value: str) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 20 or int(text) >= 2**64:
        raise invalid_input(
            f'"{value[:40]}" is not a Gmail thread id. Thread ids are decimal numbers from mg_search_threads '
            "or mg_next_pass."
        )
    return int(text)


BODIES_CHOICES = ("none", "unprocessed", "all")


def bodies(value: str) -> str:
    """mg_get_thread's `bodies`: which messages come with a body window."""
    if value not in BODIES_CHOICES:
        shown = value[:40] if isinstance(value, str) else repr(value)
        raise invalid_input(
            f'bodies must be "none", "unprocessed" or "all", not "{shown}". "unprocessed" gives the bodies '
            'of the messages without the processed label, "all" every message\'s.'
        )
    return value


def attachment_id(value: str) -> str:
    text = value.strip()
    if not re.fullmatch(r"[1-9][0-9]{0,3}(\.[1-9][0-9]{0,3}){0,9}", text):
        raise invalid_input(
            f'"{value[:40]}" is not an attachment id. Attachment ids are part numbers such as "2" or "1.2" '
            "listed by mg_get_message."
        )
    return text


# ISO 8601: a date, or a date and time (`T` or a space) with or without seconds and an offset.
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?")
# RFC 2822 (RFC 5322 §3.3), as in a Date header: optional day name, day, month, four-digit year,
# time with or without seconds, a numeric zone or one of the obsolete zone names; a comment such
# as "(CET)" is allowed only after a zone: alone it would be silently read as UTC. Named zones
# outside this list would be too, so they are refused.
_RFC_ZONES = "UT|UTC|GMT|Z|EST|EDT|CST|CDT|MST|MDT|PST|PDT"
_RFC_2822 = re.compile(
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?"
    rf"(?:\s+(?:[+-]\d{{4}}|{_RFC_ZONES})(?:\s*\([^()]*\))?)?",
    re.IGNORECASE,
)
# The forms 1.5.0 also took (JavaScript's Date parsing): 2026/09/30, Sep 30 2026, 30 Sep 2026, each
# optionally with a time (seconds optional) and a zone. Unlike JavaScript, no zone means UTC here.
_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = r"(?P<month>[A-Za-z]{3,9})"
_DAY_NAME = r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?"
_CLOCK = r"(?:\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
_ZONE = r"(?:\s*(?P<zone>Z|UTC?|GMT|(?:UTC|GMT)?[+-]\d{2}:?\d{2})(?:\s*\([^()]*\))?)?"
_LOOSE = (
    re.compile(rf"(?P<year>\d{{4}})/(?P<mon>\d{{1,2}})/(?P<day>\d{{1,2}}){_CLOCK}{_ZONE}", re.IGNORECASE),
    re.compile(rf"{_DAY_NAME}{_MONTH}\s+(?P<day>\d{{1,2}}),?\s+(?P<year>\d{{4}}){_CLOCK}{_ZONE}", re.IGNORECASE),
    re.compile(rf"{_DAY_NAME}(?P<day>\d{{1,2}})\s+{_MONTH},?\s+(?P<year>\d{{4}}){_CLOCK}{_ZONE}", re.IGNORECASE),
)
# Every form `since` / `--since` reads, as the refusals list them (tools in English, the watcher in Czech).
ACCEPTED_FORMS = (
    "2026-09-30",
    "2026-09-30 14:00",
    "2026-09-30T14:00:00+02:00",
    "2026/09/30",
    "2026/09/30 14:00",
    "Sep 30 2026",
    "Sep 30 2026 14:00",
    "30 Sep 2026",
    "30 Sep 2026 14:00",
    "Wed, 30 Sep 2026 14:00:00 +0200",
)
SINCE_FORMS = (
    ", ".join(f'"{form}"' for form in ACCEPTED_FORMS)
    + " (seconds optional; a date alone is that day from midnight UTC, a time without a zone is UTC)"
)


def _month(word: str) -> int | None:
    word = word.lower()
    for number, full in enumerate(_MONTH_NAMES, start=1):
        if word in (full[:3], full) or (full == "september" and word == "sept"):
            return number
    return None


def _loose_moment(text: str) -> datetime | None:
    for form in _LOOSE:
        found = form.fullmatch(text)
        if found is None:
            continue
        parts = found.groupdict()
        month = int(parts["mon"]) if parts.get("mon") else _month(parts["month"])
        if month is None:
            return None
        moment = datetime(
            int(parts["year"]),
            month,
            int(parts["day"]),
            int(parts["hour"] or 0),
            int(parts["minute"] or 0),
            int(parts["second"] or 0),
        )
        zone = (parts["zone"] or "").upper().removeprefix("GMT").removeprefix("UTC")
        if zone in ("", "Z", "UT"):
            return moment  # naive: read as UTC
        return datetime.fromisoformat(f"{moment.isoformat()}{zone[:3]}:{zone[-2:]}")
    return None


def _parse_moment(text: str) -> datetime | None:
    """The moment `text` names (naive when it has no offset), or None when it is not a form we read."""
    if _ISO_DATE.fullmatch(text):
        return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
    if _ISO_DATE_TIME.fullmatch(text):
        # fromisoformat of Python 3.11 takes at most 6 fractional digits; the rest is below a microsecond.
        return datetime.fromisoformat(re.sub(r"([.,]\d{6})\d+", r"\1", text))
    if _RFC_2822.fullmatch(text):
        # "-0000" (RFC 5322: local time of an unknown zone) comes back naive, read as UTC like ISO.
        return email.utils.parsedate_to_datetime(re.sub(r"\s*\([^()]*\)$", "", text))
    return _loose_moment(text)


def since(value: str) -> datetime:
    """The pass boundary: a date is that calendar day (UTC midnight); a timestamp without an
    offset is read as UTC; one with an offset is converted to UTC. ISO 8601 and RFC 2822 forms,
    and the looser ones 1.5.0 took (SINCE_FORMS)."""
    text = value.strip()
    bad = invalid_input(f'"{value[:60]}" is not a date this server can read. Accepted forms: {SINCE_FORMS}.')
    if not text or len(text) > 64 or not text.isascii():
        raise bad
    try:
        moment = _parse_moment(text)
        if moment is None:
            raise bad
        # No offset: UTC. 0001-01-01 east of UTC or 9999-12-31 west of it overflows datetime.
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise bad from None
    # IMAP's SEARCH SINCE takes a four-digit year (the year 1 would be sent as "1-Jan-1" and refused
    # only after a labelling call had already labelled); no mail predates 1970.
    if moment.year < 1970:
        raise invalid_input(f'"{value[:60]}" is before 1970; no mail is that old. Give a real pass boundary.')
    return moment
