"""mg_remind against the emulator: reminders are labels on the thread, read back, undoable, refused clearly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
KAREL = "karel@example.org"
PARENT = "Připomínky"
NOW = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)  # 7 December already, 00:30 in Prague


def mail(sender: str, to: str, subject: str, msg_id: str, answers: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, to, subject, f"<{msg_id}>"
    if answers:
        msg["In-Reply-To"] = msg["References"] = f"<{answers}>"
    msg.set_content("Prosím o odpověď.")
    return msg


def thread_of(emulator: GmailEmulator) -> str:
    emulator.append(ME, mail(ME, KAREL, "Faktura", "faktura@example.cz"), labels=["\\Sent"])
    emulator.deliver(ME, mail(KAREL, ME, "Re: Faktura", "faktura-re@example.org", "faktura@example.cz"))
    emulator.append(
        ME, mail(ME, KAREL, "Re: Faktura", "faktura-2@example.cz", "faktura-re@example.org"), labels=["\\Sent"]
    )
    return str(emulator.messages(ME)[0].thrid)


def labels_on(emulator: GmailEmulator) -> list[set[str]]:
    return [{lb for lb in m.labels if lb.startswith(PARENT)} for m in emulator.messages(ME)]


@pytest.fixture
def make(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Callable[..., Runtime]:
    def build(**extra: Any) -> Runtime:
        account = {"name": "o", "address": ME, "password": "osobniheslohesla", **extra}
        runtime = make_runtime(write_config([account], timezone="Europe/Prague"))
        runtime.clock = lambda: NOW
        return runtime

    return build


async def test_set_move_undo_and_clear(emulator: GmailEmulator, call: Call, make: Callable[..., Runtime]) -> None:
    runtime = make()
    thread = thread_of(emulator)
    emulator.add_labels(ME, "faktura@example.cz", [f"{PARENT}/moje"])  # the user's own sublabel
    # 7 December is today in Prague, though still the 6th in UTC.
    first = await ok(call, runtime, "mg_remind", account="o", thread_id=thread, on="2026-12-07")
    assert first["reminder"] == {"kind": "reply", "on": "2026-12-07", "label": f"{PARENT}/2026-12-07 odpověď"}
    assert first["added"] == [f"{PARENT}/2026-12-07 odpověď"] and first["messages"] == 3
    assert all(f"{PARENT}/2026-12-07 odpověď" in found for found in labels_on(emulator))
    moved = await ok(call, runtime, "mg_remind", account="o", thread_id=thread, on="2026-12-10T09:30", kind="revisit")
    assert moved["reminder"]["label"] == f"{PARENT}/2026-12-10 09.30 znovu"
    assert moved["removed"] == [f"{PARENT}/2026-12-07 odpověď"]
    assert all(found - {f"{PARENT}/moje"} == {f"{PARENT}/2026-12-10 09.30 znovu"} for found in labels_on(emulator))
    # What it reports is what the mailbox shows: per label, the messages that got it or lost it.
    assert [(c["name"], c["action"], c["changed"], c["failed"]) for c in moved["changes"]] == [
        (f"{PARENT}/2026-12-10 09.30 znovu", "added", 3, 0),
        (f"{PARENT}/2026-12-07 odpověď", "removed", 3, 0),
    ]
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=moved["undo_token"])
    assert undone["restored"] == 6  # three messages: one label off, one back on
    assert all(found - {f"{PARENT}/moje"} == {f"{PARENT}/2026-12-07 odpověď"} for found in labels_on(emulator))
    cleared = await ok(call, runtime, "mg_remind", account="o", thread_id=thread, clear=True)
    assert cleared["reminder"] is None and cleared["removed"] == [f"{PARENT}/2026-12-07 odpověď"]
    assert labels_on(emulator) == [{f"{PARENT}/moje"}, set(), set()]  # the user's own sublabel stays


async def test_expect_nothing_takes_the_thread_off_the_waiting_list(
    emulator: GmailEmulator, call: Call, make: Callable[..., Runtime]
) -> None:
    runtime = make()
    runtime.clock = lambda: datetime.now(UTC)
    emulator.append(
        ME,
        mail(ME, KAREL, "Pro info", "info@example.cz"),
        labels=["\\Sent"],
        internaldate=datetime.now(UTC) - timedelta(days=5),
    )
    waiting = await ok(call, runtime, "mg_awaiting_replies", account="o")
    [entry] = waiting["threads"]
    marked = await ok(call, runtime, "mg_remind", account="o", thread_id=entry["thread_id"], expect_nothing=True)
    assert marked["expect_nothing"] is True and marked["added"] == [f"{PARENT}/nic nečekám"]
    assert (await ok(call, runtime, "mg_awaiting_replies", account="o"))["threads"] == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"on": "2026-12-06"}, "already past"),
        ({"on": "2026-12-07T00:15"}, "already past"),
        ({"on": "2029-01-01"}, "more than two years ahead"),
        ({"on": "zítra"}, "not a date"),
        ({"on": "2026-02-30"}, "not a date"),
        ({"on": "2026-12-08", "kind": "later"}, '"reply" or "revisit"'),
        ({}, "exactly one of"),
        ({"on": "2026-12-08", "clear": True}, "exactly one of"),
    ],
)
async def test_refusals_change_nothing(
    emulator: GmailEmulator, call: Call, make: Callable[..., Runtime], args: dict[str, Any], words: str
) -> None:
    runtime = make()
    thread = thread_of(emulator)
    body = await error(call, runtime, "mg_remind", account="o", thread_id=thread, **args)
    assert body["code"] == "invalid_input" and words in body["message"]
    assert labels_on(emulator) == [set(), set(), set()]


async def test_a_thread_not_found_and_a_clashing_parent(
    emulator: GmailEmulator, call: Call, make: Callable[..., Runtime]
) -> None:
    thread = thread_of(emulator)
    missing = await error(call, make(), "mg_remind", account="o", thread_id="123456789", on="2026-12-08")
    assert missing["code"] == "not_found"
    for extra in (
        {"reminder_label": "processed"},
        {"classification_labels": {"Asistent/akce": "akce"}, "reminder_label": "Asistent"},
    ):
        body = await error(call, make(**extra), "mg_remind", account="o", thread_id=thread, on="2026-12-08")
        assert body["code"] == "label_forbidden" and "clashes" in body["message"]
    assert labels_on(emulator) == [set(), set(), set()]


async def test_expect_reply_by_on_send_and_on_a_draft_sent_later_from_gmail(
    emulator: GmailEmulator, call: Call, make: Callable[..., Runtime]
) -> None:
    runtime = make(can_send=True)
    runtime.clock = lambda: datetime.now(UTC)
    later = (datetime.now(UTC) + timedelta(days=5)).date().isoformat()
    refused = await error(
        call,
        runtime,
        "mg_send_message",
        account="o",
        to=[KAREL],
        subject="Dotaz",
        body="Ahoj",
        expect_reply_by="2020-01-01",
    )
    assert refused["code"] == "invalid_input" and "already past" in refused["message"]
    assert emulator.outbox() == []  # nothing went out
    sent = await ok(
        call, runtime, "mg_send_message", account="o", to=[KAREL], subject="Dotaz", body="Ahoj", expect_reply_by=later
    )
    assert sent["reply_reminder"]["set"] is True
    assert sent["reply_reminder"]["reminder"] == {"kind": "reply", "on": later, "label": f"{PARENT}/{later} odpověď"}
    copy = emulator.message(ME, sent["message_id"])
    assert copy is not None and f"{PARENT}/{later} odpověď" in copy.labels
    draft = await ok(
        call, runtime, "mg_save_draft", account="o", to=[KAREL], subject="Návrh", body="Ahoj", expect_reply_by=later
    )
    assert draft["reply_reminder"]["set"] is True
    # The user sends the draft from Gmail: the same message leaves Drafts for Sent with its labels.
    emulator.remove_labels(ME, draft["message_id"], ["\\Draft"])
    emulator.add_labels(ME, draft["message_id"], ["\\Sent"])
    waiting = await ok(call, runtime, "mg_awaiting_replies", account="o", older_than_days=0)
    reminders = {t["subject"]: t["reminder"] for t in waiting["threads"]}
    assert reminders["Návrh"] == {"kind": "reply", "on": later, "label": f"{PARENT}/{later} odpověď"}
    assert reminders["Dotaz"] is not None
