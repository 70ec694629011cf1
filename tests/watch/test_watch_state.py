"""The --wait watcher's files (watch/state.py): the mail it knew and its claim, kept per mailbox,
a broken state read as empty, an unwritable claim a bad start."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.watch.loop import Watcher
from mcp_multi_gmail.watch.state import KNOWN_FILE, OWNER_FILE, load_known
from support.watch_mailboxes import OSOBNI, new_mail_line
from support.watching import mail


def test_state_and_claim_files(emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path) -> None:
    info = emulator.deliver(OSOBNI, mail(OSOBNI))
    assert make().run().code == 0
    known_path, owner_path = state_dir / KNOWN_FILE, state_dir / OWNER_FILE
    assert json.loads(known_path.read_text(encoding="utf-8")) == {"version": 1, "known": {"osobni": [info.header_id]}}
    assert stat.S_IMODE(known_path.stat().st_mode) == 0o600
    assert not (state_dir / (KNOWN_FILE + ".tmp")).exists()
    # The claim stays after the exit: an older watcher finding it missing would think it still owns it.
    assert re.fullmatch(rf"{os.getpid()} \d{{13}} [0-9a-z]+\n", owner_path.read_text(encoding="utf-8"))
    assert stat.S_IMODE(owner_path.stat().st_mode) == 0o600


def test_state_of_other_mailboxes_is_kept(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path
) -> None:
    (state_dir / KNOWN_FILE).write_text(json.dumps({"version": 1, "known": {"prace": ["a@b"]}}), encoding="utf-8")
    assert make().run().code == 4
    assert load_known(state_dir / KNOWN_FILE) == {"prace": {"a@b"}, "osobni": set()}


@pytest.mark.parametrize("content", ["{", '{"version": 2, "known": {}}', '{"version": 1, "known": []}', "[]"])
def test_broken_state_counts_as_empty(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path, content: str
) -> None:
    emulator.deliver(OSOBNI, mail(OSOBNI))
    (state_dir / KNOWN_FILE).write_text(content, encoding="utf-8")
    assert make().run().line == new_mail_line("osobni 1")


def test_unwritable_claim_is_a_bad_start(make: Callable[..., Watcher], tmp_path: Path) -> None:
    outcome = make(state_dir=tmp_path / "chybi").run()
    assert outcome.code == 6
    assert outcome.line.startswith(f"chyba: nejde zapsat {tmp_path / 'chybi' / OWNER_FILE}: ")


def test_state_written_by_1_5_0_with_bracketed_ids_is_understood(
    emulator: GmailEmulator, make: Callable[..., Watcher], state_dir: Path
) -> None:
    # 1.5.0 kept the envelope's Message-ID with its angle brackets: the first watcher after the
    # upgrade must not wake once more for mail that was already reported.
    known = emulator.deliver(OSOBNI, mail(OSOBNI))
    fresh = mail(OSOBNI)
    state = {"version": 1, "known": {"osobni": [f"<{known.header_id}>"], "prace": ["<x@example.org>", "uid:7"]}}
    (state_dir / KNOWN_FILE).write_text(json.dumps(state), encoding="utf-8")
    assert make().run().code == 4
    emulator.deliver(OSOBNI, fresh)
    assert make().run().line == new_mail_line("osobni 1")
    saved = load_known(state_dir / KNOWN_FILE)
    assert saved["osobni"] == {known.header_id, fresh["Message-ID"].strip("<>")}
    assert saved["prace"] == {"x@example.org", "uid:7"}
