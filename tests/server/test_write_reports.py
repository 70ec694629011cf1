"""Every write reports exactly what it changed: the difference between a snapshot of the mailbox
before and after each call, per label and flag and message, is what the call's `changes` say (and a
sweep's preview says the same as "would")."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, accounting_box, config_entry, load, message_id, state
from toolcalls import Call, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.gmail.imap import Fetched, ImapSession
from mcp_multi_gmail.mail.core import writes
from mcp_multi_gmail.mail.undo.records import Records
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

Snapshot = dict[str, tuple[frozenset[str], frozenset[str], str]]
Key = tuple[str, str, str]  # attribute, name, added/removed


def diff(before: Snapshot, after: Snapshot) -> Counter[Key]:
    """Per label and flag, how many messages got it and how many lost it between two snapshots."""
    counted: Counter[Key] = Counter()
    for mid, (labels, flags, _where) in after.items():
        old_labels, old_flags, _old = before[mid]
        # Gmail shows the flag \\Flagged as the label \\Starred too: the flag is what counts.
        labels, old_labels = labels - {"\\Starred"}, old_labels - {"\\Starred"}
        for attribute, now, then in (("label", labels, old_labels), ("flag", flags, old_flags)):
            counted.update((attribute, name, "added") for name in now - then)
            counted.update((attribute, name, "removed") for name in then - now)
    return counted


def reported(result: dict[str, Any]) -> Counter[Key]:
    return Counter({(e["attribute"], e["name"], e["action"]): e["changed"] for e in result["changes"] if e["changed"]})


def side_by_side(title: str, seen: Counter[Key], said: Counter[Key]) -> None:
    print(title)
    for key in sorted(set(seen) | set(said)):
        print(f"  {key[0]:5} {key[1]:12} {key[2]:8} snapshot diff {seen[key]:5}  reported {said[key]:5}")


async def test_a_sweep_its_apply_and_its_undo_over_1200_threads(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    load(emulator, accounting_box().specs)
    runtime = make_runtime(write_config([config_entry(sweep_limit=2000)]))
    change = {"add_label": ACCOUNTING}
    emulator.set_knobs(store_not_applied_ids={message_id(f"vypis-{n}") for n in (1, 11, 500, 501, 1199)})
    start = state(emulator)
    preview = await ok(call, runtime, "mg_sweep", account="o", query="from:banka.example", change=change)
    applied = await ok(
        call,
        runtime,
        "mg_sweep",
        account="o",
        query="from:banka.example",
        change=change,
        confirm_token=preview["confirm_token"],
    )
    swept = state(emulator)
    seen = diff(start, swept)
    side_by_side("preview (would) vs the apply's diff", seen, reported(preview))
    side_by_side("apply", seen, reported(applied))
    assert reported(applied) == seen
    # The preview cannot know which messages Gmail will not change: it says what would change were all to take.
    failed = {(e["name"], e["action"]): e["failed"] for e in applied["changes"]}
    would = reported(preview)
    assert {k: would[k] - seen[k] for k in would} == {
        ("label", ACCOUNTING, "added"): failed[(ACCOUNTING, "added")],
        ("label", BANK, "removed"): 3,  # vypis-1, -11, -501 keep Banka: Účetnictví did not take on them
    }
    assert failed == {(ACCOUNTING, "added"): 4, (BANK, "removed"): 0}  # vypis-500 had Účetnictví already
    # Message by message: the undo record names exactly the messages whose label changed, per label.
    gmail_ids = {m.header_id: m.msgid for m in emulator.messages(BOX)}
    record = json.loads(Records(runtime.state_folder()).path(applied["undo_token"]).read_text())
    for group in record["groups"]:
        named = {msgid for msgid, _uid in group["messages"]} - set(group["failed"])
        key = "added" if group["on"] else "removed"
        moved = {gmail_ids[mid] for mid in swept if group["name"] in (swept if key == "added" else start)[mid][0]}
        moved -= {gmail_ids[mid] for mid in swept if group["name"] in (start if key == "added" else swept)[mid][0]}
        assert named == moved, group["name"]
    emulator.set_knobs(store_not_applied_ids=set())
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=applied["undo_token"])
    back = diff(swept, state(emulator))
    side_by_side("undo", back, reported(undone))
    assert reported(undone) == back and state(emulator) == start
    print("apply", json.dumps(applied["changes"], ensure_ascii=False))
    print("undo", json.dumps(undone["changes"], ensure_ascii=False))


def small() -> list[Spec]:
    out = [Spec(f"s-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox", BANK), ("\\Seen",)) for n in range(3)]
    out += [Spec("s-3", "Re: Výpis 0", "vypisy@banka.example", ("\\Inbox", PROCESSED), reply_to="s-0")]
    return out


@pytest.mark.parametrize(
    "tool",
    ["mg_label_message", "mg_unlabel_message", "mg_set_flags", "mg_label_thread", "mg_unlabel_thread"],
)
async def test_each_label_and_flag_tool_reports_its_diff_and_so_does_its_undo(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    tool: str,
) -> None:
    runtime = box_runtime(small(), labels=(PROCESSED, ACCOUNTING, BANK))
    thread = str(emulator.message(BOX, message_id("s-0")).thrid)  # type: ignore[union-attr]
    ids = [message_id(f"s-{n}") for n in range(4)]
    args: dict[str, Any] = {
        "mg_label_message": {"message_ids": ids, "label": PROCESSED},
        "mg_unlabel_message": {"message_ids": ids, "label": PROCESSED},
        "mg_set_flags": {"message_id": ids[0], "seen": False, "flagged": True, "answered": False},
        "mg_label_thread": {"thread_id": thread, "label": ACCOUNTING},
        "mg_unlabel_thread": {"thread_id": thread, "label": BANK},
    }[tool]
    emulator.set_knobs(store_not_applied_ids={ids[1]} if tool != "mg_set_flags" else set())
    before = state(emulator)
    done = await ok(call, runtime, tool, account="o", **args)
    after = state(emulator)
    print(tool, json.dumps(done["changes"], ensure_ascii=False))
    assert reported(done) == diff(before, after)
    emulator.set_knobs(store_not_applied_ids=set())
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert reported(undone) == diff(after, state(emulator)) and state(emulator) == before


async def test_trash_and_its_undo_report_the_move(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(small(), labels=(PROCESSED, ACCOUNTING, BANK))
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=message_id("s-2"))
    assert state(emulator)[message_id("s-2")][2] == "trash"
    [moved] = done["changes"]
    assert (moved["attribute"], moved["action"], moved["changed"]) == ("trash", "added", 1)
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    [back] = undone["changes"]
    assert (back["attribute"], back["action"], back["changed"], back["failed"]) == ("trash", "removed", 1, 0)
    again = await ok(call, runtime, "mg_trash_message", account="o", message_id=message_id("s-2"))
    await ok(call, runtime, "mg_trash_message", account="o", message_id=message_id("s-2"))
    assert again["changes"][0]["changed"] == 1
    already = await ok(call, runtime, "mg_trash_message", account="o", message_id=message_id("s-2"))
    assert (already["changes"][0]["changed"], already["changes"][0]["already"]) == (0, 1)


async def test_a_replaced_classification_that_stays_on_is_a_failed_message(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    specs = [Spec("c-0", "Výpis", "vypisy@banka.example", ("\\Inbox", ACCOUNTING, BANK))]
    specs += [Spec("c-1", "Re: Výpis", "vypisy@banka.example", ("\\Inbox", BANK), reply_to="c-0")]
    runtime = box_runtime(specs, labels=(PROCESSED, ACCOUNTING, BANK))
    thread = str(emulator.message(BOX, message_id("c-0")).thrid)  # type: ignore[union-attr]
    emulator.set_knobs(store_not_applied_ids={message_id("c-0")})  # has Účetnictví; Banka will not come off
    before = state(emulator)
    done = await ok(call, runtime, "mg_label_thread", account="o", thread_id=thread, label=ACCOUNTING)
    assert reported(done) == diff(before, state(emulator))
    [stuck] = [m for m in done["messages"] if m["outcome"] == "failed"]
    assert stuck["message_id"] == message_id("c-0") and '"Banka" it replaces' in stuck["detail"]
    assert (done["succeeded"], done["failed"], done["threads"][0]["outcome"]) == (1, 1, "failed")
    removed = next(e for e in done["changes"] if e["name"] == BANK)
    assert (removed["changed"], removed["failed"], removed["replaced_by"]) == (1, 1, ACCOUNTING)


class _ReadBackWithoutLabels:
    """A session that takes every STORE and whose read-back answers without X-GM-LABELS."""

    def change_labels(self, uids: list[int], labels: list[str], *, add: bool) -> bool:
        return True

    def fetch(self, uids: list[int], items: list[str]) -> dict[int, Fetched]:
        return {uid: Fetched(uid=uid) for uid in uids}


def test_a_label_the_read_back_does_not_show_is_not_reported_changed() -> None:
    before = {1: Fetched(uid=1, labels=(PROCESSED,))}
    [want] = wants = [writes.Want("label", PROCESSED, False, [1])]
    writes.apply(cast(ImapSession, _ReadBackWithoutLabels()), before, wants)
    assert (want.changed, want.already, want.failed) == (set(), set(), {1})
