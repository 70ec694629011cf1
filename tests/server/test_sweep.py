"""mg_sweep against the emulator: a classification over 1 200 threads, previewed, re-checked and
applied in batches read back; partial success; the cap; the one-use, bound, expiring token.

The emulator's store is the truth: every count is checked against the messages themselves, and
"nothing changed" against a snapshot of the whole mailbox.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, accounting_box, config_entry, delete, load, message_id
from toolcalls import Call, error, ok

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.gmail.imap import Fetched, ImapSession
from mcp_multi_gmail.gmail.parse.envelope import gmail_id
from mcp_multi_gmail.mail.bulk import sweep
from mcp_multi_gmail.mail.core import budget
from mcp_multi_gmail.mail.undo import records, tokens
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio

QUERY = "from:banka.example"
CLASSIFY = {"add_label": ACCOUNTING}


@pytest.fixture
def box(emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime]) -> Runtime:
    """1 200 threads (1 400 messages) from the bank, partly classified, and a runtime with sweep_limit 2 000."""
    load(emulator, accounting_box().specs)
    return make_runtime(write_config([config_entry(sweep_limit=2000)]))


def labels_of(emulator: GmailEmulator) -> dict[str, frozenset[str]]:
    return {m.header_id or "": m.labels for m in emulator.messages(BOX)}


def commands(emulator: GmailEmulator) -> Counter[str]:
    return Counter(c.name for c in emulator.commands(BOX))


async def test_classification_preview_then_apply_with_the_recheck(
    emulator: GmailEmulator, box: Runtime, call: Call
) -> None:
    before = labels_of(emulator)
    snapshot = emulator.snapshot()
    emulator.reset_counters()
    preview = await ok(call, box, "mg_sweep", account="o", query=QUERY, change=CLASSIFY)
    # 1 200 statements, 200 with a reply: every message of every thread is covered.
    assert (preview["matched_messages"], preview["matched_threads"]) == (1400, 1200)
    had = sum(1 for labels in before.values() if ACCOUNTING in labels)
    assert (preview["already"], preview["would_change"]) == (had, 1400 - had) == (350, 1050)
    assert len(preview["sample"]) == 10 and preview["sample"][0]["subject"] == "Výpis z účtu 1199"
    assert preview["sample"][0]["from"]["address"] == "vypisy@banka.example"
    assert preview["applied"] is False and preview["changed"] is None
    print("preview", json.dumps({**preview, "sample": preview["sample"][:2]}, ensure_ascii=False))
    assert preview["confirm_token"].startswith("sweep_") and preview["undo_token"].startswith("undo_")
    assert emulator.snapshot() == snapshot  # a preview writes nothing
    used = commands(emulator)
    assert not used["UID STORE"] and used["UID SEARCH"] == 1 + 12  # the query, then 1 200 threads 100 a search
    assert sum(used.values()) <= 25, used  # bounded: nothing per message or per thread

    # Between preview and apply: 5 matched statements deleted, 3 new ones arrive.
    gone = ["vypis-1101", "vypis-1103", "vypis-1105", "vypis-1107", "vypis-1109"]  # none classified Účetnictví
    delete(emulator, gone)
    new = [Spec(f"nova-{n}", f"Nový výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(3)]
    load(emulator, new, labels=())
    emulator.reset_counters()
    applied = await ok(
        call, box, "mg_sweep", account="o", query=QUERY, change=CLASSIFY, confirm_token=preview["confirm_token"]
    )
    assert applied["applied"] is True and applied["undo_token"] == preview["undo_token"]
    print("apply", json.dumps(applied, ensure_ascii=False), "commands", dict(commands(emulator)))
    assert (applied["left_since_preview"], applied["new_since_preview"]) == (5, 3)
    assert (applied["changed"], applied["already"], applied["failed"]) == (1045, 350, 0)
    assert applied["failed_messages"] == [] and applied["cut"] == []

    after = labels_of(emulator)
    for mid, labels in after.items():
        if mid.startswith("nova-"):
            assert ACCOUNTING not in labels  # new matches are untouched
        else:
            assert ACCOUNTING in labels and BANK not in labels, mid  # mg_label_thread's rule: Banka replaced
            assert labels - {ACCOUNTING, BANK} == before[mid] - {ACCOUNTING, BANK}  # nothing else touched
    used = commands(emulator)
    # SEARCH (query + 12 thread searches), STOREs in 2 batches (label on, Banka off), a read-back each.
    assert used["UID SEARCH"] == 13 and used["UID STORE"] == 4 and sum(used.values()) <= 30, used
    stores = [c.line for c in emulator.commands(BOX) if c.name == "UID STORE"]
    assert stores[0].split()[3].startswith("3:8,11:16,19:24,"), stores  # runs of UIDs go as ranges


async def test_partial_success_names_the_messages_that_did_not_take(
    emulator: GmailEmulator, box: Runtime, call: Call
) -> None:
    preview = await ok(call, box, "mg_sweep", account="o", query=QUERY, change=CLASSIFY)
    stubborn = {message_id(f"vypis-{n}") for n in (3, 5, 7, 501, 1199)}
    emulator.set_knobs(store_not_applied_ids=set(stubborn))
    applied = await ok(
        call, box, "mg_sweep", account="o", query=QUERY, change=CLASSIFY, confirm_token=preview["confirm_token"]
    )
    print("partial", json.dumps({k: applied[k] for k in ("changed", "already", "failed", "failed_messages")}))
    assert applied["failed"] == 5 and applied["changed"] == 1050 - 5
    assert {f["message_id"] for f in applied["failed_messages"]} == stubborn
    assert all("read back" in f["reason"] for f in applied["failed_messages"])
    labels = labels_of(emulator)
    assert all(ACCOUNTING not in labels[mid] for mid in stubborn)
    # The old classification goes only where the new one arrived: vypis-501 was Banka and stays so.
    assert BANK in labels[message_id("vypis-501")]


async def test_processed_label_sweep_fits_the_budget_at_10_000(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    specs = [Spec(f"m-{n}", f"Oznámení {n}", "info@banka.example", ("\\Inbox",)) for n in range(10_000)]
    load(emulator, specs)
    runtime = make_runtime(write_config([config_entry(sweep_limit=10_000)]))
    emulator.set_knobs(store_not_applied_fraction=0.02)
    change = {"add_label": PROCESSED}
    preview = await ok(call, runtime, "mg_sweep", account="o", query="from:info@banka.example", change=change)
    assert preview["matched_messages"] == 10_000 and preview["would_change"] == 10_000
    emulator.reset_counters()
    applied = await ok(
        call,
        runtime,
        "mg_sweep",
        account="o",
        query="from:info@banka.example",
        change=change,
        confirm_token=preview["confirm_token"],
    )
    assert applied["failed"] > 50 and len(applied["failed_messages"]) == 50
    assert applied["cut"] == [
        {
            "field": "failed_messages",
            "shown": 50,
            "total": applied["failed"],
            "how_to_get_the_rest": applied["cut"][0]["how_to_get_the_rest"],
        }
    ]
    assert applied["changed"] + applied["failed"] == 10_000
    print(
        "10k sizes", budget.size(preview), budget.size(applied), "failed", applied["failed"], dict(commands(emulator))
    )
    for result in (preview, applied):
        assert budget.size(result) < 10_000  # counts and a sample: far within the 40 000
    used = commands(emulator)
    assert used["UID STORE"] == 10 and used["UID FETCH"] <= 21, used  # 10 batches, a read-back each


async def test_over_the_cap_is_refused_with_the_count_and_nothing_written(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    load(emulator, accounting_box(threads=1001, replies=0).specs)
    runtime = make_runtime(write_config([config_entry()]))  # the default cap: 1 000
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    assert body["code"] == "query_too_broad"
    assert "1001 messages" in body["message"] and "sweep_limit of 1000" in body["message"]
    assert "Narrow the query" in body["message"] and "Nothing was changed" in body["message"]
    assert emulator.snapshot() == snapshot
    delete(emulator, ["vypis-1000"])  # exactly at the cap: allowed
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    assert preview["matched_messages"] == 1000


def _record_count(runtime: Runtime) -> int:
    return len(list((runtime.state_folder() / records.FOLDER).glob("*.json")))


async def test_confirm_token_once_bound_and_expiring(
    emulator: GmailEmulator,
    write_config: Callable[..., Path],
    make_runtime: Callable[[Path], Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    load(emulator, accounting_box(threads=20, replies=0).specs)
    emulator.add_account("druha@example.cz", "druhaheslohesla", labels=[PROCESSED])
    other = {"name": "d", "address": "druha@example.cz", "password": "druhaheslohesla", "processed_label": PROCESSED}
    runtime = make_runtime(write_config([config_entry(), other]))
    seen = {"seen": True}
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen)
    token = preview["confirm_token"]
    snapshot = emulator.snapshot()

    async def refused(code: str, words: str, **args: Any) -> None:
        body = await error(call, runtime, "mg_sweep", **{"account": "o", "query": QUERY, "change": seen, **args})
        assert body["code"] == code and words in body["message"], body
        assert "Nothing was changed" in body["message"] or code == "not_found"
        assert emulator.snapshot() == snapshot

    await refused("invalid_input", "another mailbox", account="d", confirm_token=token)
    await refused("invalid_input", "another query or change", query="from:jinde.example", confirm_token=token)
    await refused("invalid_input", "another query or change", change={"seen": False}, confirm_token=token)
    await refused("not_found", "unknown", confirm_token="sweep_" + "x" * 32)
    await refused("invalid_input", "not a sweep confirm_token", confirm_token=preview["undo_token"])
    real = records.now
    monkeypatch.setattr(records, "now", lambda: real() + timedelta(minutes=15, seconds=1))
    await refused("invalid_input", "expired", confirm_token=token)
    monkeypatch.setattr(records, "now", lambda: real() + timedelta(minutes=14, seconds=50))
    applied = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen, confirm_token=token)
    assert applied["changed"] == 20 and applied["failed_messages"] == [] and applied["cut"] == []
    snapshot = emulator.snapshot()
    await refused("invalid_input", "used already", confirm_token=token)


async def test_damaged_record_is_reported_and_kept(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(accounting_box(threads=5, replies=0).specs)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"flagged": True})
    path = records.Records(runtime.state_folder()).path(preview["confirm_token"])
    path.write_text('{"version": 1, "acc', encoding="utf-8")
    snapshot = emulator.snapshot()
    body = await error(
        call,
        runtime,
        "mg_sweep",
        account="o",
        query=QUERY,
        change={"flagged": True},
        confirm_token=preview["confirm_token"],
    )
    # the code of every damaged file of the server's own (statefile.py), whichever store
    assert body["code"] == "upstream_error" and "damaged" in body["message"] and str(path) in body["message"]
    assert path.read_text(encoding="utf-8") == '{"version": 1, "acc'  # never emptied
    assert emulator.snapshot() == snapshot


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        ({"add_label": "\\Inbox"}, "label_forbidden", "Gmail's own labels"),
        ({"add_label": "\\Trash"}, "label_forbidden", "Gmail's own labels"),
        ({"remove_label": "Soukromé"}, "label_forbidden", 'not configured for mailbox "o"'),
        ({"seen": True, "flagged": True}, "invalid_input", "exactly one"),
        ({}, "invalid_input", "exactly one"),
    ],
)
async def test_refused_changes_write_nothing(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    change: dict[str, Any],
    code: str,
    words: str,
) -> None:
    runtime = box_runtime(accounting_box(threads=3, replies=0).specs)
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    assert body["code"] == code and words in body["message"], body
    assert emulator.snapshot() == snapshot and _record_count(runtime) == 0


async def test_a_record_that_cannot_be_written_stops_the_sweep(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(accounting_box(threads=4, replies=0).specs)
    runtime.state_folder().mkdir(parents=True, exist_ok=True)
    (runtime.state_folder() / records.FOLDER).write_text("not a folder", encoding="utf-8")  # root ignores modes
    snapshot = emulator.snapshot()
    body = await error(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    assert body["code"] == "upstream_error" and "cannot be written" in body["message"]
    for tool, args in (
        ("mg_label_message", {"message_ids": [message_id("vypis-1")], "label": PROCESSED}),
        ("mg_set_flags", {"message_id": message_id("vypis-1"), "seen": True}),
        ("mg_trash_message", {"message_id": message_id("vypis-2")}),
        ("mg_label_thread", {"thread_id": "1", "label": ACCOUNTING}),
    ):
        body = await error(call, runtime, tool, account="o", **args)
        assert body["code"] in ("upstream_error", "not_found"), (tool, body)
    assert emulator.snapshot() == snapshot
    assert not [c for c in emulator.commands(BOX) if c.name in ("UID STORE", "UID MOVE")]


def test_record_files_hold_no_token(tmp_path: Path) -> None:
    store = records.Records(tmp_path)
    token = records.new_token(records.UNDO_PREFIX)
    store.create(token, {"account": "o", "created": records.stamp(records.now())}, "undo")
    [path] = (tmp_path / records.FOLDER).glob("*.json")
    assert token not in path.read_text() and token not in path.name
    assert json.loads(path.read_text())["account"] == "o" and (path.stat().st_mode & 0o777) == 0o600


async def test_mail_too_new_for_the_index_is_neither_counted_nor_touched(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(accounting_box(threads=10, replies=0).specs)  # loaded mail is indexed from the start
    emulator.set_knobs(raw_search_lag_s=30.0)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    assert preview["matched_messages"] == 10
    fresh = "Content-Type: text/plain\r\n\r\nNový výpis.\r\n"
    for n in range(2):
        mid = message_id(f"nova-{n}")
        head = f"From: <vypisy@banka.example>\r\nTo: {BOX}\r\nSubject: Nový {n}\r\nMessage-ID: <{mid}>\r\n"
        emulator.deliver(BOX, (head + fresh).encode())
    applied = await ok(
        call,
        runtime,
        "mg_sweep",
        account="o",
        query=QUERY,
        change={"seen": True},
        confirm_token=preview["confirm_token"],
    )
    assert (applied["changed"], applied["new_since_preview"], applied["left_since_preview"]) == (10, 0, 0)
    for n in range(2):
        info = emulator.message(BOX, message_id(f"nova-{n}"))
        assert info is not None and "\\Seen" not in info.flags  # untouched


async def _swept(call: Call, runtime: Runtime, change: dict[str, Any]) -> dict[str, Any]:
    """Preview the sweep of QUERY, then apply it with its confirm_token."""
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=change)
    token = preview["confirm_token"]
    applied: dict[str, Any] = await ok(
        call, runtime, "mg_sweep", account="o", query=QUERY, change=change, confirm_token=token
    )
    return applied


async def test_more_failures_than_listed_are_cut_and_one_without_message_id_shows_its_gmail_id(
    emulator: GmailEmulator, write_config: Callable[..., Path], make_runtime: Callable[[Path], Runtime], call: Call
) -> None:
    load(emulator, [])  # the mailbox, first its message without a Message-ID: the lowest UID, listed first

    def bare() -> None:
        account = emulator.store.account(BOX)
        assert account is not None
        head = f"From: <vypisy@banka.example>\r\nTo: {BOX}\r\nSubject: Bez id\r\n"
        account.add_message((head + "\r\nVýpis.\r\n").encode(), labels=["\\Inbox"])

    emulator._on_loop(bare)
    load(emulator, [Spec(f"m-{n}", f"Výpis {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(55)], labels=())
    [without] = [m for m in emulator.messages(BOX) if m.header_id is None]
    runtime = make_runtime(write_config([config_entry()]))
    emulator.set_knobs(store_not_applied_fraction=1.0)  # Gmail accepts every STORE and applies none
    applied = await _swept(call, runtime, {"flagged": True})
    assert (applied["changed"], applied["failed"]) == (0, 56)
    listed = applied["failed_messages"]
    assert len(listed) == sweep.MAX_FAILED_LISTED and listed[0]["message_id"] == gmail_id(without.msgid)
    assert [m["message_id"] for m in listed[1:]] == [message_id(f"m-{n}") for n in range(49)]
    assert [(c["field"], c["shown"], c["total"]) for c in applied["cut"]] == [("failed_messages", 50, 56)]
    assert not any("\\Flagged" in m.flags for m in emulator.messages(BOX))


class _Answers:
    """A session whose FETCH answers with what it was given: message 7 was deleted for good meanwhile, and the
    answer for message 8 carries its X-GM-MSGID but no ENVELOPE."""

    def fetch(self, uids: list[int], items: list[str]) -> dict[int, Fetched]:
        return {8: Fetched(uid=8, gmail_msgid=1234)}


def test_a_failed_message_without_its_envelope_is_still_listed() -> None:
    failures = sweep._failures(cast(ImapSession, _Answers()), {7: "gone", 8: "no envelope"})
    assert [f.model_dump() for f in failures] == [
        {"message_id": "7", "reason": "gone"},
        {"message_id": gmail_id(1234), "reason": "no envelope"},
    ]


async def test_only_an_added_label_is_created_and_it_takes_where_gmail_ignores_unknown_labels(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(
        [Spec(f"m-{n}", f"Oznámení {n}", "vypisy@banka.example", ("\\Inbox",)) for n in range(4)], labels=()
    )
    labels = emulator.labels(BOX)
    assert PROCESSED not in labels
    # A flag, and a label taken off that the mailbox does not have: no label is created for them.
    for change in ({"flagged": True}, {"remove_label": PROCESSED}):
        applied = await _swept(call, runtime, change)
        assert applied["failed"] == 0, change
        assert emulator.labels(BOX) == labels, change
        assert not [c for c in emulator.commands(BOX) if c.name == "CREATE"], change
    # Gmail may ignore a STORE of a label it does not know (BEHAVIOURS.md): the sweep creates it first.
    emulator.set_knobs(unknown_label_policy="ignore")
    applied = await _swept(call, runtime, {"add_label": PROCESSED})
    assert (applied["changed"], applied["failed"]) == (4, 0)
    assert PROCESSED in emulator.labels(BOX)
    assert all(PROCESSED in m.labels for m in emulator.messages(BOX))


async def test_a_confirm_token_is_refused_from_its_expiry_on_while_held_and_when_not_a_sweeps(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = box_runtime(accounting_box(threads=3, replies=0).specs)
    seen = {"seen": True}
    moment = records.now().replace(microsecond=0)
    monkeypatch.setattr(records, "now", lambda: moment)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen)
    token = preview["confirm_token"]
    assert preview["expires_at"] == records.stamp(moment + sweep.PREVIEW_FOR)
    snapshot = emulator.snapshot()

    async def refused(token: str) -> str:
        body = await error(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen, confirm_token=token)
        assert body["code"] == "invalid_input" and emulator.snapshot() == snapshot, body
        return str(body["message"])

    # The 15 minutes end at expires_at: at that very moment the token is refused.
    monkeypatch.setattr(records, "now", lambda: moment + sweep.PREVIEW_FOR)
    assert "expired" in await refused(token)
    monkeypatch.setattr(records, "now", lambda: moment + sweep.PREVIEW_FOR - timedelta(seconds=1))
    # A live call holds it (this process, its lease running): another is refused, and says why.
    store = records.Records(runtime.state_folder())

    def held_elsewhere(record: dict[str, Any]) -> None:
        tokens.hold(record, busy="", used="")

    store.update(token, "sweep", held_elsewhere)
    assert await refused(token) == sweep.BUSY
    # A record of another kind behind a sweep_ token.
    other = records.new_token(records.SWEEP_PREFIX)
    store.create(other, {"kind": "undo", "account": "o", "created": records.stamp(moment)}, "undo")
    assert await refused(other) == "That token is not a sweep's confirm_token. Nothing was changed."


async def test_an_apply_that_fails_before_any_change_leaves_its_token_for_a_retry(
    emulator: GmailEmulator, box_runtime: Callable[..., Runtime], call: Call
) -> None:
    runtime = box_runtime(accounting_box(threads=3, replies=0).specs)
    seen = {"seen": True}
    token = (await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen))["confirm_token"]
    snapshot = emulator.snapshot()
    emulator.add_fault(FaultRule(action="refuse:overquota", match="SEARCH"))  # the apply's re-check
    body = await error(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen, confirm_token=token)
    assert body["code"] != "invalid_input" and emulator.snapshot() == snapshot, body
    # Nothing went out, so this call let go of the token: the same apply, once more, goes through.
    applied = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change=seen, confirm_token=token)
    assert (applied["changed"], applied["failed"]) == (3, 0)


async def test_a_preview_never_applied_is_removed_after_seven_days(
    emulator: GmailEmulator,
    box_runtime: Callable[..., Runtime],
    call: Call,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = box_runtime(accounting_box(threads=2, replies=0).specs)
    preview = await ok(call, runtime, "mg_sweep", account="o", query=QUERY, change={"seen": True})
    store = records.Records(runtime.state_folder())
    path = store.path(preview["confirm_token"])
    later = records.now() + records.KEEP + timedelta(hours=1)
    os.utime(path, (later.timestamp() - records.KEEP.total_seconds() - 3600,) * 2)
    monkeypatch.setattr(records, "now", lambda: later)
    monkeypatch.setattr(records.Records, "_pruned_at", 0.0)
    store.create(records.new_token(records.UNDO_PREFIX), {"account": "o", "created": records.stamp(later)}, "undo")
    assert not path.exists()
