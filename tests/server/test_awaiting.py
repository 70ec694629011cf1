"""mg_awaiting_replies against the emulator: who still owes the user an answer, at a flat cost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
ALIAS = "jana@rodina.example"
KAREL = "karel@example.org"


def mail(
    sender: str, to: str, subject: str, msg_id: str, *, answers: str | None = None, **headers: str
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{msg_id}>"
    if answers is not None:
        msg["In-Reply-To"] = f"<{answers}>"
        msg["References"] = f"<{answers}>"
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content("Dobrý den, ozvěte se prosím.")
    return msg


def ago(days: float) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def sent(emulator: GmailEmulator, to: str, subject: str, msg_id: str, days: float, **kw: Any) -> None:
    emulator.append(
        ME, mail(kw.pop("sender", ME), to, subject, msg_id, **kw), labels=["\\Sent"], internaldate=ago(days)
    )


def arrives(emulator: GmailEmulator, msg: EmailMessage, days: float) -> None:
    emulator.deliver(ME, msg, internaldate=ago(days))


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    account = {
        "name": "o",
        "address": ME,
        "password": "osobniheslohesla",
        "aliases": [{"address": ALIAS}],
    }
    return make_runtime(write_config([account]))


async def test_who_still_owes_an_answer(emulator: GmailEmulator, call: Call, runtime: Runtime) -> None:
    sent(emulator, KAREL, "Faktura za listopad", "faktura@example.cz", 6)
    sent(emulator, "ucetni@example.net", "Daňové přiznání", "dane@example.cz", 5)
    arrives(
        emulator,
        mail(
            "ucetni@example.net",
            ME,
            "Automatická odpověď: Daňové přiznání",
            "ooo@example.net",
            answers="dane@example.cz",
            Auto_Submitted="auto-replied",
        ),
        4.9,
    )
    sent(emulator, "petr@example.org", "Chata", "chata@example.cz", 5)
    arrives(emulator, mail("petr@example.org", ME, "Re: Chata", "chata-re@example.org", answers="chata@example.cz"), 4)
    # Gmail puts a reply with a new subject into a thread of its own: its In-Reply-To still ends the wait.
    sent(emulator, "eva@example.org", "Smlouva", "smlouva@example.cz", 5)
    arrives(
        emulator, mail("eva@example.org", ME, "Podepsáno", "podepsano@example.org", answers="smlouva@example.cz"), 3
    )
    sent(emulator, "noreply@shop.example", "Reklamace", "reklamace@example.cz", 5)
    sent(emulator, ME, "Poznámka pro sebe", "sebe@example.cz", 5)
    sent(emulator, KAREL, "Včera", "vcera@example.cz", 1)  # not yet overdue
    sent(emulator, KAREL, "Dávno", "davno@example.cz", 45)  # beyond the window
    sent(emulator, "martin@example.org", "Z aliasu", "alias@example.cz", 4, sender=ALIAS)
    # A delivery report is no answer.
    arrives(
        emulator,
        mail(
            "mailer-daemon@googlemail.com",
            ME,
            "Delivery Status Notification",
            "dsn@google.com",
            answers="alias@example.cz",
        ),
        3.9,
    )
    arrives(
        emulator, mail("ivan@example.org", ME, "Program", "program@lists.example", List_Id="<conf.lists.example>"), 6
    )
    sent(emulator, "konference@lists.example", "Re: Program", "list@example.cz", 5, answers="program@lists.example")
    sent(emulator, "ivan@example.org", "Accepted: Porada", "porada@example.cz", 5)

    data = await ok(call, runtime, "mg_awaiting_replies", account="o")
    subjects = [t["subject"] for t in data["threads"]]
    assert subjects == ["Faktura za listopad", "Daňové přiznání", "Z aliasu"]  # longest waiting first
    first, away, alias = data["threads"]
    assert first["owed_by"] == [{"name": None, "address": KAREL}] and first["days_waiting"] == 6
    assert first["auto_reply_came"] is False and first["reminder"] is None
    assert away["auto_reply_came"] is True  # the out-of-office keeps it waiting, and says so
    assert alias["owed_by"][0]["address"] == "martin@example.org"
    assert data["total_threads"] == 3 and data["next_page_token"] is None

    # Yesterday's message shows with older_than_days 0; an answer that arrives ends the wait.
    fresh = await ok(call, runtime, "mg_awaiting_replies", account="o", older_than_days=0)
    assert "Včera" in [t["subject"] for t in fresh["threads"]]
    arrives(emulator, mail(KAREL, ME, "Re: Faktura za listopad", "f-re@example.org", answers="faktura@example.cz"), 0)
    after = await ok(call, runtime, "mg_awaiting_replies", account="o")
    assert [t["subject"] for t in after["threads"]] == ["Daňové přiznání", "Z aliasu"]


async def test_pages_with_a_cursor(emulator: GmailEmulator, call: Call, runtime: Runtime) -> None:
    for n in range(5):
        sent(emulator, KAREL, f"Dotaz {n}", f"dotaz-{n}@example.cz", 10 - n)
    first = await ok(call, runtime, "mg_awaiting_replies", account="all", max_results=2)
    assert [t["subject"] for t in first["threads"]] == ["Dotaz 0", "Dotaz 1"]
    emulator.reset_counters()
    second = await ok(
        call, runtime, "mg_awaiting_replies", account="all", max_results=2, page_token=first["next_page_token"]
    )
    # Nothing changed in All Mail since page 1 (its view stamp says so): the list is not read again.
    assert [c.name for c in emulator.commands()] == ["LOGIN", "EXAMINE", "LOGOUT"]
    # An answer between pages changes the stamp: the rest is read afresh, and the answered one is gone.
    arrives(emulator, mail(KAREL, ME, "Re: Dotaz 3", "dotaz-3-re@example.org", answers="dotaz-3@example.cz"), 0)
    third = await ok(
        call, runtime, "mg_awaiting_replies", account="all", max_results=2, page_token=second["next_page_token"]
    )
    assert [t["subject"] for t in second["threads"]] == ["Dotaz 2", "Dotaz 3"]
    assert [t["subject"] for t in third["threads"]] == ["Dotaz 4"]
    assert third["next_page_token"] is None and first["total_threads"] == 5 and third["total_threads"] == 4


@pytest.mark.parametrize("threads", [5, 60])
async def test_command_count_does_not_grow_with_sent_threads(
    emulator: GmailEmulator, call: Call, runtime: Runtime, threads: int
) -> None:
    for n in range(threads):
        sent(emulator, KAREL, f"Vlákno {n}", f"v-{n}@example.cz", 4 + n / 100)
        if n % 2:
            arrives(
                emulator, mail(KAREL, ME, f"Re: Vlákno {n}", f"v-{n}-re@example.org", answers=f"v-{n}@example.cz"), 3
            )
    await ok(call, runtime, "mg_awaiting_replies", account="o")  # warm: the server knows where All Mail is
    emulator.reset_counters()
    data = await ok(call, runtime, "mg_awaiting_replies", account="o", max_results=100)
    assert data["total_threads"] == threads - threads // 2
    names = [c.name for c in emulator.commands()]
    assert names == ["LOGIN", "EXAMINE", "UID SEARCH", "UID FETCH", "LOGOUT"], names
