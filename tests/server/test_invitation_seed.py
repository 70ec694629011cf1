"""The emulator's invitation seed (one invitation of each shape) read and answered through the server."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, load_runtime

pytestmark = pytest.mark.anyio

SEED = Path(str(files("gmail_emulator.seeds") / "invitations" / "seed.json"))
ME = "pozvanky@example.cz"
LUCIE = "lucie@icloud.example"
GOOGLE, UPDATE, CANCEL = "google-pozvanka@firma.example", "google-zmena@firma.example", "google-zruseni@firma.example"
OUTLOOK = "AM0PR07MB1234ABCD@AM0PR07MB1234.eurprd07.prod.outlook.example"
APPLE = "9F2C1B7A-3D4E-4F5A-8B6C-7D8E9F0A1B2C@icloud.example"


@pytest.fixture
def runtime(emulator_session: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path) -> Runtime:
    emulator_session.reset(SEED)
    entry = {"name": "pozvanky", "address": ME, "password": "pozvankyheslohes", "can_send": True}
    return load_runtime(write_config([entry]), gmail_env(emulator_session), state_dir=tmp_path / "state")


async def _invitation(call: Call, runtime: Runtime, message_id: str) -> dict[str, object]:
    data = await ok(call, runtime, "mg_get_message", account="pozvanky", message_id=message_id)
    invitation = data["invitation"]
    assert isinstance(invitation, dict)
    return invitation


async def test_each_shape_reads_as_one_invitation(runtime: Runtime, call: Call) -> None:
    google = await _invitation(call, runtime, GOOGLE)  # two calendar parts, one invitation
    assert (google["summary"], google["location"], google["sequence"]) == ("Rozpočet 2027", "Zasedačka 2, Brno", 0)
    assert google["start"] == {
        "kind": "instant",
        "value": "2026-12-10T09:00:00Z",
        "zone": "UTC",
        "zone_source": "utc",
        "iana": "UTC",
        "utc": "2026-12-10T09:00:00Z",
    }
    assert google["own_answer"] == {
        "address": ME,
        "name": ME,
        "role": "REQ-PARTICIPANT",
        "answer": "NEEDS-ACTION",
    }
    outlook = await _invitation(call, runtime, OUTLOOK)
    assert outlook["start"] == {
        "kind": "instant",
        "value": "2026-12-15T09:00:00+02:00",
        "zone": "FLE Standard Time",
        "zone_source": "windows",
        "iana": "Europe/Kiev",
        "utc": "2026-12-15T07:00:00Z",
    }
    assert (outlook["recurrence"], outlook["excepted_dates"]) == ("weekly on Tuesday until 2027-03-30", 2)
    apple = await _invitation(call, runtime, APPLE)
    assert apple["summary"] == "Oběd s Lucií" and apple["location"] == "Kavárna Slavia\nSmetanovo nábřeží 2, Praha"
    assert apple["start"]["value"] == "2026-12-17T12:00:00+01:00"  # type: ignore[index]
    assert apple["organizer"] == {
        "address": "lucie@icloud.example",
        "name": "Lucie Dvořáková",
        "role": None,
        "answer": None,
    }
    cancel = await _invitation(call, runtime, CANCEL)
    assert (cancel["method"], cancel["cancelled"], cancel["sequence"]) == ("CANCEL", True, 2)


async def test_only_the_newest_version_is_answered_and_the_organizer_receives_it(
    runtime: Runtime, emulator_session: GmailEmulator, call: Call
) -> None:
    # the update replaced the first invitation, and the cancellation replaced both
    first = await error(
        call, runtime, "mg_respond_invitation", account="pozvanky", message_id=GOOGLE, response="accepted"
    )
    assert "newer version" in first["message"]
    cancelled = await error(
        call, runtime, "mg_respond_invitation", account="pozvanky", message_id=CANCEL, response="accepted"
    )
    assert "cancelled" in cancelled["message"]
    answered = await ok(
        call, runtime, "mg_respond_invitation", account="pozvanky", message_id=OUTLOOK, response="declined"
    )
    assert answered["organizer"] == "mikko.virtanen@partner.example"
    [entry] = emulator_session.outbox()
    message = email.message_from_bytes(entry.data, policy=email.policy.default)
    assert message["In-Reply-To"] == f"<{OUTLOOK}>" and message["Subject"] == "Re: Tiimipalaveri"
    since = (datetime.now(UTC) - timedelta(days=3)).date().isoformat()
    thread_id = next(
        t["thread_id"]
        for t in (await ok(call, runtime, "mg_next_pass", account="pozvanky", since=since))["threads"]
        for m in t["unprocessed"]
        if m["message_id"] == OUTLOOK
    )
    thread = await ok(call, runtime, "mg_get_thread", account="pozvanky", thread_id=thread_id)
    assert [m["message_id"] for m in thread["messages"]] == [OUTLOOK, answered["sent"]["message_id"]]
    assert thread["messages"][1]["state"] == "sent"
    assert thread["messages"][1]["invitation"]["method"] == "REPLY"
    assert thread["messages"][1]["invitation"]["attendees"][0]["answer"] == "DECLINED"
    # Apple's organizer has a mailbox in the seed: the answer arrives there as a REPLY
    accepted = await ok(
        call, runtime, "mg_respond_invitation", account="pozvanky", message_id=APPLE, response="accepted"
    )
    received = emulator_session.message(LUCIE, accepted["sent"]["message_id"])
    assert received is not None
    reply = email.message_from_bytes(received.raw, policy=email.policy.default)
    calendar = next(part for part in reply.walk() if part.get_content_type() == "text/calendar")
    payload = calendar.get_payload(decode=True)
    assert isinstance(payload, bytes)
    lines = payload.decode().replace("\r\n ", "").splitlines()
    assert "METHOD:REPLY" in lines and "SEQUENCE:0" in lines
    assert [line for line in lines if line.startswith("ATTENDEE")] == [
        "ATTENDEE;CN=Pozvánky;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;EMAIL=pozvanky@example.cz;PARTSTAT=ACCEPTED"
        ":mailto:pozvanky@example.cz"
    ]
