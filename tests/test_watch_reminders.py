"""The watcher wakes for a reminder falling due while it runs: a content-free Czech line, counts per mailbox."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.config import UserZone
from mcp_multi_gmail.watch.args import WatchArgs, plan_watch
from mcp_multi_gmail.watch.check import imap_check
from mcp_multi_gmail.watch.loop import EXIT_NEW_MAIL, LINE_TIME_UP, REMINDER_ADVICE, Watcher
from support import gmail_env
from support.watching import FakeTime, at_hour, boundary, fake_time_options, mail

OSOBNI = "osobni@example.cz"
ZONE = UserZone("Europe/Prague")


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime(at_hour(10))


def reminder_at(emulator: GmailEmulator, fake: FakeTime, minutes: int) -> str:
    """An old message (outside the watch window) whose thread has a reminder `minutes` after the fake start."""
    msg = mail(OSOBNI, subject="Smlouva k podpisu")
    emulator.deliver(OSOBNI, msg, internaldate=datetime.now(UTC) - timedelta(days=3))
    due = ZONE.local(fake.now + timedelta(minutes=minutes))
    label = f"Připomínky/{due.date().isoformat()} {due.hour:02d}.{due.minute:02d} znovu"
    emulator.add_labels(OSOBNI, str(msg["Message-ID"]).strip("<>"), [label])
    return label


def watcher(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, fake: FakeTime, **extra: Any
) -> Watcher:
    account = {"name": "osobni", "address": OSOBNI, "password": "osobniheslohesla"}
    config = write_config([account], timezone="Europe/Prague")
    plan = plan_watch(
        WatchArgs(
            config_path=config,
            since=[f"osobni={boundary()}"],
            interval="5m",
            max_time="15m",
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
            follow=bool(extra.get("follow")),
        )
    )
    options = fake_time_options(plan, tmp_path, fake)
    options.update({"log": lambda _line: None, "check": imap_check(plan.config, plan.endpoint, now=fake.clock)})
    options.update(extra)
    return Watcher(plan.watched, **options)


def test_follow_tells_once_when_a_reminder_falls_due(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, fake: FakeTime
) -> None:
    label = reminder_at(emulator, fake, 7)
    lines: list[str] = []
    outcome = watcher(emulator, write_config, tmp_path, fake, follow=True, emit=lines.append).run()
    assert outcome.line == LINE_TIME_UP
    assert lines == [f"připomínky na dnešek: osobni 1. {REMINDER_ADVICE} Hlídač běží dál."]
    assert "Smlouva" not in lines[0] and label not in lines[0]  # nothing of the content


def test_wait_ends_with_the_reminder_line(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, fake: FakeTime
) -> None:
    reminder_at(emulator, fake, 7)
    outcome = watcher(emulator, write_config, tmp_path, fake).run()
    assert outcome.code == EXIT_NEW_MAIL
    assert outcome.line == f"připomínky na dnešek: osobni 1. {REMINDER_ADVICE}"
    assert fake.sleeps == 2  # not before it fell due (rounds at 0, 5 and 10 minutes)
