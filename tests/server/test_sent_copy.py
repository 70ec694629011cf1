"""The Sent copy after a send: Gmail files its own after a delay, and the server must not add a second.

Gmail's filing delay is undocumented (reports: up to about ten seconds) and its X-GM-RAW index lags
behind new mail, so the copy is looked for by its header and for about 15 s before the server
appends one itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.mail.sending import send
from mcp_multi_gmail.runtime import Runtime
from support import wait_until

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
MESSAGE = {"account": "o", "to": ["petr@partner.example"], "subject": "Nabídka", "body": "Posílám nabídku."}


@pytest.fixture
def sender(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Callable[[], Runtime]:
    def make() -> Runtime:
        entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "can_send": True}
        return make_runtime(write_config([entry]))

    return make


def sent_copies(emulator: GmailEmulator, message_id: str) -> list[Any]:
    return [m for m in emulator.messages(ME) if m.header_id == message_id and "\\Sent" in m.labels]


@pytest.mark.parametrize("merge", [False, True], ids=["no-merge", "merge"])
async def test_late_filing_leaves_exactly_one_copy(
    emulator: GmailEmulator, sender: Callable[[], Runtime], call: Call, merge: bool
) -> None:
    # Gmail files 5 s after the send and its search index lags 3 s (the emulator's default):
    # the copy is found by its header once Gmail files it, and nothing is appended.
    emulator.set_knobs(sent_filing_delay_s=5.0, raw_search_lag_s=3.0, merge_similar_sent=merge)
    data = await ok(call, sender(), "mg_send_message", **MESSAGE)
    copy = data["sent_copy"]
    assert copy["filed_by"] == "gmail" and copy["saved"] is True and copy["note"] is None
    assert 4.0 <= copy["waited_s"] <= 15.0
    wait_until(lambda: emulator.smtp_pending() == 0, timeout=20)
    assert len(sent_copies(emulator, data["message_id"])) == 1
    assert not [c for c in emulator.commands() if c.name == "APPEND"]
    # Sent is searched by the header, never through the lagging X-GM-RAW index.
    lines = [c.line for c in emulator.commands() if c.name == "UID SEARCH"]
    assert any("HEADER Message-ID" in line and data["message_id"] in line for line in lines)
    assert not any("X-GM-RAW" in line and data["message_id"] in line for line in lines)


async def test_never_filed_is_appended_after_the_wait_and_the_result_says_so(
    emulator: GmailEmulator, sender: Callable[[], Runtime], call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(send, "SENT_WAIT_S", 1.5)  # the real wait is 15 s; the schedule is tested below
    emulator.set_knobs(sent_filing_delay_s=None)
    data = await ok(call, sender(), "mg_send_message", **MESSAGE)
    copy = data["sent_copy"]
    assert copy["filed_by"] == "server" and copy["saved"] is True and copy["uid"] is not None
    assert copy["waited_s"] >= 1.4 and "stored the copy there itself" in copy["note"]
    assert len(sent_copies(emulator, data["message_id"])) == 1
    # Several looks into Sent before giving up, not one.
    looks = [c for c in emulator.commands() if c.name == "UID SEARCH" and "HEADER Message-ID" in c.line]
    assert len(looks) >= 4


def test_the_wait_for_gmails_copy_is_about_fifteen_seconds_with_growing_pauses() -> None:
    pauses = send.sent_pauses(send.SENT_WAIT_S)
    assert send.SENT_WAIT_S == 15.0 and sum(pauses) == pytest.approx(15.0)
    assert pauses[0] <= 0.5 and pauses == sorted(pauses[:-1]) + pauses[-1:]
    assert max(pauses) <= 3.0 and len(pauses) <= 12  # a bounded number of SEARCH commands


async def test_duplicate_check_finds_a_copy_the_index_does_not_know_yet(
    emulator: GmailEmulator, sender: Callable[[], Runtime], call: Call
) -> None:
    # The first send is filed at once, but the search index will not see it for 30 s. A server
    # started afresh (nothing remembered in memory) must still refuse the identical second send.
    emulator.set_knobs(sent_filing_delay_s=0.0, raw_search_lag_s=30.0)
    first = await ok(call, sender(), "mg_send_message", **MESSAGE)
    assert first["sent_copy"]["filed_by"] == "gmail" and first["sent_copy"]["waited_s"] < 2
    again = await error(call, sender(), "mg_send_message", **MESSAGE)
    assert again["code"] == "duplicate_send" and first["message_id"] in again["message"]
    assert len(emulator.outbox()) == 1
