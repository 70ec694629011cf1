"""The iCalendar corpus (tests/corpus/icalendar) read twice: by the server and by the `icalendar` package.

`differences()` reads every file both ways and returns, per file, the fields that disagree:
uid, summary, start, end, organizer, attendees (addresses, lower case), recurrence, excepted_dates,
or `readable` when one side reads an event and the other does not. Times compare as UTC instants,
dates as dates, floating and unknown-zone times as the clock time written.

The recurrence reference is a second, independent reading: `icalendar` reads the RRULE, python-dateutil's
`rrulestr` parses it (RFC 5545 §3.3.10) and writes it back in its own canonical form, and that form is put
into the server's words by `describe_rule`. So frequency, interval, days, month days, months, position,
count and end date are compared as dateutil understood them; a rule dateutil refuses reads as `None`.
"""

from __future__ import annotations

import email
import email.policy
import functools
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp_multi_gmail.gmail.parse.calevent import EventReading, When, describe_rule, read_event
from mcp_multi_gmail.gmail.parse.icalendar import CalendarError

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "icalendar"
FIELDS = ("uid", "summary", "start", "end", "organizer", "attendees", "recurrence", "excepted_dates")


def corpus_files() -> list[Path]:
    return sorted(path for path in CORPUS.rglob("*") if path.suffix in {".ics", ".eml"})


def calendar_parts(path: Path) -> list[tuple[bytes, str | None]]:
    """The calendar bytes of a file: the file itself, or each calendar part of a message."""
    data = path.read_bytes()
    if path.suffix != ".eml":
        return [(data, None)]
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    parts: list[tuple[bytes, str | None]] = []
    for part in message.walk():
        kind = part.get_content_type()
        name = (part.get_filename() or "").lower()
        if kind in {"text/calendar", "application/ics"} or name.endswith(".ics"):
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                parts.append((payload, part.get_content_charset()))
    return parts


def _ours_when(when: When | None) -> str | None:
    if when is None:
        return None
    if when.kind == "instant":
        return when.utc
    return when.value


def ours(path: Path) -> dict[str, Any] | None:
    parts = calendar_parts(path)
    for data, charset in parts:
        try:
            reading: EventReading = read_event(data, charset, frozenset())
        except CalendarError:
            continue
        return {
            "uid": reading.uid,
            "summary": reading.summary,
            "start": _ours_when(reading.start),
            "end": _ours_when(reading.end),
            "organizer": (reading.organizer.address or "").lower() if reading.organizer else None,
            "attendees": sorted((person.address or "").lower() for person in reading.attendees),
            "recurrence": reading.recurrence,
            "excepted_dates": reading.excepted_dates,
        }
    return None


def _ref_when(value: object) -> str | None:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.isoformat()
        return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return None


def _ref_address(value: object) -> str:
    text = str(value).strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    return text.lower() if "@" in text else ""


def _ref_recurrence(event: Any) -> str | None:
    """The event's (first) RRULE as icalendar and then dateutil read it, in the server's words."""
    from dateutil.rrule import rrulestr

    rules = event.get("RRULE")
    if rules is None:
        return None
    rule = rules[0] if isinstance(rules, list) else rules
    text = rule.to_ical().decode()
    try:
        # A fixed naive start: only the rule's own parts matter, not the occurrences.
        parsed = rrulestr(text, dtstart=datetime(2000, 1, 1), ignoretz=True)
    except (ValueError, TypeError):
        return None
    canonical = str(parsed).splitlines()[-1].removeprefix("RRULE:")
    return describe_rule(_in_written_order(canonical, text))


def _in_written_order(canonical: str, written: str) -> str:
    """dateutil sorts BYDAY; put its days back in the order the file wrote them (the set is what counts)."""

    def days(rule: str) -> list[str]:
        for part in rule.split(";"):
            key, _, value = part.partition("=")
            if key.strip().upper() == "BYDAY":
                return [item.strip().upper().lstrip("+") for item in value.split(",")]
        return []

    order = days(written)
    ours = days(canonical)
    if not ours:
        return canonical
    ours.sort(key=lambda item: order.index(item) if item in order else len(order))
    return ";".join(
        "BYDAY=" + ",".join(ours) if part.upper().startswith("BYDAY=") else part for part in canonical.split(";")
    )


def _ref_excepted(event: Any) -> int:
    lists = event.get("EXDATE", [])
    if not isinstance(lists, list):
        lists = [lists]
    return sum(len(getattr(item, "dts", [])) for item in lists)


def reference(path: Path) -> dict[str, Any] | None:
    """The same fields through the `icalendar` package (a dev dependency), or None."""
    import icalendar

    for data, _charset in calendar_parts(path):
        try:
            calendars = icalendar.Calendar.from_ical(data, multiple=True)
            events = [item for item in calendars[0].walk("VEVENT")] if calendars else []
            if not events:
                continue
            masters = [item for item in events if "RECURRENCE-ID" not in item]
            event = (masters or events)[0]
            start = event.decoded("DTSTART") if "DTSTART" in event else None
            end: object = None
            if "DTEND" in event:
                end = event.decoded("DTEND")
            elif "DURATION" in event and start is not None:
                end = start + event.decoded("DURATION")
            elif isinstance(start, date) and not isinstance(start, datetime):
                end = start + timedelta(days=1)
            attendees = event.get("ATTENDEE", [])
            if not isinstance(attendees, list):
                attendees = [attendees]
            organizer = event.get("ORGANIZER")
            recurrence = _ref_recurrence(event)
            excepted = _ref_excepted(event)
        except Exception:  # noqa: BLE001 - the reference failing on a file is a finding, not a crash
            continue
        return {
            "uid": str(event["UID"]) if "UID" in event else None,
            "summary": str(event["SUMMARY"]) if "SUMMARY" in event else None,
            "start": _ref_when(start),
            "end": _ref_when(end),
            "organizer": _ref_address(organizer) if organizer is not None else None,
            "attendees": sorted(_ref_address(item) for item in attendees),
            "recurrence": recurrence,
            "excepted_dates": excepted,
        }
    return None


@functools.cache
def readings() -> dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]]:
    """Per corpus file (path relative to the corpus), the server's reading and the reference's; read once."""
    return {path.relative_to(CORPUS).as_posix(): (ours(path), reference(path)) for path in corpus_files()}


def differences() -> dict[str, list[str]]:
    """Per corpus file (path relative to the corpus), the fields the two readings disagree on."""
    found: dict[str, list[str]] = {}
    for name, (mine, theirs) in readings().items():
        if mine is None or theirs is None:
            if (mine is None) != (theirs is None):
                found[name] = ["readable"]
            continue
        fields = [field for field in FIELDS if mine[field] != theirs[field]]
        if fields:
            found[name] = fields
    return found
