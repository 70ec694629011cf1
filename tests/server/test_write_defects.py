"""The write defects of issue 41, each built from its description and run against the emulator:
a classification sweep that took labels off unsaid, a thread classification that left messages
unclassified, an undo token that came back to life, an undo that burnt its token halfway, and a
failing sweep whose cleanup replaced its own error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, config_entry, load, message_id, state
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail import statefile
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.imap import batches
from mcp_multi_gmail.mail import undo
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

QUERY = "from:banka.example"
CLASSIFY = {"add_label": ACCOUNTING}


def both(count: int = 5) -> list[Spec]:
    """`count` statements carrying both classifications, the first two in one thread."""
    labels = ("\\Inbox", ACCOUNTING, BANK)
    return [
        Spec(
            f"d-{n}",
            "Re: Výpis 0" if n == 1 else f"Výpis {n}",
            "vypisy@banka.example",
            labels,
            reply_to="d-0" if n == 1 else None,
        )
        for n in range(count)
    ]


def bank_thread() -> list[Spec]:
    """One thread of three messages classified Banka, and one other message."""
    out = [Spec("t-0", "Výpis", "vypisy@banka.example", ("\\Inbox", BANK))]
    out += [Spec(f"t-{n}", "Re: Výpis", "vypisy@banka.example", ("\\Inbox", BANK), reply_to="t-0") for n in (1, 2)]
    return [*out, Spec("x-0", "Jiný výpis", "vypisy@banka.example", ("\\Inbox",))]


@pytest.fixture
def make_box(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Callable[[list[Spec]], Runtime]:
    def made(specs: list[Spec]) -> Runtime:
        load(emulator, specs, labels=(PROCESSED, ACCOUNTING, BANK))
        return make_runtime(write_config([config_entry()]))

    return made


def entry(result: dict[str, Any], name: str, action: str) -> dict[str, Any] | None:
    return next((e for e in result["changes"] if e["name"] == name and e["action"] == action), None)


async def test_a_classification_sweep_reports_the_classification_it_takes_off(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(both())
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY)
    applied = await ok(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY, confirm_token=preview["confirm_token"]
    )
    after = state(emulator)
    print("a:", json.dumps({k: preview.get(k) for k in ("would_change", "already", "changes")}))
    print("a:", json.dumps({k: applied.get(k) for k in ("changed", "already", "failed", "changes")}))
    print("a: Banka left on", sum(1 for labels, _f, _l in after.values() if BANK in labels), "of 5")
    # Banka goes from all 5; the preview says it would, the apply says it did.
    assert all(BANK not in labels for labels, _f, _l in after.values())
    would = entry(preview, BANK, "removed")
    done = entry(applied, BANK, "removed")
    assert would is not None and (would["changed"], would["replaced_by"]) == (5, ACCOUNTING)
    assert done is not None and (done["changed"], done["failed"], done["replaced_by"]) == (5, 0, ACCOUNTING)
    assert entry(applied, ACCOUNTING, "added") == {
        "attribute": "label",
        "name": ACCOUNTING,
        "action": "added",
        "changed": 0,
        "already": 5,
        "failed": 0,
        "replaced_by": None,
    }


async def test_a_sweep_reports_when_the_old_classification_would_not_come_off(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(both())
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY)
    emulator.set_knobs(store_not_applied_ids={message_id("d-2")})  # Banka stays on d-2 when taken off
    applied = await ok(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY, confirm_token=preview["confirm_token"]
    )
    done = entry(applied, BANK, "removed")
    print("a2:", json.dumps(applied["changes"]), applied["failed"], applied["failed_messages"])
    assert done is not None and (done["changed"], done["failed"]) == (4, 1)
    assert applied["failed"] == 1 and applied["failed_messages"][0]["message_id"] == message_id("d-2")
    assert BANK in state(emulator)[message_id("d-2")][0]


async def test_a_thread_keeps_its_classification_where_the_new_one_failed(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(bank_thread())
    thread = str(emulator.message(BOX, message_id("t-0")).thrid)  # type: ignore[union-attr]
    emulator.set_knobs(store_not_applied_ids={message_id("t-1")})
    done = await ok(call, runtime, "mg_label_thread", account="o", thread_id=thread, label=ACCOUNTING)
    after = state(emulator)
    print("b:", {m: sorted(after[message_id(m)][0] & {ACCOUNTING, BANK}) for m in ("t-0", "t-1", "t-2")})
    assert after[message_id("t-1")][0] & {ACCOUNTING, BANK} == {BANK}  # kept its own, never none
    assert all(after[message_id(m)][0] & {ACCOUNTING, BANK} == {ACCOUNTING} for m in ("t-0", "t-2"))
    assert done["failed"] == 1
    removed = entry(done, BANK, "removed")
    assert removed is not None and (removed["changed"], removed["failed"]) == (2, 0)


async def test_an_undo_during_the_apply_cannot_reopen_the_token(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(bank_thread())
    change = {"add_label": PROCESSED}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    token = preview["undo_token"]
    claims: list[str] = []

    def undo_meanwhile() -> None:  # an mg_undo of another call, while the apply waits for its STORE
        try:
            undo.claim(runtime, runtime.account("o"), token)
            claims.append("claimed")
        except MailError as refused:
            claims.append(refused.message)

    emulator.add_fault(FaultRule("hook", match="UID STORE", nth=1, hook=undo_meanwhile))
    await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change, confirm_token=preview["confirm_token"])
    later = [await call(runtime, "mg_undo", {"account": "o", "undo_token": token}) for _ in range(2)]
    outcomes = claims + ["undone" if not r.is_error else r.content[0].text for r in later]
    print("c:", outcomes)
    assert sum(1 for o in outcomes if o in ("claimed", "undone")) == 1, outcomes
    assert "still being" in claims[0] and outcomes[1] == "undone"


async def test_an_undo_cut_off_halfway_finishes_with_the_same_token(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(bank_thread())
    before = state(emulator)
    thread = str(emulator.message(BOX, message_id("t-0")).thrid)  # type: ignore[union-attr]
    done = await ok(call, runtime, "mg_label_thread", account="o", thread_id=thread, label=ACCOUNTING)
    # The undo puts Banka back (first STORE), then the connection drops under the second.
    emulator.add_fault(FaultRule("drop_before_reply", match="UID STORE", nth=2))
    first = await call(runtime, "mg_undo", {"account": "o", "undo_token": done["undo_token"]})
    assert first.is_error
    halfway = state(emulator)
    assert all(halfway[message_id(m)][0] >= {ACCOUNTING, BANK} for m in ("t-0", "t-1", "t-2"))
    emulator.reset_counters()
    second = await call(runtime, "mg_undo", {"account": "o", "undo_token": done["undo_token"]})
    print("d:", first.content[0].text[:200], "| again:", second.content[0].text[:300])
    assert not second.is_error, second.content[0].text
    result = second.structured_content
    # Six changes set back in all (Banka by the first call), Účetnictví now; Banka is not put back twice.
    assert (result["restored"], result["skipped"], result["failed"]) == (6, 0, 0)
    assert entry(result, BANK, "added") == {
        "attribute": "label",
        "name": BANK,
        "action": "added",
        "changed": 0,
        "already": 3,
        "failed": 0,
        "replaced_by": None,
    }
    assert entry(result, ACCOUNTING, "removed") == {
        "attribute": "label",
        "name": ACCOUNTING,
        "action": "removed",
        "changed": 3,
        "already": 0,
        "failed": 0,
        "replaced_by": None,
    }
    stores = [c.line for c in emulator.commands(BOX) if c.name == "UID STORE"]
    assert len(stores) == 1 and "-X-GM-LABELS" in stores[0]
    assert state(emulator) == before
    third = await error(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert "already used" in third["message"]


async def test_a_failing_sweep_keeps_its_own_error_when_its_record_cannot_be_written(
    emulator: GmailEmulator,
    make_box: Callable[[list[Spec]], Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = make_box(both())
    change = {"seen": True}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    real = statefile.write_atomically
    writes: list[Path] = []

    def full_disk(path: Path, text: str) -> None:
        writes.append(path)
        if len(writes) > 1:  # the claim is written; giving the token back then fails
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr("mcp_multi_gmail.mail.undo.records.write_atomically", full_disk)
    emulator.add_fault(FaultRule("bye:Account exceeded command or bandwidth limits.", match="UID SEARCH"))
    body = await error(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=change, confirm_token=preview["confirm_token"]
    )
    print("e:", json.dumps(body)[:400])
    assert "record cannot be written" not in body["message"] and "bandwidth" in body["message"], body
    assert any("No space left" in r.getMessage() for r in caplog.records)  # the cleanup's failure: logged


async def test_an_undo_of_a_trash_cut_off_after_the_move_finishes_the_labels(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call
) -> None:
    runtime = make_box(bank_thread())
    emulator.set_knobs(trash_keeps_labels=False)  # Gmail's Trash drops user labels: the undo puts them back
    target = message_id("t-2")
    emulator.add_labels(BOX, target, [PROCESSED])  # a label to lose in Trash and get back
    before = state(emulator)
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=target)
    assert state(emulator)[target][2] == "trash" and PROCESSED not in state(emulator)[target][0]
    # The undo moves it out of Trash, then the connection drops under the STORE that puts its labels back.
    emulator.add_fault(FaultRule("drop_before_reply", match="UID STORE", nth=1))
    first = await call(runtime, "mg_undo", {"account": "o", "undo_token": done["undo_token"]})
    assert first.is_error and state(emulator)[target][2] != "trash"
    assert PROCESSED not in state(emulator)[target][0]
    again = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    print("trash undo again:", json.dumps(again, ensure_ascii=False)[:400])
    assert (again["restored"], again["skipped"], again["failed"]) == (1, 0, 0)
    assert state(emulator)[target] == before[target]


async def test_an_undo_leaves_alone_the_old_classification_a_sweep_kept_in_an_earlier_batch(
    emulator: GmailEmulator, make_box: Callable[[list[Spec]], Runtime], call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the new classification did not arrive, the old one stays, and the undo knows it was never taken off."""
    monkeypatch.setattr(batches, "UIDS_PER_COMMAND", 2)  # two batches of two messages
    specs = [Spec(f"k-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox", BANK)) for n in range(4)]
    runtime = make_box(specs)
    before = state(emulator)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY)
    emulator.set_knobs(store_not_applied_ids={message_id("k-0")})  # Účetnictví does not take on k-0
    applied = await ok(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=CLASSIFY, confirm_token=preview["confirm_token"]
    )
    assert (applied["changed"], applied["failed"]) == (3, 1)
    assert state(emulator)[message_id("k-0")] == before[message_id("k-0")]  # Banka kept there
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=applied["undo_token"])
    assert (undone["skipped"], undone["failed"], undone["messages"]) == (0, 0, []), undone
    assert state(emulator) == before
