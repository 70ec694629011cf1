"""Invitations read through the server: Google's and Outlook's real emails, an Apple-shaped one, a broken one.

The Google and Outlook messages are Thunderbird's test emails (tests/corpus/icalendar/SOURCES.md),
delivered byte for byte to a mailbox whose address and alias are their attendees.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from invitation_mail import ALIAS, APPLE, BROKEN, DATA, GOOGLE_ID, HOMER, OUTLOOK_ID
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

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
