"""What a write says in words about the messages it could not change: an undo names each change it
left alone or Gmail did not take back (`change`), a sweep says which label or flag was not on or off
(`reason`). Found by mutation testing (docs/en/development.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sweep_box import BOX, PROCESSED, Spec, delete, message_id
from toolcalls import Call, ok
from write_model import snapshot

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio


async def test_each_change_an_undo_skips_is_named(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    specs = [Spec(f"u-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(4)]
    specs[2] = Spec("u-2", "Výpis 2", "vypisy@banka.example", ("\\Inbox", PROCESSED), ("\\Flagged",))
    runtime = box_runtime(specs)
    ids = [message_id(f"u-{n}") for n in range(4)]

    async def write(tool: str, **args: Any) -> str:
        token: str = (await ok(call, runtime, tool, account="o", **args))["undo_token"]
        return token

    tokens = {
        'label "Asistent" added': await write("mg_label_message", message_ids=[ids[0]], label=PROCESSED),
        'label "Asistent" removed': await write("mg_unlabel_message", message_ids=[ids[2]], label=PROCESSED),
        'flag "\\Seen" set': await write("mg_set_flags", message_id=ids[1], seen=True),
        'flag "\\Flagged" cleared': await write("mg_set_flags", message_id=ids[2], flagged=False),
        "moved to Trash": await write("mg_trash_message", message_id=ids[3]),
    }
    # Another client sets each back itself, or deletes the trashed message for good.
    emulator.remove_labels(BOX, ids[0], [PROCESSED])
    emulator.add_labels(BOX, ids[2], [PROCESSED])
    emulator.set_flags(BOX, ids[1], [])
    emulator.set_flags(BOX, ids[2], ["\\Flagged"])
    delete(emulator, ["u-3"])
    for change, token in tokens.items():
        undone = await ok(call, runtime, "mg_undo", account="o", undo_token=token)
        assert (undone["restored"], undone["skipped"]) == (0, 1), undone
        [skipped] = undone["messages"]
        assert (skipped["change"], skipped["outcome"]) == (change, "skipped"), skipped


async def test_a_change_gmail_does_not_take_back_is_listed_as_failed(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime([Spec(f"u-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(2)])
    ids = [message_id("u-0"), message_id("u-1")]
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids, label=PROCESSED)
    emulator.set_knobs(store_not_applied_ids={ids[1]})  # Gmail accepts the undo's STORE on u-1, does not apply it
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert (undone["restored"], undone["skipped"], undone["failed"]) == (1, 0, 1)
    [failed] = undone["messages"]
    assert (failed["message_id"], failed["change"], failed["outcome"]) == (ids[1], 'label "Asistent" added', "failed")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seen": True}, "the flag \\Seen was not on"),
        ({"flagged": False}, "the flag \\Flagged was not off"),
        ({"add_label": PROCESSED}, 'the label "Asistent" was not on'),
        ({"remove_label": PROCESSED}, 'the label "Asistent" was not off'),
    ],
)
async def test_a_sweep_says_which_label_or_flag_did_not_take(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    change: dict[str, object],
    words: str,
) -> None:
    on = next(iter(change.values())) is not False and "remove_label" not in change
    had = () if on else (PROCESSED,)
    flags = () if on else ("\\Flagged",)
    runtime = box_runtime(
        [Spec(f"u-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox", *had), flags) for n in range(2)]
    )
    query = "from:banka.example"
    preview = await ok(call, runtime, "mg_sweep", account="o", query=query, change=change)
    emulator.set_knobs(store_not_applied_ids={message_id("u-1")})
    applied = await ok(
        call, runtime, "mg_sweep", account="o", query=query, change=change, confirm_token=preview["confirm_token"]
    )
    [failed] = applied["failed_messages"]
    assert failed["message_id"] == message_id("u-1") and words in failed["reason"], failed


async def test_a_sweep_cut_off_midway_can_be_undone_at_once(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    """The apply lets go of its undo record when it is cut off: the preview's undo_token works right away,
    not only when the call's lease runs out 20 minutes later."""
    runtime = box_runtime([Spec(f"u-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(3)])
    before = snapshot(emulator, BOX)
    query, change = "from:banka.example", {"add_label": PROCESSED}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=query, change=change)
    # Gmail applies the STORE, then the connection drops before its answer.
    emulator.add_fault(FaultRule("drop_mid_reply", match="UID STORE", nth=1))
    cut = await call(
        runtime,
        "mg_sweep",
        {"account": "o", "query": query, "change": change, "confirm_token": preview["confirm_token"]},
    )
    assert cut.is_error, cut.content[0].text
    emulator.clear_faults()
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=preview["undo_token"])
    assert undone["failed"] == 0 and snapshot(emulator, BOX) == before, undone


async def test_a_trash_undone_without_its_labels_is_listed_as_failed(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime([Spec("u-0", "Výpis 0", "vypisy@banka.example", ("\\Inbox", PROCESSED))])
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=message_id("u-0"))
    # The move out of Trash works; the STORE that puts the processed label back is not applied.
    emulator.set_knobs(store_not_applied_ids={message_id("u-0")})
    undone = await ok(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert (undone["restored"], undone["skipped"], undone["failed"]) == (0, 0, 1)
    [failed] = undone["messages"]
    assert (failed["message_id"], failed["change"], failed["outcome"]) == (
        message_id("u-0"),
        "moved to Trash",
        "failed",
    )
    assert "labels back" in failed["reason"]
    [entry] = undone["changes"]
    assert (entry["attribute"], entry["action"], entry["changed"], entry["already"], entry["failed"]) == (
        "trash",
        "removed",
        0,
        0,
        1,
    )
    labels, _flags, place = snapshot(emulator, BOX)[message_id("u-0")]
    assert place == "normal" and "\\Inbox" in labels and PROCESSED not in labels


async def test_a_label_change_says_whether_gmail_refused_it_or_took_it_without_effect(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    """A refusal is Gmail's answer to repeat to the user; a change accepted but not applied is worth a second call."""
    runtime = box_runtime([Spec(f"u-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(2)])
    emulator.add_fault(FaultRule("no:[CANNOT] Store failed", match="UID STORE"))
    refused = await ok(call, runtime, "mg_label_message", account="o", message_ids=[message_id("u-0")], label=PROCESSED)
    [outcome] = refused["messages"]
    assert (outcome["outcome"], outcome["detail"]) == ("failed", 'Gmail refused to apply the label "Asistent".')
    emulator.set_knobs(store_not_applied_ids={message_id("u-1")})
    ignored = await ok(call, runtime, "mg_label_message", account="o", message_ids=[message_id("u-1")], label=PROCESSED)
    [outcome] = ignored["messages"]
    assert outcome["outcome"] == "failed" and outcome["detail"].startswith("Gmail accepted the change"), outcome
    assert outcome["detail"].endswith("Call again with the same ids."), outcome
