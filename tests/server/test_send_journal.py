"""The send journal: a repeat after a restart is refused, and a journal that cannot be trusted
stops the send before anything goes out."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator, SmtpFault
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE, SendJournal
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

OSOBNI = {"name": "o", "address": "osobni@example.cz", "password": "osobniheslohesla", "can_send": True}
SEND = {
    "account": "o",
    "to": ["petr@partner.example"],
    "subject": "Nabídka",
    "body": "Posílám nabídku.",
    "quote_original": False,
    "signature": False,
}


async def test_a_restarted_server_refuses_the_repeat_whatever_sent_shows(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    # Filed at once keeps the test quick; never filed is covered by the crash tests.
    emulator.set_knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)
    config = write_config([OSOBNI])
    first = make_runtime(config)
    sent = await ok(call, first, "mg_send_message", **SEND)
    restarted = make_runtime(config)  # a new process: nothing remembered in memory, same state folder
    assert restarted.state_folder() == first.state_folder() and not restarted.handed_over
    refused = await error(call, restarted, "mg_send_message", **SEND)
    assert refused["code"] == "duplicate_send" and sent["message_id"] in refused["message"]
    assert "send journal" in refused["message"]  # answered from the journal, before Sent is searched
    assert len(emulator.outbox()) == 1
    again = await ok(call, restarted, "mg_send_message", **SEND, repeat=True)  # the user insists
    assert again["message_id"] != sent["message_id"] and len(emulator.outbox()) == 2
    journal = first.state_folder() / JOURNAL_FILE
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600


async def test_a_send_gmail_refused_before_data_is_not_journalled(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> None:
    emulator.add_smtp_fault(SmtpFault("mail", "421"))
    runtime = make_runtime(write_config([OSOBNI]))
    failed = await error(call, runtime, "mg_send_message", **SEND)
    assert "Nothing was sent" in failed["message"] and emulator.outbox() == []
    await ok(call, runtime, "mg_send_message", **SEND)  # not refused as a duplicate
    assert len(emulator.outbox()) == 1


async def test_an_unwritable_journal_stops_the_send(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be")
    runtime = make_runtime(write_config([OSOBNI]))
    runtime.state_dir = blocker / "state"
    failed = await error(call, runtime, "mg_send_message", **SEND)
    assert failed["code"] == "upstream_error" and failed["retryable"] is False
    assert "cannot be written" in failed["message"] and "Nothing was sent" in failed["message"]
    assert emulator.outbox() == [] and emulator.smtp_sessions() >= 1  # stopped after RCPT, before DATA


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
async def test_a_read_only_state_folder_stops_the_send(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    tmp_path: Path,
) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    runtime = make_runtime(write_config([OSOBNI]))
    runtime.state_dir = folder
    try:
        failed = await error(call, runtime, "mg_send_message", **SEND)
    finally:
        folder.chmod(0o700)
    assert "cannot be written" in failed["message"] and emulator.outbox() == []


@pytest.mark.parametrize("content", ["{not json", '{"version": 1, "sends": [{"account": "o"}]}', '["x"]'])
async def test_a_corrupt_journal_is_reported_and_kept(
    emulator: GmailEmulator,
    call: Call,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    content: str,
) -> None:
    runtime = make_runtime(write_config([OSOBNI]))
    journal = runtime.state_folder() / JOURNAL_FILE
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(content)
    failed = await error(call, runtime, "mg_send_message", **SEND)
    assert "is damaged" in failed["message"] and str(journal) in failed["message"]
    assert "Nothing was sent" in failed["message"]
    assert emulator.outbox() == [] and journal.read_text() == content  # never silently emptied


def test_entries_expire_after_seven_days(tmp_path: Path) -> None:
    journal = SendJournal(tmp_path)
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    journal.record("o", "old@example.cz", now - timedelta(days=8))
    journal.record("o", "recent@example.cz", now - timedelta(days=6))
    assert journal.find("o", "old@example.cz", now) is None
    found = journal.find("o", "RECENT@example.cz", now)  # Message-IDs compare case-insensitively
    assert found is not None and found.handed_over == now - timedelta(days=6)
    assert journal.find("jine", "recent@example.cz", now) is None  # another mailbox's send
    journal.record("o", "new@example.cz", now)
    assert "old@example.cz" not in journal.path.read_text()  # pruned on the next write


def _record_many(folder: str, prefix: str) -> None:
    journal = SendJournal(Path(folder))
    for i in range(15):
        journal.record("o", f"{prefix}-{i}@example.cz")


def test_server_processes_of_several_conversations_lose_no_entry(tmp_path: Path) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(3, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_record_many, [str(tmp_path)] * 3, ["a", "b", "c"]))
    journal = SendJournal(tmp_path)
    missing = [f"{p}-{i}" for p in "abc" for i in range(15) if journal.find("o", f"{p}-{i}@example.cz") is None]
    assert missing == []
