"""The --wait watcher ends from outside: a newer watcher takes over, the parent goes, a stop or
SIGTERM arrives, even while Gmail is slow to answer."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.watch.args import WatchArgs
from mcp_multi_gmail.watch.loop import LINE_ABORTED, LINE_ORPHANED, LINE_REPLACED, Watcher, run_watcher
from mcp_multi_gmail.watch.state import KNOWN_FILE, OWNER_FILE
from support import gmail_env
from support.watching import FakeTime, boundary


def test_a_newer_watcher_takes_over(make: Callable[..., Watcher], fake: FakeTime, state_dir: Path) -> None:
    newer = "999 1760000000000 abc123"
    fake.on_sleep[1] = lambda: (state_dir / OWNER_FILE).write_text(newer + "\n", encoding="utf-8")
    outcome = make().run()
    assert (outcome.code, outcome.line) == (3, LINE_REPLACED)
    assert (state_dir / OWNER_FILE).read_text(encoding="utf-8") == newer + "\n"


def test_a_removed_claim_still_counts_as_ours(make: Callable[..., Watcher], fake: FakeTime, state_dir: Path) -> None:
    fake.on_sleep[1] = lambda: (state_dir / OWNER_FILE).unlink()
    watcher = make()
    assert watcher.run().code == 4
    assert watcher.checks == 4


def test_parent_gone_ends_with_3(make: Callable[..., Watcher]) -> None:
    parents = iter([4242, 4242, 1])
    outcome = make(ppid=lambda: next(parents)).run()
    assert (outcome.code, outcome.line) == (3, LINE_ORPHANED)


def test_parent_check_is_skipped_when_started_by_init(make: Callable[..., Watcher]) -> None:
    parents = iter([1, 777, 778, 779, 780])
    assert make(ppid=lambda: next(parents)).run().code == 4


def test_external_stop_ends_promptly(make: Callable[..., Watcher]) -> None:
    abort = threading.Event()
    watcher = make(sleep=lambda seconds, event: event.wait(seconds), interval_s=60.0, abort=abort)
    timer = threading.Timer(0.2, abort.set)
    started = time.monotonic()
    timer.start()
    outcome = watcher.run()
    timer.join()
    assert (outcome.code, outcome.line) == (4, LINE_ABORTED)
    assert time.monotonic() - started < 5  # against 60 s (10 s); the slack is for a machine under load


def test_stop_during_a_slow_gmail_answer_ends_promptly(state_dir: Path, fake: FakeTime) -> None:
    abort = threading.Event()
    release = threading.Event()

    def stuck(name: str, since: datetime) -> set[str]:
        release.wait(10)
        return set()

    watcher = Watcher({"osobni": datetime.now(UTC)}, state_dir=state_dir, check=stuck, clock=fake.clock, abort=abort)
    timer = threading.Timer(0.2, abort.set)
    started = time.monotonic()
    timer.start()
    try:
        outcome = watcher.run()
    finally:
        release.set()
        timer.join()
    assert (outcome.code, outcome.line) == (4, LINE_ABORTED)
    assert time.monotonic() - started < 5  # against 60 s (10 s); the slack is for a machine under load
    assert not (state_dir / KNOWN_FILE).exists()  # a half-done round is not saved


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_sigterm_stops_run_watcher(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    previous = signal.getsignal(signal.SIGTERM)
    timer.start()
    code = run_watcher(
        WatchArgs(
            config_path=config_path,
            since=[f"osobni={boundary()}"],
            interval="1m",
            max_time="5m",
            hours=None,
            layout=None,
            environ=gmail_env(emulator),
        ),
        state_dir=state_dir,
    )
    timer.join()
    assert code == 4
    assert capsys.readouterr().out == LINE_ABORTED + "\n"
    assert signal.getsignal(signal.SIGTERM) is previous
