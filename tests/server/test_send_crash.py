"""SIGKILL of a real server process in the middle of mg_send_message, then the same call again.

The emulator holds the SMTP session at the chosen point (a "hold" fault) until the test has
killed the server, so no timing is guessed. Whatever Gmail's Sent folder shows afterwards, the
restarted server must never deliver a second copy: the send journal on disk remembers.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stdio_driver import ServerProcess, server_env, tool_result

from gmail_emulator import GmailEmulator, SmtpFault
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE
from support import gmail_env, wait_until

OSOBNI = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla", "can_send": True}
SEND = {
    "account": "osobni",
    "to": ["tym@example.com"],
    "subject": "Faktura za listopad",
    "body": "Dobrý den, posílám fakturu.",
    "quote_original": False,
    "signature": False,
}

# point -> (SMTP stage held, emulator knobs)
POINTS: dict[str, tuple[str, dict[str, Any]]] = {
    "before_smtp": ("mail", {}),
    "filed_at_once": ("after_data", {"sent_filing_delay_s": 0.0, "raw_search_lag_s": 0.0}),
    "filed_after_10s": ("after_data", {"sent_filing_delay_s": 10.0}),
    "never_filed": ("after_data", {"sent_filing_delay_s": None}),
    "filed_index_lagging": ("after_data", {"sent_filing_delay_s": 0.0, "raw_search_lag_s": 10.0}),
}


def _delivered(emulator: GmailEmulator) -> int:
    return sum(1 for m in emulator.messages("tym@example.com") if b"Faktura za listopad" in m.raw)


@pytest.mark.parametrize("point", list(POINTS))
def test_killed_mid_send_then_repeated_delivers_exactly_once(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, point: str
) -> None:
    stage, knobs = POINTS[point]
    emulator.set_knobs(delivery_delay_s=0.0, **knobs)
    emulator.add_smtp_fault(SmtpFault(stage, "hold"))  # type: ignore[arg-type]
    config = write_config([OSOBNI])
    env = server_env(gmail_env(emulator), tmp_path / "state")

    first = ServerProcess(config, env)
    try:
        first.call("mg_send_message", SEND)
        wait_until(lambda: emulator.smtp_held() == 1, 30, "the send to reach the held SMTP step")
        first.kill()  # SIGKILL: no clean-up of any kind
    finally:
        first.close()
    went_out = stage == "after_data"
    assert len(emulator.outbox()) == (1 if went_out else 0)

    second = ServerProcess(config, env)
    try:
        failed, body = tool_result(second.wait(second.call("mg_send_message", SEND), 60))
    finally:
        second.close()

    if went_out:
        assert failed and body["code"] == "duplicate_send", body
        assert "handed to Gmail" in body["message"] and "repeat: true" in body["message"]
        journal = tmp_path / "state" / JOURNAL_FILE
        assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    else:
        assert not failed, body  # nothing had gone out: this time it is sent, once
        assert body["accepted"] == ["tym@example.com"]
    assert len(emulator.outbox()) == 1
    wait_until(lambda: _delivered(emulator) >= 1, 10, "the delivery")
    assert _delivered(emulator) == 1
