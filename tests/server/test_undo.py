"""mg_undo against the emulator: every write tool's undo_token takes back exactly what that write
changed, per message and per attribute; what someone changed since is skipped and said; a token
works once, for 7 days, for its own mailbox only."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, config_entry, delete, load, message_id, state
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.gmail.parse.envelope import gmail_id
from mcp_multi_gmail.mail.undo import records
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

QUERY = "from:banka.example"


def specs(count: int = 12) -> list[Spec]:
    """Statements: every 3rd processed already, every 4th read, the first two in one thread classified Banka."""
    out = []
    for n in range(count):
        labels: tuple[str, ...] = ("\\Inbox", "Projekt/Lipová")
        if n % 3 == 0:
            labels += (PROCESSED,)
        if n < 2:
            labels += (BANK,)
        flags = ("\\Seen",) if n % 4 == 0 else ()
        subject = "Re: Výpis 0" if n == 1 else f"Výpis {n}"
        out.append(Spec(f"v-{n}", subject, "vypisy@banka.example", labels, flags, reply_to="v-0" if n == 1 else None))
    return out


@pytest.fixture
def runtime(box_runtime: Callable[..., Runtime]) -> Runtime:
    return box_runtime(specs(), labels=(PROCESSED, ACCOUNTING, BANK, "Projekt/Lipová"))


def ids(*numbers: int) -> list[str]:
    return [message_id(f"v-{n}") for n in numbers]


async def undo(call: Call, runtime: Runtime, token: str) -> dict[str, Any]:
    result: dict[str, Any] = await ok(call, runtime, "mg_undo", account="o", undo_token=token)
    return result


async def test_undo_of_a_sweep_keeps_the_labels_messages_had_before(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    before = state(emulator)
    change = {"add_label": PROCESSED}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    assert (preview["already"], preview["would_change"]) == (4, 8)
    applied = await ok(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=change, confirm_token=preview["confirm_token"]
    )
    assert applied["changed"] == 8
    swept = state(emulator)
    assert all(PROCESSED in labels for labels, _f, _l in swept.values())
    result = await undo(call, runtime, applied["undo_token"])
    assert (result["undone"], result["restored"], result["skipped"], result["failed"]) == ("mg_sweep", 8, 0, 0)
    undone = state(emulator)
    assert undone == before  # the 4 that had it keep it, the 8 that did not lose it again
    rows = {
        mid: (PROCESSED in before[mid][0], PROCESSED in swept[mid][0], PROCESSED in undone[mid][0]) for mid in before
    }
    print("undo", json.dumps(result), "rows (had before, after sweep, after undo):")
    for mid, row in rows.items():
        print(" ", mid, row)
    assert rows[message_id("v-0")] == (True, True, True) and rows[message_id("v-1")] == (False, True, False)


async def test_undo_skips_what_changed_since_and_says_so(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4), label=PROCESSED)
    emulator.remove_labels(BOX, message_id("v-2"), [PROCESSED])  # the user took it off again meanwhile
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"]) == (2, 1)
    [skipped] = result["messages"]
    assert skipped["message_id"] == message_id("v-2") and skipped["outcome"] == "skipped"
    assert "changed since" in skipped["reason"] and PROCESSED in skipped["change"]


@pytest.mark.parametrize("tool", ["mg_label_message", "mg_unlabel_message", "mg_set_flags", "mg_unlabel_thread"])
async def test_each_write_tool_undoes_exactly(emulator: GmailEmulator, runtime: Runtime, call: Call, tool: str) -> None:
    before = state(emulator)
    thread = str(emulator.message(BOX, message_id("v-0")).thrid)  # type: ignore[union-attr]
    args: dict[str, Any] = {
        "mg_label_message": {"message_ids": ids(0, 1, 2), "label": PROCESSED},
        "mg_unlabel_message": {"message_ids": ids(0, 1, 3), "label": PROCESSED},
        "mg_set_flags": {"message_id": ids(0)[0], "seen": False, "flagged": True},
        "mg_unlabel_thread": {"thread_id": thread, "label": BANK},
    }[tool]
    done = await ok(call, runtime, tool, account="o", **args)
    assert done["undo_token"] and state(emulator) != before
    result = await undo(call, runtime, done["undo_token"])
    assert result["undone"] == tool and result["skipped"] == 0 and result["failed"] == 0
    assert state(emulator) == before


async def test_undo_of_a_classification_puts_the_replaced_one_back(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    before = state(emulator)
    thread = str(emulator.message(BOX, message_id("v-0")).thrid)  # type: ignore[union-attr]
    done = await ok(call, runtime, "mg_label_thread", account="o", thread_id=thread, label=ACCOUNTING)
    assert done["replaced"] == [BANK]
    result = await undo(call, runtime, done["undo_token"])
    assert result["restored"] == 4  # two messages: Účetnictví off, Banka on again
    assert state(emulator) == before


async def test_nothing_changed_means_no_token(runtime: Runtime, call: Call) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(0, 3), label=PROCESSED)
    assert done["succeeded"] == 2 and done["undo_token"] is None


@pytest.mark.parametrize("all_mail_refuses_moves", [False, True])
@pytest.mark.parametrize("trash_keeps_labels", [False, True])
async def test_undo_of_a_trash_puts_the_message_back_with_its_labels(
    emulator: GmailEmulator, runtime: Runtime, call: Call, trash_keeps_labels: bool, all_mail_refuses_moves: bool
) -> None:
    emulator.set_knobs(trash_keeps_labels=trash_keeps_labels, all_mail_refuses_moves=all_mail_refuses_moves)
    before = state(emulator)
    archived = message_id("v-5")
    emulator.remove_labels(BOX, archived, ["\\Inbox"])
    archived_before = state(emulator)[archived]
    for mid in (message_id("v-3"), archived):
        done = await ok(call, runtime, "mg_trash_message", account="o", message_id=mid)
        assert done["moved"] and state(emulator)[mid][2] == "trash"
        if not trash_keeps_labels:
            assert "Projekt/Lipová" not in state(emulator)[mid][0]
        result = await undo(call, runtime, done["undo_token"])
        assert (result["undone"], result["restored"], result["skipped"]) == ("mg_trash_message", 1, 0)
    after = state(emulator)
    assert after[message_id("v-3")] == before[message_id("v-3")]  # back in the Inbox, labels and flags as they were
    assert after[archived] == archived_before  # back in All Mail only, not in the Inbox


async def test_undo_of_a_trash_emptied_since_is_skipped(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=ids(3)[0])
    delete(emulator, ["v-3"])  # Trash emptied in another client
    result = await undo(call, runtime, done["undo_token"])
    assert result["skipped"] == 1 and "no longer in Trash" in result["messages"][0]["reason"]


async def test_undo_token_once_bound_expiring(
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    load(emulator, specs(4), labels=(PROCESSED, ACCOUNTING, BANK, "Projekt/Lipová"))
    emulator.add_account("druha@example.cz", "druhaheslohesla")
    other = {"name": "d", "address": "druha@example.cz", "password": "druhaheslohesla"}
    runtime = make_runtime(write_config([config_entry(), other]))
    first = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1), label=PROCESSED)
    second = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(2), label=PROCESSED)
    snapshot = emulator.snapshot()

    async def refused(code: str, words: str, account: str, token: str) -> None:
        body = await error(call, runtime, "mg_undo", account=account, undo_token=token)
        assert body["code"] == code and words in body["message"], body
        assert emulator.snapshot() == snapshot

    await refused("invalid_input", "another mailbox", "d", first["undo_token"])
    await refused("not_found", "unknown", "o", "undo_" + "y" * 32)
    await refused("invalid_input", "not an undo token", "o", "abc")
    real = records.now
    monkeypatch.setattr(records, "now", lambda: real() + timedelta(days=7, seconds=1))
    await refused("invalid_input", "expired", "o", second["undo_token"])
    monkeypatch.setattr(records, "now", real)
    await undo(call, runtime, first["undo_token"])
    snapshot = emulator.snapshot()
    await refused("invalid_input", "already used", "o", first["undo_token"])
    # Another process of another conversation (a new runtime on the same state folder) can undo it.
    fresh = make_runtime(write_config([config_entry(), other]))
    result = await undo(call, fresh, second["undo_token"])
    assert result["restored"] == 1 and PROCESSED not in state(emulator)[ids(2)[0]][0]


async def test_a_previewed_sweep_never_applied_has_nothing_to_undo(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_undo", account="o", undo_token=preview["undo_token"])
    assert body["code"] == "not_found" and "never applied" in body["message"]
    assert emulator.snapshot() == snapshot


async def test_undo_finds_a_message_that_came_back_under_a_new_uid_and_skips_one_gone(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4), label=PROCESSED)
    # v-2 went to Trash and back (a new UID in All Mail); v-4 is in Trash when the undo runs.
    trashed = await ok(call, runtime, "mg_trash_message", account="o", message_id=ids(2)[0])
    await undo(call, runtime, trashed["undo_token"])
    await ok(call, runtime, "mg_trash_message", account="o", message_id=ids(4)[0])
    in_trash = emulator.message(BOX, ids(4)[0]).msgid  # type: ignore[union-attr]
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"], result["failed"]) == (2, 1, 0)
    [skipped] = result["messages"]
    assert (skipped["message_id"], skipped["outcome"]) == (gmail_id(in_trash), "skipped")  # not in All Mail
    assert "no longer in All Mail" in skipped["reason"] and PROCESSED in skipped["change"]
    after = state(emulator)
    assert PROCESSED not in after[ids(1)[0]][0] and PROCESSED not in after[ids(2)[0]][0]
    assert after[ids(2)[0]][2] != "trash" and after[ids(4)[0]][2] == "trash"


async def test_undo_counts_what_changed_since_as_already(emulator: GmailEmulator, runtime: Runtime, call: Call) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4, 5), label=PROCESSED)
    for n in (2, 5):
        emulator.remove_labels(BOX, message_id(f"v-{n}"), [PROCESSED])  # the user took it off meanwhile
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"], result["failed"]) == (2, 2, 0)
    [entry] = result["changes"]
    # Set back on 2; the 2 the user changed since already lack it and count as such.
    assert (entry["attribute"], entry["name"], entry["action"]) == ("label", PROCESSED, "removed")
    assert (entry["changed"], entry["already"], entry["failed"]) == (2, 2, 0)
    assert sorted(m["message_id"] for m in result["messages"]) == sorted(ids(2, 5))


@pytest.mark.parametrize("gone", [False, True])
async def test_undo_of_a_trash_that_does_not_read_back_says_which_and_why(
    emulator: GmailEmulator, runtime: Runtime, call: Call, gone: bool
) -> None:
    mid = ids(3)[0]
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=mid)
    msgid = emulator.message(BOX, mid).msgid  # type: ignore[union-attr]

    def meddle() -> None:  # while the labels go back on: the Inbox taken off, or the message deleted
        if gone:
            delete(emulator, ["v-3"])
        else:
            emulator.remove_labels(BOX, mid, ["\\Inbox"])

    emulator.add_fault(FaultRule(action="hook", match="STORE", hook=meddle))
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"], result["failed"]) == (0, 0, 1)
    [failed] = result["messages"]
    assert failed["outcome"] == "failed" and failed["change"]
    if gone:
        assert failed["message_id"] == gmail_id(msgid) and "not in All Mail" in failed["reason"]
    else:
        assert failed["message_id"] == mid and "not in the Inbox as it was before" in failed["reason"]
    [entry] = result["changes"]
    assert (entry["attribute"], entry["changed"], entry["already"], entry["failed"]) == ("trash", 0, 0, 1)


async def test_undo_of_a_trash_cut_off_then_deleted_says_so(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    mid = ids(3)[0]
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=mid)
    emulator.add_fault(FaultRule(action="drop_mid_reply", match="MOVE"))  # moved, then the connection is lost
    await error(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert state(emulator)[mid][2] != "trash"
    delete(emulator, ["v-3"])  # deleted for good before the undo is called again
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"], result["failed"]) == (0, 1, 0)
    [skipped] = result["messages"]
    assert skipped["outcome"] == "skipped" and skipped["change"] and "no longer in All Mail" in skipped["reason"]
    [entry] = result["changes"]
    assert (entry["attribute"], entry["changed"], entry["failed"]) == ("trash", 0, 0)  # skipped, not failed


async def test_undo_finds_unmoved_messages_by_their_recorded_uids(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4), label=PROCESSED)
    emulator.reset_counters()
    result = await undo(call, runtime, done["undo_token"])
    assert result["restored"] == 3
    # One FETCH of the recorded UIDs finds them all: no search, which costs Gmail's bandwidth quota.
    assert [c.name for c in emulator.commands(BOX) if "SEARCH" in c.name] == []


async def test_undo_of_a_trash_where_gmail_kept_the_labels_writes_no_labels(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.set_knobs(trash_keeps_labels=True)
    before = state(emulator)
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=ids(3)[0])
    emulator.reset_counters()
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["failed"]) == (1, 0) and state(emulator) == before
    assert [c.name for c in emulator.commands(BOX) if "STORE" in c.name] == []  # its labels never left


@pytest.mark.parametrize("all_mail_refuses_moves", [False, True])
async def test_undo_of_a_trash_from_the_inbox_moves_it_once(
    emulator: GmailEmulator, runtime: Runtime, call: Call, all_mail_refuses_moves: bool
) -> None:
    emulator.set_knobs(all_mail_refuses_moves=all_mail_refuses_moves)
    done = await ok(call, runtime, "mg_trash_message", account="o", message_id=ids(3)[0])
    emulator.reset_counters()
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["failed"]) == (1, 0) and "\\Inbox" in state(emulator)[ids(3)[0]][0]
    # Straight into the Inbox; no second MOVE of a message that is out of Trash already.
    assert [c.line.split()[-1].strip('"') for c in emulator.commands(BOX) if c.name == "UID MOVE"] == ["INBOX"]


async def test_undo_lists_a_message_without_a_message_id_by_its_gmail_id(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    raw = b"From: vypisy@banka.example\r\nTo: osobni@example.cz\r\nSubject: Bez Message-ID\r\n\r\nText.\r\n"
    bare = emulator.append(BOX, raw, labels=["\\Inbox"])
    shown = gmail_id(bare.msgid)
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=[shown, *ids(1)], label=PROCESSED)
    emulator._on_loop(lambda: _untag(emulator, bare.msgid))  # the user took it off meanwhile
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"]) == (1, 1)
    assert [m["message_id"] for m in result["messages"]] == [shown]


def _untag(emulator: GmailEmulator, msgid: int) -> None:
    account = emulator.store.account(BOX)
    assert account is not None
    msg = account.messages[msgid]
    account.set_labels(msg, frozenset(lb for lb in msg.labels if lb != PROCESSED))


async def test_undo_leaves_alone_what_the_write_did_not_change(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    emulator.set_knobs(store_not_applied_ids={message_id("v-2")})  # Gmail does not take the label on v-2
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4), label=PROCESSED)
    assert done["failed"] == 1 and PROCESSED not in state(emulator)[ids(2)[0]][0]
    emulator.add_labels(BOX, ids(2)[0], [PROCESSED])  # the user puts it on v-2 themselves
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"], result["failed"], result["messages"]) == (2, 0, 0, [])
    after = state(emulator)
    assert PROCESSED in after[ids(2)[0]][0]  # the user's label, not the write's: it stays
    assert PROCESSED not in after[ids(1)[0]][0] and PROCESSED not in after[ids(4)[0]][0]


async def test_undo_token_expires_at_exactly_seven_days(
    emulator: GmailEmulator, runtime: Runtime, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1), label=PROCESSED)
    created = records.parse_stamp(_record(runtime, done["undo_token"])["created"])
    monkeypatch.setattr(records, "now", lambda: created + records.KEEP)  # the moment its record may be pruned
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_undo", account="o", undo_token=done["undo_token"])
    assert body["code"] == "invalid_input" and "expired" in body["message"]
    assert emulator.snapshot() == snapshot


@pytest.mark.parametrize("how", ["cut to 50", "all listed"])
async def test_undo_lists_fifty_skipped_and_says_how_many_more(
    emulator: GmailEmulator, runtime: Runtime, call: Call, how: str
) -> None:
    more = 43 if how == "cut to 50" else 42  # with the 8 of v-0..v-11 that lack the label: 51 or 50
    load(
        emulator, [Spec(f"w-{n}", f"Výpis w{n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(more)], labels=()
    )
    tags = [f"v-{n}" for n in range(12) if n % 3] + [f"w-{n}" for n in range(more)]
    done = await ok(
        call, runtime, "mg_label_message", account="o", message_ids=[message_id(t) for t in tags], label=PROCESSED
    )
    assert done["succeeded"] == len(tags)
    delete(emulator, tags)  # deleted for good meanwhile: each is skipped
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"]) == (0, len(tags))
    assert len(result["messages"]) == min(len(tags), 50)
    if len(tags) > 50:
        [cut] = result["cut"]
        assert (cut["field"], cut["shown"], cut["total"]) == ("messages", 50, 51) and cut["how_to_get_the_rest"]
    else:
        assert result["cut"] == []


def _record(runtime: Runtime, token: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(records.Records(runtime.state_folder()).path(token).read_text("utf-8"))
    return found


def _write_record(runtime: Runtime, token: str, body: dict[str, Any]) -> None:
    """A record file as an earlier version wrote it, or as a person edited it."""
    path = records.Records(runtime.state_folder()).path(token)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": records.VERSION, **body}), "utf-8")


async def test_a_preview_recorded_by_an_earlier_version_has_nothing_to_undo(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    token = records.new_token(records.UNDO_PREFIX)
    # What a sweep's preview wrote before the token life cycle: the state "reserved", no `reserved` key.
    old = {"kind": "undo", "account": "o", "tool": "mg_sweep", "created": records.stamp(records.now())}
    _write_record(runtime, token, {**old, "state": "reserved", "groups": [], "all_mail_uidvalidity": None})
    body = await error(call, runtime, "mg_undo", account="o", undo_token=token)
    assert body["code"] == "not_found" and "never applied" in body["message"]
    assert "used" not in _record(runtime, token)  # still the preview's: its sweep can be applied


async def test_an_undo_record_without_its_optional_fields_still_undoes_what_it_lists(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    for mid in ids(1, 2):
        emulator.add_labels(BOX, mid, [PROCESSED])
    msgids = [emulator.message(BOX, mid).msgid for mid in ids(1, 2)]  # type: ignore[union-attr]
    # No tool, no UIDVALIDITY (the messages are found by their X-GM-MSGID), a group without failed ones.
    group = {"attribute": "label", "name": PROCESSED, "on": True, "messages": [[m, 0] for m in msgids]}
    bare = {"kind": "undo", "account": "o", "created": records.stamp(records.now()), "state": "applied"}
    token, empty = records.new_token(records.UNDO_PREFIX), records.new_token(records.UNDO_PREFIX)
    _write_record(runtime, token, {**bare, "groups": [group]})
    _write_record(runtime, empty, bare)  # no groups at all: nothing to set back
    result = await undo(call, runtime, token)
    assert (result["undone"], result["restored"], result["skipped"], result["failed"]) == ("", 2, 0, 0)
    assert all(PROCESSED not in state(emulator)[mid][0] for mid in ids(1, 2))
    snapshot = emulator.snapshot()
    nothing = await undo(call, runtime, empty)
    assert (nothing["restored"], nothing["skipped"], nothing["changes"]) == (0, 0, [])
    assert emulator.snapshot() == snapshot and _record(runtime, empty)["state"] == "used"


async def test_a_record_of_another_kind_under_an_undo_token_is_refused(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    token = records.new_token(records.UNDO_PREFIX)
    _write_record(runtime, token, _record(runtime, preview["confirm_token"]))  # a sweep's record, renamed
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_undo", account="o", undo_token=token)
    assert body["code"] == "invalid_input" and "not an undo token" in body["message"]
    assert emulator.snapshot() == snapshot


async def test_undo_lists_a_message_another_client_deletes_meanwhile_by_its_gmail_id(
    emulator: GmailEmulator, runtime: Runtime, call: Call
) -> None:
    done = await ok(call, runtime, "mg_label_message", account="o", message_ids=ids(1, 2, 4), label=PROCESSED)
    emulator.remove_labels(BOX, message_id("v-2"), [PROCESSED])  # the user took it off again: skipped
    msgid = emulator.message(BOX, message_id("v-2")).msgid  # type: ignore[union-attr]
    # Another client marks v-2 \Deleted and expunges it just as the undo lists it: the server tells of
    # the flag unasked (its sequence number, 3 of All Mail; no UID), and the FETCH finds no v-2 any more.
    gone = FaultRule(r"untagged:3 FETCH (FLAGS (\Deleted))", match="UID FETCH", hook=lambda: delete(emulator, ["v-2"]))
    emulator.add_fault(FaultRule("hook", match="UID SEARCH", hook=lambda: emulator.add_fault(gone)))
    result = await undo(call, runtime, done["undo_token"])
    assert (result["restored"], result["skipped"]) == (2, 1)
    assert [m["message_id"] for m in result["messages"]] == [gmail_id(msgid)]
