"""When a write runs out of its deadline, the error says whether the change may have happened.

The deadline is 3 s, below the configuration's floor of 10 s (a test-only override)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import pytest
from toolcalls import Call

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

OSOBNI = {
    "name": "o",
    "address": "osobni@example.cz",
    "password": "osobniheslohesla",
    "can_send": True,
    "processed_label": "Asistent",
}
TIMEOUT_S = 3.0


def _body(result: Any) -> dict[str, Any]:
    assert result.is_error is True
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    return error


async def test_writes_cut_off_by_the_deadline_say_what_may_have_happened(
    emulator: GmailEmulator, call: Call, write_config: Callable[..., Path], make_runtime: Callable[..., Runtime]
) -> None:
    msg = EmailMessage()
    msg["From"] = "karel@example.org"
    msg["To"] = "osobni@example.cz"
    msg["Subject"] = "Ahoj"
    msg["Message-ID"] = "<ahoj@example.org>"
    msg.set_content("Ahoj")
    emulator.deliver("osobni@example.cz", msg)
    emulator.add_fault(FaultRule("delay:30", match="STORE", times=-1))  # the label change hangs
    emulator.add_smtp_fault(SmtpFault("after_data", "hold"))  # Gmail took the message, no answer
    runtime = make_runtime(write_config([OSOBNI], call_timeout_s=10), call_timeout_s=TIMEOUT_S)
    results: dict[str, Any] = {}

    async def run(name: str, tool: str, args: dict[str, Any]) -> None:
        results[name] = await call(runtime, tool, args)

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        label_args = {"account": "o", "message_ids": ["ahoj@example.org"], "label": "Asistent"}
        group.start_soon(run, "label", "mg_label_message", label_args)
        group.start_soon(
            run,
            "send",
            "mg_send_message",
            {"account": "o", "to": ["petr@partner.example"], "subject": "S", "body": "B", "quote_original": False},
        )
        group.start_soon(run, "read", "mg_get_message", {"account": "o", "message_id": "ahoj@example.org"})
    # Against the 30 s stall and the held send; the slack is for a machine whose cores are busy.
    assert time.monotonic() - started < TIMEOUT_S + 5

    label = _body(results["label"])
    assert label["code"] == "upstream_error" and label["retryable"] is True
    assert f"deadline of {TIMEOUT_S:g} s" in label["message"] and "may or may not have been made" in label["message"]
    send = _body(results["send"])
    assert f"deadline of {TIMEOUT_S:g} s" in send["message"] and "may have been sent" in send["message"]
    assert send["retryable"] is False  # the bytes were on their way: a repeat is refused as a duplicate
    assert "refused as a duplicate" in send["message"]
    assert len(emulator.outbox()) == 1
    assert results["read"].is_error is False  # the read finished well inside the deadline
