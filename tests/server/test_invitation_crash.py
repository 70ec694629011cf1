"""SIGKILL of a real server process in the middle of mg_respond_invitation, then the same call again.

As tests/server/test_send_crash.py for mg_send_message: the emulator holds the SMTP session until
the server is killed; the restarted server must not send the answer a second time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from invitation_mail import APPLE, HOMER
from stdio_driver import ServerProcess, server_env, tool_result

from gmail_emulator import GmailEmulator, SmtpFault
from support import gmail_env, wait_until

ENTRY = {"name": "homer", "address": HOMER, "password": "homerheslohesla", "can_send": True}
ANSWER = {"account": "homer", "message_id": "apple-invite-1@icloud.example", "response": "accepted"}


@pytest.mark.parametrize("stage", ["mail", "after_data"])
def test_killed_mid_answer_then_repeated_sends_once(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, stage: str
) -> None:
    emulator.add_account(HOMER, "homerheslohesla")
    emulator.deliver(HOMER, APPLE)
    emulator.set_knobs(delivery_delay_s=0.0, sent_filing_delay_s=0.0, raw_search_lag_s=0.0)
    emulator.add_smtp_fault(SmtpFault(stage, "hold"))  # type: ignore[arg-type]
    config = write_config([ENTRY])
    env = server_env(gmail_env(emulator), tmp_path / "state")
    first = ServerProcess(config, env)
    try:
        first.call("mg_respond_invitation", ANSWER)
        wait_until(lambda: emulator.smtp_held() == 1, 30, "the answer to reach the held SMTP step")
        first.kill()  # SIGKILL: no clean-up of any kind
    finally:
        first.close()
    went_out = stage == "after_data"
    assert len(emulator.outbox()) == (1 if went_out else 0)

    second = ServerProcess(config, env)
    try:
        failed, body = tool_result(second.wait(second.call("mg_respond_invitation", ANSWER), 60))
    finally:
        second.close()
    if went_out:
        assert failed and body["code"] == "duplicate_send", body
        assert "nothing was sent now" in body["message"] and "repeat" not in body["message"]
    else:
        assert not failed, body
        assert body["sent"]["accepted"] == ["jana@icloud.example"]
    assert len(emulator.outbox()) == 1
