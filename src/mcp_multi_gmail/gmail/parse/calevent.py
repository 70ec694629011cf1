"""One event of an iCalendar file, read as a person would read an invitation.

What, when and who: METHOD, UID, SEQUENCE, SUMMARY, LOCATION, DTSTART/DTEND (or DURATION) with
their zones resolved by `calzones`, the RRULE in short words (not expanded), how many EXDATEs,
ORGANIZER and ATTENDEEs with their PARTSTAT (RFC 5545 §3.8, RFC 5546 §3.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Literal

from ...statefile import utc_stamp
from ...text import clean
from .calzones import Observance, ZoneSource, parse_offset, resolve
from .icalendar import CalendarError, Component, Property, read_calendar

WhenKind = Literal["instant", "date", "floating", "timezone_unknown"]

_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_DATETIME = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?(Z)?$")
_DURATION = re.compile(r"^([+-])?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")
_DAY_NAMES = {
    "MO": "Monday",
    "TU": "Tuesday",
    "WE": "Wednesday",
    "TH": "Thursday",
    "FR": "Friday",
    "SA": "Saturday",
    "SU": "Sunday",
}
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_UNITS = {
    "SECONDLY": ("secondly", "seconds"),
    "MINUTELY": ("every minute", "minutes"),
    "HOURLY": ("hourly", "hours"),
    "DAILY": ("daily", "days"),
    "WEEKLY": ("weekly", "weeks"),
    "MONTHLY": ("monthly", "months"),
    "YEARLY": ("yearly", "years"),
}


@dataclass(frozen=True)
class When:
    """A start or end: an instant (offset known), a date, a floating time or an unknown zone."""

    kind: WhenKind
    value: str
    zone: str | None = None
    zone_source: ZoneSource | None = None
    iana: str | None = None
    utc: str | None = None


@dataclass(frozen=True)
class Person:
    address: str | None
    name: str | None
    role: str | None
    answer: str | None
    rsvp: bool | None = None


@dataclass(frozen=True)
class EventReading:
    method: str | None
    cancelled: bool
    status: str | None
    uid: str | None
    sequence: int
    recurrence_id: When | None
    summary: str | None
    location: str | None
    start: When | None
    end: When | None
    recurrence: str | None
    excepted_dates: int
    changed_occurrences: int
    organizer: Person | None
    attendees: tuple[Person, ...]
    own: Person | None
    description: str | None


def _ordinal(number: int) -> str:
    if number == -1:
        return "last"
    if number < 0:
        return f"{_ordinal(-number)} to last"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10 if number % 100 not in (11, 12, 13) else 0, "th")
    return f"{number}{suffix}"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def rule_parts(value: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for item in value.split(";"):
        key, _, part = item.partition("=")
        if key.strip():
            parts[key.strip().upper()] = part.strip().upper()
    return parts


def _day_words(value: str) -> list[str]:
    days: list[str] = []
    for item in value.split(","):
        match = re.match(r"^([+-]?\d{1,2})?([A-Z]{2})$", item.strip())
        if not match or match.group(2) not in _DAY_NAMES:
            continue
        name = _DAY_NAMES[match.group(2)]
        days.append(f"the {_ordinal(int(match.group(1)))} {name}" if match.group(1) else name)
    return days


def describe_rule(value: str) -> str:
    """An RRULE in short words: "weekly on Tuesday until 2027-03-01"."""
    parts = rule_parts(value)
    freq = parts.get("FREQ", "")
    single, plural = _UNITS.get(freq, (freq.lower() or "repeating", "times"))
    interval = int(parts["INTERVAL"]) if parts.get("INTERVAL", "").isdigit() else 1
    words = [single if interval <= 1 else f"every {interval} {plural}"]
    days = _day_words(parts.get("BYDAY", ""))
    if days:
        words.append("on " + _and(days))
    if "BYMONTHDAY" in parts:
        numbers = [item for item in parts["BYMONTHDAY"].split(",") if item.lstrip("+-").isdigit()]
        if numbers:
            words.append("on day " + _and([n if not n.startswith("-") else f"{_ordinal(int(n))} day" for n in numbers]))
    if "BYMONTH" in parts:
        months = [
            _MONTHS[int(item) - 1] for item in parts["BYMONTH"].split(",") if item.isdigit() and 1 <= int(item) <= 12
        ]
        if months:
            words.append("in " + _and(months))
    if "BYSETPOS" in parts:
        words.append(f"(occurrence {parts['BYSETPOS']} of each period)")
    if parts.get("COUNT", "").isdigit():
        words.append(f"{parts['COUNT']} times")
    until = parts.get("UNTIL", "")
    if len(until) >= 8 and until[:8].isdigit():
        words.append(f"until {until[:4]}-{until[4:6]}-{until[6:8]}")
    scale = parts.get("RSCALE", "GREGORIAN")
    if scale != "GREGORIAN":  # RFC 7529: months and years of another calendar, not the Gregorian ones
        words.append(f"in the {scale.lower()} calendar")
    return " ".join(words)


def parse_duration(value: str) -> timedelta | None:
    match = _DURATION.match(value.strip().upper())
    if not match or not any(match.groups()[1:]):
        return None
    sign, weeks, days, hours, minutes, seconds = match.groups()
    delta = timedelta(
        weeks=int(weeks or 0),
        days=int(days or 0),
        hours=int(hours or 0),
        minutes=int(minutes or 0),
        seconds=int(seconds or 0),
    )
    return -delta if sign == "-" else delta


def _local(text: str) -> tuple[datetime | date, bool] | None:
    """A DATE-TIME or DATE value: (value, is_utc)."""
    text = text.strip()
    match = _DATETIME.match(text)
    try:
        if match:
            year, month, day, hour, minute, second, utc = match.groups()
            moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
            return moment, bool(utc)
        match = _DATE.match(text)
        if match:
            return date(*(int(part) for part in match.groups())), False
    except ValueError:  # a month 13, a hour 25
        return None
    return None


def _iso_utc(moment: datetime) -> str:
    return utc_stamp(moment)


def observances(calendar: Component) -> dict[str, tuple[Observance, ...]]:
    """The VTIMEZONE blocks of a file, by TZID."""
    zones: dict[str, tuple[Observance, ...]] = {}
    for vtimezone in calendar.walk("VTIMEZONE"):
        tzid = (vtimezone.text("TZID") or "").strip()
        found: list[Observance] = []
        for block in vtimezone.children:
            if block.name not in {"STANDARD", "DAYLIGHT"}:
                continue
            start_prop = block.first("DTSTART")
            start = _local(start_prop.value) if start_prop else None
            offset_to = parse_offset(block.text("TZOFFSETTO") or "")
            offset_from = parse_offset(block.text("TZOFFSETFROM") or "") or offset_to
            if start is None or offset_to is None or offset_from is None:
                continue
            onset = start[0] if isinstance(start[0], datetime) else datetime.combine(start[0], datetime.min.time())
            rdates: list[datetime] = []
            for rdate in block.all("RDATE"):
                for item in rdate.value.split(","):
                    parsed = _local(item)
                    if parsed and isinstance(parsed[0], datetime):
                        rdates.append(parsed[0])
            rule = block.first("RRULE")
            found.append(
                Observance(
                    start=onset,
                    offset_from=offset_from,
                    offset_to=offset_to,
                    rule=rule_parts(rule.value) if rule else None,
                    rdates=tuple(rdates),
                    name=block.text("TZNAME"),
                )
            )
        if tzid and found:
            zones[tzid] = tuple(found)
    return zones


def read_when(prop: Property | None, zones: dict[str, tuple[Observance, ...]]) -> When | None:
    """A DTSTART-like property as a When; None when it is absent or unreadable."""
    if prop is None:
        return None
    parsed = _local(prop.value.split(",")[0])
    if parsed is None:
        return None
    value, is_utc = parsed
    if not isinstance(value, datetime):
        return When("date", value.isoformat())
    if is_utc:
        return When(
            "instant",
            _iso_utc(value.replace(tzinfo=UTC)),
            "UTC",
            "utc",
            "UTC",
            _iso_utc(value.replace(tzinfo=UTC)),
        )
    tzid = prop.param("TZID")
    if not tzid:
        return When("floating", value.isoformat())
    zone = resolve(tzid, zones)
    offset = zone.offset(value) if zone is not None else None
    if zone is None or offset is None:
        return When("timezone_unknown", value.isoformat(), clean(tzid.strip()))
    aware = value.replace(tzinfo=timezone(offset))
    return When("instant", aware.isoformat(), clean(zone.tzid), zone.source, zone.iana, _iso_utc(aware))


def _shifted(start: When, delta: timedelta, zones: dict[str, tuple[Observance, ...]], prop: Property) -> When | None:
    """DTSTART + DURATION, in DTSTART's own zone."""
    if start.kind == "date":
        return When("date", (date.fromisoformat(start.value) + delta).isoformat())
    base = datetime.fromisoformat(start.value)
    if start.kind == "instant" and start.zone_source == "utc":
        return When("instant", _iso_utc(base + delta), "UTC", "utc", "UTC", _iso_utc(base + delta))
    naive = base.replace(tzinfo=None) + delta
    if start.kind == "instant" and start.zone_source != "utc":
        # Wall-clock arithmetic (RFC 5545 §3.3.6 for days; hours are close enough for a summary).
        stamp = naive.strftime("%Y%m%dT%H%M%S")
        return read_when(Property("DTEND", prop.params, stamp), zones)
    return When(start.kind, naive.isoformat(), start.zone)


def _address(value: str, params: dict[str, list[str]]) -> str | None:
    text = value.strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    elif ":" in text:  # urn:uuid: or another scheme: the EMAIL parameter may say more (RFC 7986)
        text = ""
    email = (params.get("EMAIL") or [""])[0]
    found = (text or email).strip().strip("<>")
    return clean(found) if "@" in found else None


def read_person(prop: Property, *, attendee: bool) -> Person:
    rsvp = prop.param("RSVP")
    return Person(
        address=_address(prop.value, prop.params),
        name=clean(prop.param("CN")) or None,
        role=(prop.param("ROLE") or ("REQ-PARTICIPANT" if attendee else None)),
        answer=((prop.param("PARTSTAT") or "NEEDS-ACTION").upper() if attendee else None),
        rsvp=None if rsvp is None else rsvp.upper() == "TRUE",
    )


def choose_event(calendar: Component) -> tuple[Component, int]:
    """The event an invitation is about: the series (no RECURRENCE-ID) when there is one; and how many
    of its occurrences the same calendar changes."""
    events = [child for child in calendar.children if child.name == "VEVENT"] or calendar.walk("VEVENT")
    if not events:
        raise CalendarError("the calendar holds no event (VEVENT)")
    masters = [event for event in events if event.first("RECURRENCE-ID") is None]
    chosen = masters[0] if masters else events[0]
    uid = chosen.text("UID")
    changed = sum(1 for event in events if event.first("RECURRENCE-ID") is not None and event.text("UID") == uid)
    return chosen, changed


def read_event(
    data: bytes, charset: str | None, own_addresses: frozenset[str], method_hint: str | None = None
) -> EventReading:
    """The invitation in a calendar file; CalendarError with the reason when there is none."""
    try:
        return _read_event(data, charset, own_addresses, method_hint)
    except (ValueError, OverflowError) as error:  # a value out of range (a duration of 10^30 days)
        if isinstance(error, CalendarError):
            raise
        raise CalendarError(f"a value in the calendar is out of range ({type(error).__name__})") from None


def _read_event(
    data: bytes, charset: str | None, own_addresses: frozenset[str], method_hint: str | None
) -> EventReading:
    calendar = read_calendar(data, charset)
    event, changed = choose_event(calendar)
    zones = observances(calendar)
    method = (calendar.text("METHOD") or method_hint or "").strip().upper() or None
    status = (event.text("STATUS") or "").strip().upper() or None
    start = read_when(event.first("DTSTART"), zones)
    end = read_when(event.first("DTEND") or event.first("DUE"), zones)
    if end is None and start is not None:
        duration_prop = event.first("DURATION")
        duration = parse_duration(duration_prop.value) if duration_prop else None
        if duration is None and start.kind == "date":
            duration = timedelta(days=1)  # RFC 5545 §3.6.1: an all-day event without an end
        if duration is not None:
            end = _shifted(start, duration, zones, event.first("DTSTART") or Property("DTSTART", {}, ""))
    rrule = event.first("RRULE")
    excepted = sum(len([item for item in prop.value.split(",") if item.strip()]) for prop in event.all("EXDATE"))
    organizer_prop = event.first("ORGANIZER")
    attendees = tuple(read_person(prop, attendee=True) for prop in event.all("ATTENDEE"))
    own = next((person for person in attendees if person.address and person.address.casefold() in own_addresses), None)
    sequence_text = (event.text("SEQUENCE") or "0").strip()
    return EventReading(
        method=method,
        cancelled=method == "CANCEL" or status == "CANCELLED",
        status=status,
        uid=clean(event.text("UID")),
        sequence=int(sequence_text) if sequence_text.isdigit() else 0,
        recurrence_id=read_when(event.first("RECURRENCE-ID"), zones),
        summary=clean(event.text("SUMMARY")),
        location=clean(event.text("LOCATION")),
        start=start,
        end=end,
        recurrence=describe_rule(rrule.value) if rrule else None,
        excepted_dates=excepted,
        changed_occurrences=changed,
        organizer=read_person(organizer_prop, attendee=False) if organizer_prop else None,
        attendees=attendees,
        own=own,
        description=clean(event.text("DESCRIPTION")),
    )
