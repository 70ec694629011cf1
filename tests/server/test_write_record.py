"""The undo record of a write, as the calls after it see it: a message the write did not change is
left out of its undo (neither set back nor reported as changed by someone since), also when the
write was cut off after some of its batches; the recorded UIDs spare the undo a search while the
mailbox keeps its UIDVALIDITY, new mail or not. And a sweep's undo token through its life: reserved at
the preview (its 7 days count from there), planned by the apply (a second apply meanwhile refused, a
repeat after a cut allowed, a preview of the earlier format too), refused for good once used."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, config_entry, load, message_id, raw, state
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.imap import batches
from mcp_multi_gmail.mail.undo import record, records, tokens
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

QUERY = "from:banka.example"


def statements(count: int) -> list[Spec]:
    return [Spec(f"r-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox", BANK)) for n in range(count)]


@pytest.fixture
def runtime(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]
) -> Runtime:
    load(emulator, statements(3), labels=(PROCESSED, ACCOUNTING, BANK))
    return make_runtime(write_config([config_entry()]))


async def test_an_undo_leaves_alone_a_message_the_write_did_not_change(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    ids = [message_id(f"r-{n}") for n in range(3)]
    before = state(emulator)
    emulator.set_knobs(store_not_applied_ids={ids[1]})
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids, label=PROCESSED)
    emulator.set_knobs(store_not_applied_ids=set())
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    print("undo:", {k: undone[k] for k in ("restored", "skipped", "failed", "messages")})
    # r-1 never got the label: nobody changed it since, so it is not "skipped" either.
    assert (undone["restored"], undone["skipped"], undone["failed"], undone["messages"]) == (2, 0, 0, [])
    assert state(emulator) == before


async def test_a_sweep_cut_off_after_two_batches_is_undone_by_what_they_did(
    emulator: GmailEmulator, runtime: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "UIDS_PER_COMMAND", 1)  # one message per batch
    before = state(emulator)
    change = {"add_label": PROCESSED}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    emulator.set_knobs(store_not_applied_ids={message_id("r-1")})  # the second batch does not take
    emulator.add_fault(FaultRule("drop_before_reply", match="UID STORE", nth=3))  # the third is cut off
    args = {"account": "o", "query": QUERY, "change": change, "confirm_token": preview["confirm_token"]}
    cut = await error(call, runtime, "mg_sweep", **args)
    print("apply cut off:", cut)
    emulator.set_knobs(store_not_applied_ids=set())
    assert {mid for mid, (labels, _f, _w) in state(emulator).items() if PROCESSED in labels} == {message_id("r-0")}
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=preview["undo_token"])
    print("undo:", {k: undone[k] for k in ("restored", "skipped", "failed", "messages")})
    # r-0 set back; r-1 the record knows the write did not change; r-2 the write never reached.
    assert (undone["restored"], undone["skipped"], undone["failed"]) == (1, 1, 0)
    assert [m["message_id"] for m in undone["messages"]] == [message_id("r-2")]
    assert state(emulator) == before


async def test_new_mail_between_a_write_and_its_undo_costs_no_search(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    ids = [message_id(f"r-{n}") for n in range(3)]
    before = state(emulator)
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids, label=PROCESSED)
    emulator.deliver(BOX, raw(Spec("r-new", "Výpis 4", "vypisy@banka.example", ())))  # UIDNEXT moves on
    seen = len(emulator.commands(BOX))
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    searches = [c.line for c in emulator.commands(BOX)[seen:] if "X-GM-MSGID" in c.line and "SEARCH" in c.line]
    print("undo's searches by X-GM-MSGID:", searches)
    assert undone["restored"] == 3 and searches == []
    assert {mid: state(emulator)[mid] for mid in before} == before


class Clock:
    """records.now, moved by the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.start = self.moment = records.now()
        monkeypatch.setattr(records, "now", lambda: self.moment)

    def at(self, later: timedelta) -> datetime:
        self.moment = self.start + later
        return self.moment


def refusal(runtime: Runtime, token: str) -> MailError:
    with pytest.raises(MailError) as caught:
        record.plan(runtime, runtime.account("o"), "mg_sweep", [group()], 7, token=token)
    return caught.value


def group() -> record.Group:
    return record.Group("label", PROCESSED, True, {1111: 1})


def let_go(runtime: Runtime, token: str, holder: str | None) -> None:
    assert holder is not None
    records.Records(runtime.state_folder()).update(token, "undo", lambda r: tokens.let_go(r, holder))


def test_a_sweeps_undo_token_from_its_preview_to_its_use(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    clock, account = Clock(monkeypatch), runtime.account("o")
    token = record.reserve(runtime, account, "mg_sweep")
    clock.at(timedelta(minutes=10))  # applied 10 minutes after the preview
    _token, holder = record.plan(runtime, account, "mg_sweep", [group()], 7, token=token)
    busy = refusal(runtime, token)  # a second apply meanwhile
    assert busy.code == "invalid_input" and "still being applied" in busy.message
    let_go(runtime, token, holder)  # the apply was cut off: a repeat plans it again
    _token, holder = record.plan(runtime, account, "mg_sweep", [group()], 7, token=token)
    record.settle(runtime, token, holder, [group()])
    clock.at(records.KEEP + timedelta(minutes=1))  # 7 days after the preview, not yet after the apply
    with pytest.raises(MailError) as late:
        record.claim(runtime, account, token)
    assert late.value.code == "invalid_input" and "expired" in late.value.message
    clock.at(timedelta(hours=1))
    claimed = record.claim(runtime, account, token)
    assert [g.to_json() for g in claimed.groups] == [group().to_json()]
    used_at = clock.at(timedelta(hours=2))
    record.finish(runtime, claimed)
    used = refusal(runtime, token)
    assert used.code == "invalid_input" and f"already used at {records.stamp(used_at)}" in used.message


def test_a_preview_of_the_earlier_format_is_planned_and_undone(runtime: Runtime) -> None:
    """A preview written by the version before the token life cycle (its undo record was "reserved")
    applied by this one, the apply cut off: the undo finds the planned record."""
    account = runtime.account("o")
    token = records.new_token(records.UNDO_PREFIX)
    earlier: dict[str, Any] = {"kind": "undo", "account": "o", "tool": "mg_sweep", "state": "reserved"}
    records.Records(runtime.state_folder()).create(token, earlier | {"created": records.stamp(records.now())}, "undo")
    _token, holder = record.plan(runtime, account, "mg_sweep", [group()], 7, token=token)
    let_go(runtime, token, holder)
    claimed = record.claim(runtime, account, token)
    assert (claimed.tool, claimed.uidvalidity, [g.to_json() for g in claimed.groups]) == (
        "mg_sweep",
        7,
        [group().to_json()],
    )
