"""The iTIP REPLY text: only the answering attendee, the fields RFC 5546 §3.2.3 asks for, folding and escapes."""

from __future__ import annotations

from datetime import UTC, datetime

from mcp_multi_gmail.gmail.itip import escape_text, fold, reply_calendar
from mcp_multi_gmail.gmail.parse.calevent import choose_event
from mcp_multi_gmail.gmail.parse.icalendar import read_calendar, unfold

INVITE = (
    "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:abc@example.com\r\nSEQUENCE:3\r\n"
    "RECURRENCE-ID;TZID=Europe/Prague:20261110T090000\r\nSUMMARY:Porada\\, tým\r\n"
    'ORGANIZER;CN="Nováková, Jana":mailto:jana@example.com\r\n'
    "ATTENDEE;CN=Jana;PARTSTAT=ACCEPTED:mailto:jana@example.com\r\n"
    "ATTENDEE;CN=Já;RSVP=TRUE;ROLE=OPT-PARTICIPANT;PARTSTAT=NEEDS-ACTION:mailto:me@example.org\r\n"
    "ATTENDEE;CN=Petr:mailto:petr@example.com\r\nDTSTART;TZID=Europe/Prague:20261110T090000\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
).encode()


def test_a_reply_for_one_occurrence_holds_only_the_answering_attendee() -> None:
    event, _changed = choose_event(read_calendar(INVITE))
    attendee = event.all("ATTENDEE")[1]
    text = reply_calendar(
        event, attendee, "declined", "Jsem na cestě; pošlete zápis.", datetime(2026, 11, 1, tzinfo=UTC)
    )
    lines = [line.decode() for line in unfold(text.encode())]
    assert "METHOD:REPLY" in lines and "UID:abc@example.com" in lines and "SEQUENCE:3" in lines
    assert "RECURRENCE-ID;TZID=Europe/Prague:20261110T090000" in lines
    assert 'ORGANIZER;CN="Nováková, Jana":mailto:jana@example.com' in lines
    assert [line for line in lines if line.startswith("ATTENDEE")] == [
        "ATTENDEE;CN=Já;ROLE=OPT-PARTICIPANT;PARTSTAT=DECLINED:mailto:me@example.org"
    ]
    assert "DTSTAMP:20261101T000000Z" in lines
    assert "COMMENT:Jsem na cestě\\; pošlete zápis." in lines
    assert not any(line.startswith(("DTSTART", "RSVP")) for line in lines)


def test_lines_fold_at_75_octets_without_splitting_a_character() -> None:
    line = "COMMENT:" + "č" * 80
    folded = fold(line)
    pieces = folded.split("\r\n")
    assert all(len(piece.encode()) <= 75 for piece in pieces)
    assert "".join(piece.removeprefix(" ") if i else piece for i, piece in enumerate(pieces)) == line
    assert escape_text("a,b;c\\d\ne") == "a\\,b\\;c\\\\d\\ne"
