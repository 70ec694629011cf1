"""Invitation emails the tests share: real ones (Google, Outlook, Apple Mail), an Apple-shaped one, a broken one."""

from __future__ import annotations

from pathlib import Path

HOMER = "homer@example.com"
ALIAS = "homer@example.org"
DATA = (
    Path(__file__).resolve().parent.parent / "corpus" / "icalendar" / "thunderbird" / "browser" / "invitations" / "data"
)
GOOGLE_ID = "0000000000008c6d7005be1c767c@google.com"
OUTLOOK_ID = "HE1P190MB0540579ABA18FCE320901B31E39C9@HE1P190MB0540.EURP190.PROD.OUTLOOK.COM"
# Apple Mail's iCal reply, from Apple's Calendar Server tests (tests/corpus/icalendar/SOURCES.md).
APPLE_MAIL = DATA.parents[3] / "calendarserver" / "good_reply.eml"
APPLE_MAIL_ID = "1983F777-BE86-4B98-881E-06D938E60920@example.com"

APPLE = (
    "From: Jana <jana@icloud.example>\r\nTo: homer@example.com\r\nSubject: Pozvánka: Oběd\r\n"
    "Message-ID: <apple-invite-1@icloud.example>\r\nMIME-Version: 1.0\r\n"
    'Content-Type: multipart/alternative; boundary="Apple-Mail=_1"\r\n\r\n'
    "--Apple-Mail=_1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
    "Oběd ve čtvrtek\r\n"
    "--Apple-Mail=_1\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n"
    "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
    "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nPRODID:-//Apple Inc.//Mac OS X 14.5//EN\r\nVERSION:2.0\r\n"
    "BEGIN:VEVENT\r\nUID:5A1B-APPLE\r\nSEQUENCE:1\r\nDTSTAMP:20261020T080000Z\r\n"
    "DTSTART;TZID=Europe/Prague:20261022T120000\r\nDTEND;TZID=Europe/Prague:20261022T130000\r\n"
    "SUMMARY:Ob=C4=9Bd\r\nLOCATION:Kantýna\r\n"
    "ORGANIZER;CN=Jana:mailto:jana@icloud.example\r\n"
    "ATTENDEE;CN=Homer;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:homer@example.com\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
    "--Apple-Mail=_1--\r\n"
).encode()

BROKEN = (
    b"From: x@example.net\r\nTo: homer@example.com\r\nSubject: broken\r\nMessage-ID: <broken-cal@example.net>\r\n"
    b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n"
    b"See the attachment.\r\n--b\r\nContent-Type: text/calendar; name=x.ics\r\n\r\nnot a calendar at all\r\n--b--\r\n"
)
