"""What the watcher tests share: a clock that moves only when the watcher sleeps, and their mail."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from mcp_multi_gmail.watch.args import WatchPlan
from mcp_multi_gmail.watch.check import imap_check


def boundary() -> str:
    """Yesterday as a `--since` anchor: whatever the emulator holds now is inside the window."""
    return (datetime.now(UTC) - timedelta(days=1)).date().isoformat()


def at_hour(hour: int) -> datetime:
    return datetime(2026, 10, 5, hour, 0).astimezone()


def mail(to: str, sender: str = "anna@example.org", *, subject: str = "Schůzka") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    msg.set_content("Dobrý den, posílám podklady.")
    return msg


class FakeTime:
    """A clock that moves only when the watcher sleeps; `on_sleep[n]` runs during the n-th sleep."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.sleeps = 0
        self.on_sleep: dict[int, Callable[[], object]] = {}
        self.jump_to: dict[int, datetime] = {}

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float, abort: threading.Event) -> None:
        self.sleeps += 1
        self.now = self.jump_to.get(self.sleeps, self.now + timedelta(seconds=seconds))
        hook = self.on_sleep.get(self.sleeps)
        if hook is not None:
            hook()


def fake_time_options(plan: WatchPlan, state_dir: Path, fake: FakeTime) -> dict[str, Any]:
    """A Watcher's options for `plan` over the real check, on `fake`'s clock, with a parent that stays."""
    return {
        "state_dir": state_dir,
        "check": imap_check(plan.config, plan.endpoint),
        "interval_s": plan.interval_s,
        "max_s": plan.max_s,
        "hours": plan.hours,
        "clock": fake.clock,
        "sleep": fake.sleep,
        "ppid": lambda: 4242,
    }
