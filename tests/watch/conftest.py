"""What the --wait watcher's tests share: a watcher over the real emulator-backed check, planned by
the real argument handling, with a clock that moves only when it sleeps (tests/support/watching.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.watch.args import WatchArgs, plan_watch
from mcp_multi_gmail.watch.loop import Watcher
from support import gmail_env
from support.watch_mailboxes import ACCOUNTS
from support.watching import FakeTime, at_hour, boundary, fake_time_options


@pytest.fixture
def config_path(write_config: Callable[..., Path]) -> Path:
    return write_config(ACCOUNTS)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "addon"
    path.mkdir()
    return path


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime(at_hour(10))


@pytest.fixture
def logs() -> list[str]:
    return []


@pytest.fixture
def make(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, fake: FakeTime, logs: list[str]
) -> Callable[..., Watcher]:
    """A watcher over the real emulator-backed check, planned by the real argument handling."""

    def build(*boxes: str, hours: str | None = None, max_time: str = "15m", **overrides: Any) -> Watcher:
        plan = plan_watch(
            WatchArgs(
                config_path=config_path,
                since=[f"{box}={boundary()}" for box in boxes or ("osobni",)],
                interval="5m",
                max_time=max_time,
                hours=hours,
                layout=None,
                environ=gmail_env(emulator),
            )
        )
        options = fake_time_options(plan, state_dir, fake)
        options.update(
            {
                "log": logs.append,
            }
        )
        options.update(overrides)
        return Watcher(plan.watched, **options)

    return build
