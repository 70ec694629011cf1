"""The pass brings reminders back: due ones stay, an answered reply reminder is reported once and cleared."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from toolcalls import Call, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.config import UserZone
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
KAREL = "karel@example.org"
PARENT = "Připomínky"
ZONE = UserZone("Europe/Prague")


def mail(sender: str, to: str, subject: str, msg_id: str, answers: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, to, subject, f"<{msg_id}>"
    if answers:
        msg["In-Reply-To"] = msg["References"] = f"<{answers}>"
    msg.set_content("Prosím o odpověď.")
    return msg


def since() -> str:
    return (datetime.now(UTC) - timedelta(days=1)).date().isoformat()


def reminder_labels(emulator: GmailEmulator) -> list[set[str]]:
    return [{lb for lb in m.labels if lb.startswith(f"{PARENT}/2")} for m in emulator.messages(ME)]


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    account = {"name": "o", "address": ME, "password": "osobniheslohesla"}
    return make_runtime(write_config([account], timezone="Europe/Prague"))


def sent_thread(emulator: GmailEmulator, subject: str, msg_id: str, days: float) -> str:
    when = datetime.now(UTC) - timedelta(days=days)
    emulator.append(ME, mail(ME, KAREL, subject, msg_id), labels=["\\Sent"], internaldate=when)
    return str(next(m.thrid for m in emulator.messages(ME) if m.header_id == msg_id))


@pytest.mark.parametrize("copied", [False, True], ids=["labels-per-message", "labels-copied-to-replies"])
async def test_an_answered_reply_reminder_is_reported_once_then_cleared(
    emulator: GmailEmulator, call: Call, runtime: Runtime, copied: bool
) -> None:
    emulator.set_knobs(thread_labels_on_replies=copied)
    thread = sent_thread(emulator, "Faktura", "faktura@example.cz", 5)
    later = (ZONE.today(datetime.now(UTC)) + timedelta(days=2)).isoformat()
    await ok(call, runtime, "mg_remind", account="o", thread_id=thread, on=later)
    quiet = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert quiet["reminders_due"] == [] and quiet["awaiting_overdue"] == 1
    emulator.deliver(ME, mail(KAREL, ME, "Re: Faktura", "faktura-re@example.org", "faktura@example.cz"))
    reply_labels = reminder_labels(emulator)[-1]
    assert reply_labels == ({f"{PARENT}/{later} odpověď"} if copied else set())
    answered = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert answered["reminders_due"] == [
        {"account": "o", "thread_id": thread, "subject": "Faktura", "kind": "reply", "on": later, "answered": True}
    ]
    assert answered["awaiting_overdue"] == 0
    assert reminder_labels(emulator) == [set(), set()]  # taken off the whole thread, the reply included
    again = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert again["reminders_due"] == []


async def test_a_due_reminder_stays_until_cleared_and_empty_dates_go_once_a_day(
    emulator: GmailEmulator, call: Call, runtime: Runtime
) -> None:
    now = datetime.now(UTC)
    runtime.clock = lambda: now
    thread = sent_thread(emulator, "Chata", "chata@example.cz", 1)
    tomorrow = (ZONE.today(now) + timedelta(days=1)).isoformat()
    await ok(call, runtime, "mg_remind", account="o", thread_id=thread, on=tomorrow, kind="revisit")
    emulator.add_labels(ME, "chata@example.cz", [f"{PARENT}/moje"])  # the user's own sublabel
    assert (await ok(call, runtime, "mg_next_pass", account="o", since=since()))["reminders_due"] == []
    runtime.clock = lambda: now + timedelta(days=1)  # tomorrow has come in Prague
    for _ in range(2):  # it stays work until cleared or moved
        data = await ok(call, runtime, "mg_next_pass", account="o", since=since())
        assert [(r["kind"], r["on"], r["answered"]) for r in data["reminders_due"]] == [("revisit", tomorrow, None)]
    await ok(call, runtime, "mg_remind", account="o", thread_id=thread, clear=True)
    assert (await ok(call, runtime, "mg_next_pass", account="o", since=since()))["reminders_due"] == []
    assert f"{PARENT}/{tomorrow} znovu" in emulator.labels(ME)  # swept today already: kept until the next day
    runtime.clock = lambda: now + timedelta(days=2)
    await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert f"{PARENT}/{tomorrow} znovu" not in emulator.labels(ME)
    assert f"{PARENT}/moje" in emulator.labels(ME)  # nothing else under the parent is touched


async def test_the_overdue_count_costs_two_commands(emulator: GmailEmulator, call: Call, runtime: Runtime) -> None:
    for n in range(30):
        sent_thread(emulator, f"Dotaz {n}", f"dotaz-{n}@example.cz", 4 + n / 10)
    await ok(call, runtime, "mg_next_pass", account="o", since=since())  # warm: the folders are known
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert data["awaiting_overdue"] == 30
    names = [c.name for c in emulator.commands()]
    # the pass itself: EXAMINE and its window SEARCH (no new mail: no FETCH); the waiting count: one
    # SEARCH and one FETCH; the reminder labels: one LIST (none set, so nothing more)
    assert names == ["LOGIN", "EXAMINE", "UID SEARCH", "UID SEARCH", "UID FETCH", "LIST", "LOGOUT"], names
    # A reply reminder that is not due yet costs nothing more: the window's FETCH shows its labels.
    later = (ZONE.today(datetime.now(UTC)) + timedelta(days=3)).isoformat()
    await ok(call, runtime, "mg_remind", account="o", thread_id=data_thread(emulator), on=later)
    emulator.reset_counters()
    await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert [c.name for c in emulator.commands()] == names
    # A due one on a thread older than the window: one SEARCH of the due labels and one FETCH more.
    old = sent_thread(emulator, "Staré", "stare@example.cz", 45)
    emulator.add_labels(ME, "stare@example.cz", [f"{PARENT}/{ZONE.today(datetime.now(UTC)).isoformat()} znovu"])
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert [(r["thread_id"], r["kind"]) for r in data["reminders_due"]] == [(old, "revisit")]
    assert [c.name for c in emulator.commands()] == [*names[:-1], "UID SEARCH", "UID FETCH", "LOGOUT"]


def data_thread(emulator: GmailEmulator) -> str:
    return str(emulator.messages(ME)[0].thrid)


async def test_a_refused_reminder_listing_never_costs_the_pass_its_mail(
    emulator: GmailEmulator, call: Call, runtime: Runtime
) -> None:
    emulator.deliver(ME, mail(KAREL, ME, "Nová zakázka", "zakazka@example.org"))
    await ok(call, runtime, "mg_next_pass", account="o", since=since())  # warm: the folders are known
    # From here on the only LIST is the one of the reminder labels: Gmail refuses it.
    emulator.add_fault(FaultRule(action="no:[UNAVAILABLE] Temporary failure", match="LIST", times=-1))
    data = await ok(call, runtime, "mg_next_pass", account="o", since=since())
    assert [t["subject"] for t in data["threads"]] == ["Nová zakázka"]
    assert data["reminders_due"] == [] and data["failures"] == []
