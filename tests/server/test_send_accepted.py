"""A send is a success once Gmail accepted it (the final 250 of DATA), whatever happens next.

The call's deadline (`call_timeout_s`) may end the wait for the Sent copy, never the result: the
message went out and must not be sent again, so an error (let alone a retryable one) would invite a
second delivery. A send's deadline also grows with the size of what it uploads, so a large
attachment on a slow line is not cut during DATA (docs/en/configuration.md, `call_timeout_s`).

The deadline here is 3 s, below the configuration's floor of 10 s (a test-only override), and the
emulator's delays are set against it, so each test shows the same order of events as at 10 s in a
few seconds. The margins that do not shrink with the deadline (a login, an SMTP exchange) stay.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosmtplib
import pytest
from toolcalls import Call, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail import deadline
from mcp_multi_gmail.gmail import smtp
from mcp_multi_gmail.mail.sending import send as send_module
from mcp_multi_gmail.mail.sending.journal import SendJournal
from mcp_multi_gmail.runtime import Runtime
from support import wait_until

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
TIMEOUT_S = 3.0  # the deadline of these tests (the configuration accepts 10 s at the least)


@pytest.fixture
def sender(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[..., Runtime], tmp_path: Path
) -> Runtime:
    (tmp_path / "prilohy").mkdir()
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True}
    top = {"attachment_dirs": [str(tmp_path / "prilohy")], "call_timeout_s": 10}
    return make_runtime(write_config([entry], **top), call_timeout_s=TIMEOUT_S)


def attachment(tmp_path: Path, size: int) -> str:
    path = tmp_path / "prilohy" / "data.bin"
    path.write_bytes(bytes(range(256)) * (size // 256))
    return str(path)


async def send(call: Call, runtime: Runtime, **extra: Any) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    data = await ok(
        call, runtime, "mg_send_message", account="o", to=["petr@partner.example"], subject="S", body="B", **extra
    )
    return data, time.monotonic() - started


def one_delivery(emulator: GmailEmulator, runtime: Runtime, message_id: str) -> None:
    outbox = emulator.outbox()
    assert len(outbox) == 1 and f"<{message_id}>".encode() in outbox[0].data
    assert SendJournal(runtime.state_folder()).find("o", message_id) is not None


def not_confirmed(copy: dict[str, Any]) -> None:
    assert copy["saved"] is False and copy["filed_by"] is None
    assert "not confirmed yet" in copy["note"] and "must NOT be sent again" in copy["note"]


async def test_filing_slower_than_the_deadline_is_still_a_success(
    emulator: GmailEmulator, sender: Runtime, call: Call
) -> None:
    # The duplicate check's SEARCH takes 1.5 s and Gmail files 2 s after the send: the deadline of
    # 3 s passes while the server waits for the Sent copy.
    emulator.set_knobs(sent_filing_delay_s=2.0)
    emulator.add_fault(FaultRule("delay:1.5", match="SEARCH", nth=1))
    data, took = await send(call, sender)
    assert took < TIMEOUT_S + 2
    not_confirmed(data["sent_copy"])
    assert "must NOT be sent again" in data["warning"]
    one_delivery(emulator, sender, data["message_id"])
    # Gmail files its own copy later; the server appended none.
    wait_until(lambda: emulator.smtp_pending() == 0, timeout=15)
    copies = [m for m in emulator.messages(ME) if m.header_id == data["message_id"] and "\\Sent" in m.labels]
    assert len(copies) == 1 and not [c for c in emulator.commands() if c.name == "APPEND"]


async def test_a_sent_lookup_hanging_past_the_deadline_is_still_a_success(
    emulator: GmailEmulator, sender: Runtime, call: Call
) -> None:
    # The first look into Sent (the second SEARCH) hangs for 30 s: the deadline cuts it, and the call
    # answers with its success, the copy not confirmed; nothing is appended afterwards.
    emulator.set_knobs(sent_filing_delay_s=1.0)
    emulator.add_fault(FaultRule("delay:30", match="SEARCH", nth=2))
    data, took = await send(call, sender)
    assert TIMEOUT_S - 1 < took < TIMEOUT_S + 2
    not_confirmed(data["sent_copy"])
    one_delivery(emulator, sender, data["message_id"])
    # The worker thread whose SEARCH was cut has let go of its connection (it ended, so no APPEND can follow).
    endpoint = sender.endpoint
    gate = sender.connections.gate(f"{endpoint.imap_host}:{endpoint.imap_port}:{ME}", 4)
    wait_until(lambda: emulator.smtp_pending() == 0 and gate.busy == 0, timeout=15)
    copies = [m for m in emulator.messages(ME) if m.header_id == data["message_id"] and "\\Sent" in m.labels]
    assert len(copies) == 1 and not [c for c in emulator.commands() if c.name == "APPEND"]


async def test_a_slow_upload_is_not_cut_during_data(
    emulator: GmailEmulator, sender: Runtime, call: Call, tmp_path: Path
) -> None:
    # 100 KiB attached (about 140 KB as sent) at 35 KB/s: DATA takes about 4 s, longer than the
    # deadline of 3 s alone, but within the deadline grown by the upload's size (about 4.3 s more).
    path = attachment(tmp_path, 100 * 1024)
    emulator.set_knobs(smtp_upload_bytes_per_s=35_000.0, sent_filing_delay_s=0.5)
    data, took = await send(call, sender, attachments=[path])
    assert took > TIMEOUT_S  # DATA really outlasted the plain deadline
    assert data["sent_copy"]["saved"] is True and data["sent_copy"]["filed_by"] == "gmail"
    one_delivery(emulator, sender, data["message_id"])


async def test_a_slow_upload_and_slow_filing_together(
    emulator: GmailEmulator, sender: Runtime, call: Call, tmp_path: Path
) -> None:
    # 50 KiB (about 70 KB as sent) at 30 KB/s: DATA takes about 2.3 s of the grown deadline of
    # about 5 s; Gmail files 20 s later.
    path = attachment(tmp_path, 50 * 1024)
    emulator.set_knobs(smtp_upload_bytes_per_s=30_000.0, sent_filing_delay_s=20.0)
    data, took = await send(call, sender, attachments=[path])
    grown = TIMEOUT_S + deadline.upload_allowance_s(len(emulator.outbox()[0].data))
    assert took < grown + 2
    not_confirmed(data["sent_copy"])
    one_delivery(emulator, sender, data["message_id"])
    assert not [c for c in emulator.commands() if c.name == "APPEND"]


def test_the_upload_allowance_is_one_second_per_32_kib() -> None:
    assert deadline.upload_allowance_s(0) == 0
    assert deadline.upload_allowance_s(32 * 1024) == 1.0
    # A 10 MB attachment (about 13.7 MB as sent) gets more than the ~55 s it takes at 2 Mbit/s.
    assert deadline.upload_allowance_s(13_700_000) > 55 * 4


async def gmail_never_answers(within: float | None) -> None:
    """An answer that never comes: a wait on an event nobody sets, ended by QUIT's own timeout
    (`within`) or by whoever cancels it first; the bound only keeps a broken deadline from hanging
    the suite."""
    await asyncio.wait_for(asyncio.Event().wait(), within if within is not None else 3 * TIMEOUT_S)


async def test_a_quit_unanswered_past_the_deadline_is_still_a_success(
    emulator: GmailEmulator, sender: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gmail accepted the message (the final 250 of DATA), then its answer to QUIT never comes: neither
    # the deadline nor the dropped QUIT may turn the accepted send into an error. QUIT's own wait
    # (5 s against at least 10 s of deadline) is cut to 1 s, and the deadline is the configuration's
    # own 10 s: the call ends on QUIT's wait, so the long deadline costs no time.
    monkeypatch.setattr(smtp, "QUIT_AFTER_ACCEPTANCE_S", 1.0)
    sender.call_timeout_override_s = None
    real_quit = aiosmtplib.SMTP.quit
    quits: list[float | None] = []

    async def silent_quit(self: aiosmtplib.SMTP, *, timeout: Any = None) -> Any:
        quits.append(timeout)
        if len(quits) > 1:  # the first QUIT ends the port's login probe
            await gmail_never_answers(timeout)  # ends as aiosmtplib's own QUIT timeout does
        return await real_quit(self)

    monkeypatch.setattr(aiosmtplib.SMTP, "quit", silent_quit)
    emulator.set_knobs(sent_filing_delay_s=0.5)
    data, took = await send(call, sender)
    assert took < sender.call_timeout_s
    assert quits[-1] == smtp.QUIT_AFTER_ACCEPTANCE_S  # QUIT after acceptance waits only briefly
    assert data["sent_copy"]["saved"] is True and data["sent_copy"]["filed_by"] == "gmail"
    one_delivery(emulator, sender, data["message_id"])


async def test_a_quit_unanswered_until_the_deadline_is_still_a_success(
    emulator: GmailEmulator, sender: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same with QUIT's own short timeout out of the way: the deadline passes during QUIT.
    real_quit = aiosmtplib.SMTP.quit
    quits = 0

    async def silent_quit(self: aiosmtplib.SMTP, *, timeout: Any = None) -> Any:
        nonlocal quits
        quits += 1
        if quits > 1:
            await gmail_never_answers(None)  # the call's deadline ends the wait
        return await real_quit(self)

    monkeypatch.setattr(aiosmtplib.SMTP, "quit", silent_quit)
    data, took = await send(call, sender)
    assert TIMEOUT_S - 1 < took < TIMEOUT_S + 2
    not_confirmed(data["sent_copy"])
    one_delivery(emulator, sender, data["message_id"])


async def test_a_surprise_while_looking_for_the_sent_copy_is_still_a_success(
    emulator: GmailEmulator, sender: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("a bug in the Sent lookup")

    monkeypatch.setattr(send_module, "_verify_sent_copy", broken)
    data, _took = await send(call, sender)
    assert data["sent_copy"]["saved"] is False and "RuntimeError" in data["sent_copy"]["error"]
    assert "must NOT be sent again" in data["warning"]
    one_delivery(emulator, sender, data["message_id"])
