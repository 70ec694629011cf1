"""The iCalendar reader: unfolding, parameters, zones (IANA, Windows, VTIMEZONE-only), words."""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator

import pytest

from mcp_multi_gmail.gmail.parse import calzones
from mcp_multi_gmail.gmail.parse.calevent import describe_rule, read_event
from mcp_multi_gmail.gmail.parse.icalendar import CalendarError, parse_line, read_calendar, unescape_text, unfold

ME = frozenset({"me@example.com", "alias@example.org"})

OUTLOOK_ZONE = b"""BEGIN:VTIMEZONE\r
TZID:FLE Standard Time\r
BEGIN:STANDARD\r
DTSTART:16010101T040000\r
TZOFFSETFROM:+0300\r
TZOFFSETTO:+0200\r
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\r
END:STANDARD\r
BEGIN:DAYLIGHT\r
DTSTART:16010101T030000\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0300\r
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\r
END:DAYLIGHT\r
END:VTIMEZONE\r
"""


def _calendar(event: bytes, *, zone: bytes = b"", method: bytes = b"METHOD:REQUEST\r\n") -> bytes:
    return (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"
        + method
        + zone
        + b"BEGIN:VEVENT\r\n"
        + event
        + b"END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


@pytest.fixture
def no_zone_database(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """zoneinfo raising for every name, as on Windows without the tzdata package."""

    def refuse(name: str) -> zoneinfo.ZoneInfo:
        raise zoneinfo.ZoneInfoNotFoundError(name)

    monkeypatch.setattr(zoneinfo, "ZoneInfo", refuse)
    calzones.iana_zone.cache_clear()
    yield
    calzones.iana_zone.cache_clear()


def test_a_fold_inside_a_utf8_character_is_joined_before_decoding() -> None:
    summary = "Porada týmu".encode()
    cut = summary.index(b"\xc3\xbd") + 1  # between the two bytes of "ý"
    event = b"UID:1\r\nDTSTART:20260310T090000Z\r\nSUMMARY:" + summary[:cut] + b"\r\n " + summary[cut:] + b"\r\n"
    reading = read_event(_calendar(event), None, ME)
    assert reading.summary == "Porada týmu"


def test_bom_stray_crs_blank_lines_and_latin1_are_tolerated() -> None:
    event = b"UID:2\r\r\n\r\nDTSTART:20260310T090000Z\r\nSUMMARY:Sch\xf6ne Gr\xfc\xdfe\r\nLOCATION:Caf\xe9\r\n"
    reading = read_event(b"\xef\xbb\xbf" + _calendar(event), "iso-8859-1", ME)
    assert reading.summary == "Schöne Grüße"
    assert reading.location == "Café"
    assert reading.uid == "2"


def test_rfc6868_escapes_and_quoted_colons_in_parameters() -> None:
    prop = parse_line("ATTENDEE;CN=\"Jan ^'Honza^' Novák: PM\";X-NOTE=a^nb^^c:mailto:jan@example.com")
    assert prop is not None
    assert prop.param("CN") == 'Jan "Honza" Novák: PM'
    assert prop.param("X-NOTE") == "a\nb^c"
    assert prop.value == "mailto:jan@example.com"
    lone = parse_line("ATTENDEE;CN=a^b ^:mailto:jan@example.com")
    assert lone is not None and lone.param("CN") == "a^b ^"  # a caret before anything else stays


def test_text_escapes_and_a_trailing_backslash() -> None:
    assert (
        unescape_text(r"Room 1\, floor 2\; bring\nlaptops\\chargers\N") == "Room 1, floor 2; bring\nlaptops\\chargers\n"
    )
    assert unescape_text(r"a\x b \\") == "ax b \\"
    assert unescape_text("ends with \\") == "ends with \\"


def test_tzid_quoted_or_not_and_iana_zone_across_daylight_saving() -> None:
    event = (
        b'UID:3\r\nDTSTART;TZID="Europe/Prague":20260328T100000\r\n'
        b"DTEND;TZID=Europe/Prague:20260330T100000\r\n"  # Central Europe moves to summer time on 29 March 2026
    )
    reading = read_event(_calendar(event), None, ME)
    assert reading.start is not None and reading.end is not None
    assert reading.start.value == "2026-03-28T10:00:00+01:00"
    assert reading.end.value == "2026-03-30T10:00:00+02:00"
    assert reading.start.zone_source == "iana"
    assert reading.end.utc == "2026-03-30T08:00:00Z"


def test_windows_zone_name_through_cldr() -> None:
    event = b"UID:4\r\nDTSTART;TZID=FLE Standard Time:20260701T140000\r\nDURATION:PT90M\r\n"
    reading = read_event(_calendar(event, zone=OUTLOOK_ZONE), None, ME)
    assert reading.start is not None and reading.end is not None
    assert (reading.start.zone_source, reading.start.iana) == ("windows", "Europe/Kiev")
    assert reading.start.value == "2026-07-01T14:00:00+03:00"
    assert reading.end.value == "2026-07-01T15:30:00+03:00"


def test_without_a_zone_database_outlook_1601_rules_give_the_offsets(no_zone_database: None) -> None:
    event = (
        b"UID:5\r\nDTSTART;TZID=FLE Standard Time:20260325T100000\r\n"
        b"DTEND;TZID=FLE Standard Time:20261101T100000\r\nRRULE:FREQ=WEEKLY;BYDAY=WE\r\n"
    )
    reading = read_event(_calendar(event, zone=OUTLOOK_ZONE), None, ME)
    assert reading.start is not None and reading.end is not None
    assert reading.start.zone_source == "vtimezone"
    assert reading.start.value == "2026-03-25T10:00:00+02:00"  # before the last Sunday of March
    assert reading.end.value == "2026-11-01T10:00:00+02:00"
    summer = read_event(_calendar(event.replace(b"20260325", b"20260401"), zone=OUTLOOK_ZONE), None, ME)
    assert summer.start is not None and summer.start.value == "2026-04-01T10:00:00+03:00"


def test_a_custom_tzid_is_read_from_its_own_vtimezone() -> None:
    zone = (
        b"BEGIN:VTIMEZONE\r\nTZID:(UTC-03:00) Bras\xc3\xadlia\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r\n"
        b"TZOFFSETFROM:-0300\r\nTZOFFSETTO:-0300\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
    )
    event = "UID:6\r\nDTSTART;TZID=(UTC-03:00) Brasília:20260505T090000\r\n".encode()
    reading = read_event(_calendar(event, zone=zone), None, ME)
    assert reading.start is not None
    assert (reading.start.kind, reading.start.zone_source) == ("instant", "vtimezone")
    assert reading.start.value == "2026-05-05T09:00:00-03:00"


def test_unknown_zone_keeps_the_clock_time_floating_and_all_day_are_marked() -> None:
    unknown = read_event(_calendar(b"UID:7\r\nDTSTART;TZID=Mars/Olympus:20260505T090000\r\n"), None, ME)
    assert unknown.start is not None
    assert (unknown.start.kind, unknown.start.value, unknown.start.zone) == (
        "timezone_unknown",
        "2026-05-05T09:00:00",
        "Mars/Olympus",
    )
    floating = read_event(_calendar(b"UID:8\r\nDTSTART:20260505T090000\r\n"), None, ME)
    assert floating.start is not None and (floating.start.kind, floating.start.value) == (
        "floating",
        "2026-05-05T09:00:00",
    )
    all_day = read_event(_calendar(b"UID:9\r\nDTSTART;VALUE=DATE:20260505\r\n"), None, ME)
    assert all_day.start is not None and all_day.end is not None
    assert (all_day.start.kind, all_day.start.value, all_day.end.value) == ("date", "2026-05-05", "2026-05-06")


def test_recurrence_words_and_exdates_over_several_lines() -> None:
    event = (
        b"UID:10\r\nDTSTART:20260303T090000Z\r\nRRULE:FREQ=WEEKLY;BYDAY=TU;UNTIL=20270301T000000Z\r\n"
        b"EXDATE:20260310T090000Z,20260317T090000Z\r\nEXDATE:20260324T090000Z\r\n"
    )
    reading = read_event(_calendar(event), None, ME)
    assert reading.recurrence == "weekly on Tuesday until 2027-03-01"
    assert reading.excepted_dates == 3
    assert describe_rule("FREQ=MONTHLY;BYDAY=-1FR;COUNT=6") == "monthly on the last Friday 6 times"
    assert describe_rule("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE") == "every 2 weeks on Monday and Wednesday"
    assert describe_rule("FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=15") == "yearly on day 15 in March"
    assert describe_rule("RSCALE=CHINESE;FREQ=YEARLY") == "yearly in the chinese calendar"  # RFC 7529


def test_people_own_answer_by_alias_and_cancellation() -> None:
    event = (
        b"UID:11\r\nSEQUENCE:3\r\nDTSTART:20260303T090000Z\r\nSTATUS:CANCELLED\r\n"
        b"ORGANIZER;CN=Jana:mailto:jana@example.com\r\n"
        b"ATTENDEE;CN=Jana;PARTSTAT=ACCEPTED:mailto:jana@example.com\r\n"
        b"ATTENDEE;CN=Me;ROLE=OPT-PARTICIPANT;RSVP=TRUE:MAILTO:Alias@Example.org\r\n"
    )
    reading = read_event(_calendar(event, method=b"METHOD:CANCEL\r\n"), None, ME)
    assert reading.cancelled and reading.method == "CANCEL" and reading.sequence == 3
    assert reading.organizer is not None and reading.organizer.address == "jana@example.com"
    assert reading.own is not None
    assert (reading.own.address, reading.own.answer, reading.own.role, reading.own.rsvp) == (
        "Alias@Example.org",
        "NEEDS-ACTION",
        "OPT-PARTICIPANT",
        True,
    )


def test_unreadable_calendars_say_why() -> None:
    with pytest.raises(CalendarError, match="empty"):
        read_calendar(b"\r\n\r\n")
    with pytest.raises(CalendarError, match="VCALENDAR"):
        read_calendar(b"hello world")
    with pytest.raises(CalendarError, match="VEVENT"):
        read_event(b"BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:1\r\nEND:VTODO\r\nEND:VCALENDAR\r\n", None, ME)


def test_unfold_on_bytes_keeps_tabs_and_bare_cr_files() -> None:
    assert unfold(b"A:1\r\n\tB\r\nC:2") == [b"A:1B", b"C:2"]
    assert unfold(b"A:1\rB:2\r") == [b"A:1", b"B:2"]
