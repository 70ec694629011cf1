"""mg_respond_invitation: an iTIP REPLY to the organizer in the thread, under the send policy; every refusal."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from invitation_mail import APPLE, BROKEN, DATA, HOMER, OUTLOOK_ID
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

JANA = "jana@icloud.example"
APPLE_ID = "apple-invite-1@icloud.example"


def _variant(message_id: str, *changes: tuple[str, str]) -> bytes:
    text = APPLE.decode()
    text = text.replace(f"<{APPLE_ID}>", f"<{message_id}>")
    text = str(text)
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    return text.encode()


def _entry(**extra: Any) -> dict[str, Any]:
    entry = {
        "name": "homer",
        "address": HOMER,
        "password": "homerheslohesla",
        "processed_label": "Asistent",
        "can_send": True,
        "aliases": [{"address": "homer@example.org"}],
    }
    entry.update(extra)
    return entry


@pytest.fixture
def setup(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Callable[..., Runtime]:
    emulator.add_account(HOMER, "homerheslohesla")
    emulator.add_account(JANA, "janaheslohesla01")

    def make(**extra: Any) -> Runtime:
        return make_runtime(write_config([_entry(**extra)]))

    return make


def _deliver(emulator: GmailEmulator, *raws: bytes) -> None:
    now = datetime.now(UTC)
    for index, raw in enumerate(raws):
        emulator.deliver(HOMER, raw, internaldate=now - timedelta(minutes=30 - index))


def _calendar_of(data: bytes) -> tuple[EmailMessage, str]:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    calendar = next(part for part in message.walk() if part.get_content_type() == "text/calendar")
    assert isinstance(calendar, EmailMessage)
    text = calendar.get_content()
    assert isinstance(text, str)
    return message, text


async def test_an_accepted_invitation_reaches_the_organizer_in_the_thread(
    setup: Callable[..., Runtime], emulator: GmailEmulator, call: Call
) -> None:
    runtime = setup()
    _deliver(emulator, APPLE)
    result = await ok(
        call,
        runtime,
        "mg_respond_invitation",
        account="homer",
        message_id=APPLE_ID,
        response="accepted",
        comment="Přijdu o deset minut později.",
    )
    assert (result["organizer"], result["attendee"], result["uid"], result["sequence"]) == (
        JANA,
        HOMER,
        "5A1B-APPLE",
        1,
    )
    assert "Google Calendar" in result["calendar_note"]
    assert result["sent"]["sent_copy"]["saved"] is True
    [entry] = emulator.outbox()
    assert entry.recipients == [JANA]
    message, calendar = _calendar_of(entry.data)
    # multipart/mixed: the text, then text/calendar; method=REPLY, not inside an alternative
    assert message.get_content_type() == "multipart/mixed"
    kinds = [part.get_content_type() for part in message.iter_parts()]
    assert kinds == ["text/plain", "text/calendar"]
    text_part, calendar_part = list(message.iter_parts())
    assert isinstance(calendar_part, EmailMessage) and isinstance(text_part, EmailMessage)
    assert calendar_part.get_param("method") == "REPLY"
    assert "Přijímám pozvánku: Oběd." in text_part.get_content()
    lines = calendar.replace("\r\n ", "").splitlines()
    assert "METHOD:REPLY" in lines and "UID:5A1B-APPLE" in lines and "SEQUENCE:1" in lines
    assert [line for line in lines if line.startswith("ATTENDEE")] == [
        "ATTENDEE;CN=Homer;PARTSTAT=ACCEPTED:mailto:homer@example.com"
    ]
    assert "ORGANIZER;CN=Jana:mailto:jana@icloud.example" in lines
    assert any(line.startswith("DTSTAMP:") and line.endswith("Z") for line in lines)
    assert "COMMENT:Přijdu o deset minut později." in lines
    assert not any(line.startswith("RECURRENCE-ID") for line in lines)
    # the organizer received it; the Sent copy sits in the invitation's thread
    reply_id = result["sent"]["message_id"]
    assert emulator.message(JANA, reply_id) is not None
    invitation = emulator.message(HOMER, APPLE_ID)
    copy = emulator.message(HOMER, reply_id)
    assert invitation is not None and copy is not None and copy.thrid == invitation.thrid
    # the same answer again is refused: nothing goes out twice
    again = await error(
        call,
        runtime,
        "mg_respond_invitation",
        account="homer",
        message_id=APPLE_ID,
        response="accepted",
        comment="Přijdu o deset minut později.",
    )
    assert again["code"] == "duplicate_send"
    assert len(emulator.outbox()) == 1


async def test_an_invitation_to_an_alias_is_answered_from_the_alias(
    setup: Callable[..., Runtime], emulator: GmailEmulator, call: Call
) -> None:
    runtime = setup()
    _deliver(emulator, (DATA / "outlook-test-invite.eml").read_bytes())
    result = await ok(
        call, runtime, "mg_respond_invitation", account="homer", message_id=OUTLOOK_ID, response="tentative"
    )
    assert result["attendee"] == "homer@example.org" and result["sent"]["from"]["address"] == "homer@example.org"
    [entry] = emulator.outbox()
    _message, calendar = _calendar_of(entry.data)
    attendees = [line for line in calendar.replace("\r\n ", "").splitlines() if line.startswith("ATTENDEE")]
    assert len(attendees) == 1 and "PARTSTAT=TENTATIVE" in attendees[0] and "homer@example.org" in attendees[0]


REFUSALS = [
    ("broken-cal@example.net", BROKEN, "not an invitation"),
    (
        "cancel-1@icloud.example",
        _variant("cancel-1@icloud.example", ("METHOD:REQUEST\r\nPRODID", "METHOD:CANCEL\r\nPRODID")),
        "cancelled",
    ),
    (
        "reply-1@icloud.example",
        _variant("reply-1@icloud.example", ("METHOD:REQUEST\r\nPRODID", "METHOD:PUBLISH\r\nPRODID")),
        "method is PUBLISH",
    ),
    (
        "noorg-1@icloud.example",
        _variant("noorg-1@icloud.example", ("ORGANIZER;CN=Jana:mailto:jana@icloud.example\r\n", "")),
        "no organizer",
    ),
    (
        "other-1@icloud.example",
        _variant("other-1@icloud.example", ("mailto:homer@example.com", "mailto:bart@example.com")),
        "among the invitation's attendees",
    ),
]


@pytest.mark.parametrize(("message_id", "raw", "words"), REFUSALS, ids=[r[2] for r in REFUSALS])
async def test_refusals_send_nothing(
    setup: Callable[..., Runtime], emulator: GmailEmulator, call: Call, message_id: str, raw: bytes, words: str
) -> None:
    runtime = setup()
    _deliver(emulator, raw)
    refused = await error(
        call, runtime, "mg_respond_invitation", account="homer", message_id=message_id, response="declined"
    )
    assert refused["code"] == "invalid_input" and words in refused["message"]
    assert "Nothing was sent" in refused["message"]
    assert emulator.outbox() == []


async def test_an_invitation_replaced_by_a_newer_one_is_refused(
    setup: Callable[..., Runtime], emulator: GmailEmulator, call: Call
) -> None:
    runtime = setup()
    update = _variant("update-2@icloud.example", ("SEQUENCE:1", "SEQUENCE:2"), ("Subject: Pozvánka", "Subject: Změna"))
    _deliver(emulator, APPLE, update)
    refused = await error(
        call, runtime, "mg_respond_invitation", account="homer", message_id=APPLE_ID, response="accepted"
    )
    assert "newer version" in refused["message"] and "update-2@icloud.example" in refused["message"]
    assert emulator.outbox() == []
    answered = await ok(
        call,
        runtime,
        "mg_respond_invitation",
        account="homer",
        message_id="update-2@icloud.example",
        response="accepted",
    )
    assert answered["sequence"] == 2


async def test_the_send_policy_decides(setup: Callable[..., Runtime], emulator: GmailEmulator, call: Call) -> None:
    _deliver(emulator, APPLE)
    cannot = await error(
        call, setup(can_send=False), "mg_respond_invitation", account="homer", message_id=APPLE_ID, response="accepted"
    )
    assert cannot["code"] == "send_forbidden"
    elsewhere = await error(
        call,
        setup(allowed_recipients=["*@example.com"]),
        "mg_respond_invitation",
        account="homer",
        message_id=APPLE_ID,
        response="accepted",
    )
    assert elsewhere["code"] == "send_forbidden" and JANA in elsewhere["message"]
    assert emulator.outbox() == []
