"""Looking a message up by Message-ID while Gmail's search index lags behind new mail.

The watcher wakes the assistant when mail arrives, and the assistant reads it at once; X-GM-RAW
may not know the message for a while then. Every lookup by Message-ID falls back to the header
itself on a miss, in the same connection, and pays that extra command only on a miss.
"""

from __future__ import annotations

from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

ME = "osobni@example.cz"
LAG = {"raw_search_lag_s": 30.0}


@pytest.fixture
def runtime(
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    tmp_path: Path,
) -> Runtime:
    entry = {"name": "o", "address": ME, "password": "osobniheslohesla", "processed_label": "Asistent"}
    return make_runtime(write_config([entry], download_dir=str(tmp_path / "stazene")))


def just_arrived(emulator: GmailEmulator, mid: str = "cerstva-1@partner.example") -> str:
    msg = EmailMessage()
    msg["From"] = "Petr Dvořák <petr@partner.example>"
    msg["To"] = ME
    msg["Subject"] = "Objednávka"
    msg["Message-ID"] = f"<{mid}>"
    msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0100"
    msg.set_content("Posílám objednávku v příloze.")
    msg.add_attachment(b"%PDF-1.4 objednavka", maintype="application", subtype="pdf", filename="objednavka.pdf")
    emulator.deliver(ME, msg.as_bytes())
    return mid


def searches(emulator: GmailEmulator) -> list[str]:
    return [c.line for c in emulator.commands() if c.name == "UID SEARCH"]


async def test_read_and_save_attachment_of_a_message_the_index_does_not_know_yet(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.set_knobs(**LAG)
    mid = just_arrived(emulator)
    message = await ok(call, runtime, "mg_get_message", account="o", message_id=mid)
    assert message["message_id"] == mid and "objednávku" in message["body"]
    [attachment] = message["attachments"]
    saved = await ok(
        call, runtime, "mg_get_attachment", account="o", message_id=mid, attachment_id=attachment["attachment_id"]
    )
    assert Path(saved["path"]).read_bytes() == b"%PDF-1.4 objednavka"
    assert any("HEADER Message-ID" in line for line in searches(emulator))


async def test_the_fallback_costs_one_search_and_only_on_a_miss(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    mid = just_arrived(emulator)
    await ok(call, runtime, "mg_list_labels", account="o")  # folders now known, as in a warm server
    emulator.reset_counters()
    await ok(call, runtime, "mg_get_message", account="o", message_id=mid)
    indexed = len(emulator.commands())
    assert not any("HEADER Message-ID" in line for line in searches(emulator))

    emulator.set_knobs(**LAG)
    late = just_arrived(emulator, "cerstva-2@partner.example")
    emulator.reset_counters()
    await ok(call, runtime, "mg_get_message", account="o", message_id=late)
    assert len(emulator.commands()) == indexed + 1


async def test_label_and_flag_a_message_the_index_does_not_know_yet(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.set_knobs(**LAG)
    known = just_arrived(emulator, "starsi@partner.example")
    fresh = just_arrived(emulator)
    labelled = await ok(
        call,
        runtime,
        "mg_label_message",
        account="o",
        message_ids=[known, fresh, "nikde@example.org"],
        label="Asistent",
    )
    outcomes = {m["message_id"]: m["outcome"] for m in labelled["messages"]}
    assert outcomes == {known: "changed", fresh: "changed", "nikde@example.org": "not_found"}
    info = emulator.message(ME, fresh)
    assert info is not None and "Asistent" in info.labels
    flags = await ok(call, runtime, "mg_set_flags", account="o", message_id=fresh, seen=True)
    assert flags["changed"] == ["seen"]


@pytest.mark.parametrize("in_trash", [True, False], ids=["raw-finds-trash", "raw-blind-in-trash"])
async def test_trash_a_message_the_index_does_not_know_yet(
    emulator: GmailEmulator, runtime: Runtime, call: Call, in_trash: bool
) -> None:
    emulator.set_knobs(**LAG, raw_search_in_trash=in_trash)
    mid = just_arrived(emulator)
    moved = await ok(call, runtime, "mg_trash_message", account="o", message_id=mid)
    assert moved["moved"] is True and moved["uid_in_trash"] is not None
    info = emulator.message(ME, mid)
    assert info is not None and info.location == "trash"
    # Confirmed in Trash by Gmail's own id, read before the move: no search index involved.
    assert any(line.endswith(f"X-GM-MSGID {info.msgid}") for line in searches(emulator))
    again = await ok(call, runtime, "mg_trash_message", account="o", message_id=mid)
    assert again["moved"] is False and again["uid_in_trash"] == moved["uid_in_trash"]


async def test_reply_draft_to_a_message_the_index_does_not_know_yet_joins_its_thread(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.set_knobs(**LAG)
    mid = just_arrived(emulator)
    draft = await ok(
        call, runtime, "mg_save_draft", account="o", to=["petr@partner.example"], body="Děkuji.", in_reply_to=mid
    )
    assert draft["joined_thread"] is True and draft["warning"] is None
    listed = await ok(call, runtime, "mg_list_drafts", account="o")
    [entry] = listed["drafts"]
    assert entry["in_reply_to"] == mid and entry["joined_thread"] is True and entry["warning"] is None
