"""The --wait watcher as a real process (`python -m mcp_multi_gmail --wait`): one stdout line on new
mail, its files, and a warning line for arguments it does not know."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.watch.state import KNOWN_FILE, OWNER_FILE
from support import gmail_env
from support.watch_mailboxes import OSOBNI, new_mail_line
from support.watching import mail


@pytest.fixture
def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MG_")}


def test_watcher_process_wakes_on_waiting_mail(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, clean_env: dict[str, str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    today = datetime.now(UTC).date().isoformat()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--config", str(config_path), "--wait",
         "--since", f"osobni={today}", "--max", "1m", "--interval", "1m"],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60,
        env={**clean_env, **gmail_env(emulator), "MG_WATCH_DIR": str(state_dir)},
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [new_mail_line("osobni 1")]
    assert (state_dir / OWNER_FILE).exists() and (state_dir / KNOWN_FILE).exists()
    assert "hlídač:" in done.stderr


def test_watcher_process_ignores_unknown_arguments_and_still_watches(
    emulator: GmailEmulator, config_path: Path, state_dir: Path, clean_env: dict[str, str]
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    today = datetime.now(UTC).date().isoformat()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "--wait", "--config", str(config_path), "--verbose",
         "--since", f"osobni={today}", "--max=1m", "--interval", "1m", "navic"],
        stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60,
        env={**clean_env, **gmail_env(emulator), "MG_WATCH_DIR": str(state_dir)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [new_mail_line("osobni 1")]
    assert "POZOR: hlídač přeskočil neznámé argumenty: --verbose navic" in done.stderr.splitlines()
