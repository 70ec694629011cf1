"""Invitations through the server: Google's, Outlook's, Apple Mail's real emails, an Apple-shaped one, a broken one.

The Google and Outlook messages are Thunderbird's test emails, the Apple Mail one is from Apple's Calendar
Server tests (tests/corpus/icalendar/SOURCES.md); each is delivered byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from invitation_mail import ALIAS, APPLE, APPLE_MAIL, APPLE_MAIL_ID, BROKEN, DATA, GOOGLE_ID, HOMER, OUTLOOK_ID
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support.calendars import reference

pytestmark = pytest.mark.anyio


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    emulator.add_account(HOMER, "homerheslohesla")
    entry = {
        "name": "homer",
        "address": HOMER,
        "password": "homerheslohesla",
        "processed_label": "Asistent",
        "aliases": [{"address": ALIAS}],
    }
    return make_runtime(write_config([entry]))


def _deliver(emulator: GmailEmulator) -> None:
    now = datetime.now(UTC)
    for index, raw in enumerate(
        [
            (DATA / "meet-meeting-invite.eml").read_bytes(),
            (DATA / "outlook-test-invite.eml").read_bytes(),
            APPLE,
            BROKEN,
        ]
    ):
        emulator.deliver(HOMER, raw, internaldate=now - timedelta(hours=4 - index))


async def test_google_outlook_and_apple_invitations_in_get_message(
    runtime: Runtime, emulator: GmailEmulator, call: Call
) -> None:
    _deliver(emulator)
    google = (await ok(call, runtime, "mg_get_message", account="homer", message_id=GOOGLE_ID))["invitation"]
    assert google["method"] == "REQUEST" and google["summary"] == "Meeeeet me HTML"
    assert google["start"] == {
        "kind": "instant",
        "value": "2021-03-22T09:30:00Z",
        "zone": "UTC",
        "zone_source": "utc",
        "iana": "UTC",
        "utc": "2021-03-22T09:30:00Z",
    }
    assert google["organizer"]["address"] == "example@gmail.com"
    assert google["own_answer"]["address"] == HOMER and google["own_answer"]["answer"] == "NEEDS-ACTION"

    outlook = (await ok(call, runtime, "mg_get_message", account="homer", message_id=OUTLOOK_ID))["invitation"]
    assert outlook["start"]["zone"] == "FLE Standard Time"
    assert (outlook["start"]["zone_source"], outlook["start"]["value"]) == ("windows", "2021-11-27T09:00:00+02:00")
    assert outlook["own_answer"]["address"] == ALIAS  # invited by the alias

    apple = (await ok(call, runtime, "mg_get_message", account="homer", message_id="apple-invite-1@icloud.example"))[
        "invitation"
    ]
    assert (apple["summary"], apple["location"], apple["sequence"]) == ("Oběd", "Kantýna", 1)
    assert apple["start"]["value"] == "2026-10-22T12:00:00+02:00" and apple["start"]["iana"] == "Europe/Prague"

    broken = await ok(call, runtime, "mg_get_message", account="homer", message_id="broken-cal@example.net")
    assert broken["invitation"] is None
    assert "VCALENDAR" in broken["invitation_unreadable"]
    assert broken["body"].startswith("See the attachment.")


async def test_thread_and_pass_show_the_invitation(runtime: Runtime, emulator: GmailEmulator, call: Call) -> None:
    _deliver(emulator)
    since = (datetime.now(UTC) - timedelta(days=2)).date().isoformat()
    data = await ok(call, runtime, "mg_next_pass", account="homer", since=since)
    briefs = {m["message_id"]: m.get("invitation") for t in data["threads"] for m in t["unprocessed"]}
    assert briefs["apple-invite-1@icloud.example"] == {
        "summary": "Oběd",
        "start": "2026-10-22T12:00:00+02:00",
        "end": "2026-10-22T13:00:00+02:00",
        "zone": "Europe/Prague",
        "recurrence": None,
        "organizer": "jana@icloud.example",
        "own_answer": "NEEDS-ACTION",
        "method": "REQUEST",
        "cancelled": False,
    }
    assert briefs["broken-cal@example.net"] is None
    thread_id = next(t["thread_id"] for t in data["threads"] for m in t["unprocessed"] if m["message_id"] == OUTLOOK_ID)
    thread = await ok(call, runtime, "mg_get_thread", account="homer", thread_id=thread_id)
    assert thread["messages"][0]["invitation"]["summary"] == "Testaus"


async def test_apple_mails_real_ical_message(runtime: Runtime, emulator: GmailEmulator, call: Call) -> None:
    # Apple Mail's shape: multipart/alternative > text/plain + multipart/mixed (HTML, an iCal-….ics
    # attachment in quoted-printable with =0D=0A line ends, HTML); an attendee's REPLY to an organizer.
    emulator.deliver(HOMER, APPLE_MAIL.read_bytes(), internaldate=datetime.now(UTC))
    message = await ok(call, runtime, "mg_get_message", account="homer", message_id=APPLE_MAIL_ID)
    assert message["body"].startswith("plugh xyzzy has accepted your iCal event invitation")
    assert [(a["filename"], a["mime_type"]) for a in message["attachments"]] == [
        ("iCal-20080812-131911.ics", "text/calendar")
    ]
    invitation = message["invitation"]
    assert (invitation["method"], invitation["sequence"], invitation["own_answer"]) == ("REPLY", 7, None)
    assert invitation["start"]["value"] == "2008-08-12T10:00:00-07:00" and invitation["start"]["iana"] == "US/Pacific"
    assert invitation["attendees"][0]["answer"] == "ACCEPTED"
    # The same event as the `icalendar` package reads it from the same bytes.
    expected = reference(APPLE_MAIL)
    assert expected is not None
    assert {
        "uid": invitation["uid"],
        "summary": invitation["summary"],
        "start": invitation["start"]["utc"],
        "end": invitation["end"]["utc"],
        "organizer": invitation["organizer"]["address"],  # its ORGANIZER line is folded inside the address
        "attendees": [person["address"] for person in invitation["attendees"]],
    } == {field: expected[field] for field in ("uid", "summary", "start", "end", "organizer", "attendees")}
