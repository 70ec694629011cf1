"""At most 100 recipients (to, cc and bcc together) a message: smtp.gmail.com's limit.

Past it Gmail would refuse in the middle of the send, after some recipients were accepted, so the
bound is checked before any connection: nothing is sent, saved or journalled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.sending.journal import JOURNAL_FILE
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True, "smtp_port": 465}
    return make_runtime(write_config([entry]))


def recipients(count: int) -> dict[str, list[str]]:
    """`count` addresses spread over to, cc and bcc, none of the three lists over 100 on its own."""
    addresses = [f"host{n}@partner.example" for n in range(count)]
    third = count // 3
    return {"to": addresses[:third], "cc": addresses[third : 2 * third], "bcc": addresses[2 * third :]}


def nothing_happened(emulator: GmailEmulator, runtime: Runtime) -> None:
    assert emulator.connections() == 0 and emulator.smtp_sessions() == 0  # no connection at all
    assert emulator.outbox() == []
    assert not (runtime.state_folder() / JOURNAL_FILE).exists()


@pytest.mark.parametrize("tool", ["mg_send_message", "mg_save_draft"])
async def test_101_recipients_are_refused_before_anything_is_sent(
    emulator: GmailEmulator, runtime: Runtime, call: Call, tool: str
) -> None:
    emulator.reset_counters()
    args: dict[str, Any] = {"account": "o", "subject": "Pozvánka", "body": "Přijďte.", **recipients(101)}
    body = await error(call, runtime, tool, **args)
    assert (body["code"], body["retryable"]) == ("invalid_input", False)
    assert "101 recipients (to, cc and bcc together)" in body["message"] and "at most 100" in body["message"]
    assert "Nothing was sent or saved" in body["message"]
    nothing_happened(emulator, runtime)
    assert [m for m in emulator.messages(ME) if m.header_id] == []


async def test_101_in_one_list_is_refused_by_the_schema(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    emulator.reset_counters()
    to = [f"host{n}@partner.example" for n in range(101)]
    body = await error(call, runtime, "mg_send_message", account="o", to=to, subject="S", body="B")
    assert body["code"] == "invalid_input" and "`to`: expected at most 100 items" in body["message"]
    nothing_happened(emulator, runtime)


async def test_100_recipients_go_out(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    data = await ok(
        call, runtime, "mg_send_message", account="o", subject="Pozvánka", body="Přijďte.", **recipients(100)
    )
    assert len(data["accepted"]) == 100 and data["rejected"] == []
    [entry] = emulator.outbox()
    assert len(entry.recipients) == 100
